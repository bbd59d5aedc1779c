"""Differential fuzzing of whole programs: random TE programs under random schedules vs numpy.

Run: ``python benchmarks/fuzz_programs.py --cases 10000 [--seed 0] [--jobs 2]``;
replay one case with ``--replay SEED`` (it prints the program, its schedule and the result).

A case draws a program from its seed -- an elementwise expression over broadcast inputs,
a reduction, a pooling, a convolution or a matmul, with random shapes, strides, paddings,
dilations and a dtype among float32, float64 and int32, optionally followed by an
epilogue (relu, a broadcast bias, a scale, a cast, a sum over the last axis) -- and a
schedule for it:

* ``none``: the function as ``te.create_prim_func`` makes it;
* ``default``: the default CPU rules (what an untuned build applies);
* ``space``: a design space of the tuner (``PostOrderApply`` with the default rules) replayed
  with freshly sampled decisions and post-processed, as the search makes candidates;
* ``primitives``: random primitive sequences, the steps of ``fuzz_schedules.py``.

The scheduled program is built for the host and run on random data; its output must equal
the numpy reference (exactly for int32, within a tolerance for floats), and its trace,
through JSON, must replay to the same program (a tuning record rebuilds what was
measured). Every case runs in a worker process with a time limit, so a crash and a hang
are counted, not fatal. The report gives wrong results / crashes / hangs and, for each
failure, the seed and the program.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import platform
import random
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # the sibling modules
import fuzz_schedules  # noqa: E402
from random_programs import make_program, random_program  # noqa: E402

import mlcbench  # noqa: E402
from mlcbench.ir.module import IRModule  # noqa: E402
from mlcbench.target import Target  # noqa: E402
from mlcbench.ir import assert_structural_equal  # noqa: E402
from mlcbench.tir import Schedule, Trace  # noqa: E402

SCHEDULES = ("none", "default", "space", "primitives")
_pick = fuzz_schedules._pick


# -- schedules ---------------------------------------------------------------------------
TARGET = "llvm"


def _design_space_sample(func, draw):
    """A tuning candidate: a design space of the default rules, its decisions sampled
    again and post-processed; None when the sampled decisions or a postprocessor refuse."""
    from mlcbench.meta_schedule.postproc.postproc import apply_postprocs
    from mlcbench.meta_schedule.search_strategy import replay_with_new_decisions
    from mlcbench.meta_schedule.tune_context import TuneContext
    mod = IRModule({"main": func})
    context = TuneContext(mod, target=Target(TARGET), space_generator="post-order-apply",
                          rand_state=draw(1 << 30))
    spaces = context.generate_design_space()
    sch = replay_with_new_decisions(mod, _pick(draw, spaces).trace, draw(1 << 30))
    if sch is None or not apply_postprocs(sch, context.space_generator.postprocs):
        return None
    return sch


def _default(func, draw):
    from mlcbench.meta_schedule.default_schedule import default_schedule
    return default_schedule(IRModule({"main": func}), Target(TARGET))


def _primitives(func, draw):
    sch = Schedule(func)
    for _ in range(1 + draw(6)):
        fuzz_schedules.random_step(sch, draw)
    return sch


_SCHEDULERS = {"none": lambda func, draw: Schedule(func), "default": _default,
               "space": _design_space_sample, "primitives": _primitives}


def random_schedule(func, draw):
    """``(name, Schedule)``: a random scheduler's schedule of ``func``; the name says
    ``"none (<scheduler> gave none)"`` when that scheduler had nothing for it."""
    name = _pick(draw, SCHEDULES)
    sch = _SCHEDULERS[name](func, draw)
    if sch is None:
        return f"none ({name} gave none)", Schedule(func)
    return name, sch


# -- one case ----------------------------------------------------------------------------
def random_arrays(func, seed: int) -> list:
    """Random inputs for the parameters of ``func`` (the last, the output, zeroed):
    small integers for int32 (no overflow anywhere), normal values for floats."""
    rng = np.random.default_rng(seed)
    arrays = []
    for _, buf in func.buffer_params():
        shape = [int(s.value) for s in buf.shape]
        if buf.dtype == "int32":
            arrays.append(rng.integers(-4, 5, shape).astype("int32"))
        else:
            arrays.append(rng.standard_normal(shape).astype(buf.dtype))
    arrays[-1][...] = 0
    return arrays


def assert_matches(actual, expected, dtype: str) -> None:
    """Exact for int32; for floats within a tolerance scaled by the largest value."""
    assert actual.shape == expected.shape, f"shape {actual.shape}, numpy {expected.shape}"
    if dtype == "int32":
        np.testing.assert_array_equal(actual, expected)
        return
    tol = 1e-4 if dtype == "float32" else 1e-9
    scale = max(1.0, float(np.max(np.abs(expected), initial=0)))
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol * scale)


def _compared_as(spec) -> str:
    """The dtype whose tolerance applies: the least precise the program computes in."""
    dtypes = {spec["dtype"], spec.get("cast_to", spec["dtype"])}
    return next(d for d in ("int32", "float32", "float64") if d in dtypes)


def check_program(spec, sch, func, reference, seed: int) -> None:
    """Build ``sch``, run it on random data and compare with numpy; its trace, through
    JSON as a tuning record stores it, must rebuild the same program from ``func``."""
    arrays = random_arrays(func, seed)
    nd = [mlcbench.nd.array(a) for a in arrays]
    mlcbench.build(sch.mod["main"], target=TARGET)["main"](*nd)
    assert_matches(nd[-1].numpy(), reference(*arrays[:-1]), _compared_as(spec))
    replayed = Trace.from_json(sch.trace.as_json()).apply_to_schedule(Schedule(func))
    assert_structural_equal(replayed.mod["main"], sch.mod["main"])


def draw_case(case_seed: int):
    """``(spec, func, reference, schedule name, Schedule)`` of a case seed."""
    draw = random.Random(case_seed).randrange
    spec = random_program(draw)
    func, reference = make_program(spec)
    name, sch = random_schedule(func, draw)
    return spec, func, reference, name, sch


def run_case(case_seed: int) -> dict:
    """One fuzz case; never raises. ``outcome`` is ok, wrong or crash."""
    result = {"seed": case_seed, "outcome": "ok", "program": "", "schedule": "",
              "detail": "", "seconds": 0.0}
    start = time.perf_counter()
    try:
        draw = random.Random(case_seed).randrange
        spec = random_program(draw)
        result["program"] = repr(spec)
        func, reference = make_program(spec)
        result["schedule"], sch = random_schedule(func, draw)
        check_program(spec, sch, func, reference, case_seed)
    except AssertionError as err:
        result.update(outcome="wrong", detail=str(err))
    except Exception:  # noqa: BLE001 -- counting every other exception is the point
        result.update(outcome="crash", detail=traceback.format_exc())
    result["seconds"] = time.perf_counter() - start
    return result


# -- the driver --------------------------------------------------------------------------
def _lost_case(case_seed: int, outcome: str, detail: str) -> dict:
    """The result of a case whose worker died or ran out of time: the program is drawn
    again here (drawing builds nothing, so it cannot crash the way the case did)."""
    draw = random.Random(case_seed).randrange
    return {"seed": case_seed, "outcome": outcome, "program": repr(random_program(draw)),
            "schedule": "", "detail": detail, "seconds": float("nan")}


def case_seeds(cases: int, seed: int) -> list:
    """The case seeds of a run: each names one case for ``--replay``."""
    return [seed * 1_000_003 + i for i in range(cases)]


def fuzz(seeds, jobs: int, timeout: float, on_result=None) -> dict:
    """Run the cases of ``seeds`` in ``jobs`` worker processes; the counts and every
    failure."""
    totals = {"cases": 0, "ok": 0, "wrong": 0, "crash": 0, "hang": 0, "failures": [],
              "schedules": {}, "slowest": []}

    def collect(result):
        totals["cases"] += 1
        totals[result["outcome"]] += 1
        schedule = result["schedule"].split(" ")[0] or "?"
        totals["schedules"][schedule] = totals["schedules"].get(schedule, 0) + 1
        if result["outcome"] != "ok":
            totals["failures"].append(result)
        elif result["seconds"] > 10:
            totals["slowest"].append(result)
        if on_result is not None:
            on_result(result)

    pool = fuzz_schedules.WorkerPool(jobs, run_case, _lost_case, timeout)
    try:
        pool.run(seeds, collect)
    finally:
        pool.close()
    return totals


def replay(case_seed: int) -> dict:
    """Run one case in this process, printing its program, schedule and result."""
    spec, func, _, name, sch = draw_case(case_seed)
    print(f"program: {spec!r}\nschedule: {name}\n{sch.trace}\n{sch.mod['main'].script()}")
    result = run_case(case_seed)
    print(f"outcome: {result['outcome']}\n{result['detail']}")
    return result


def _print_report(totals, args, seconds: float) -> None:
    print(f"host {platform.processor() or platform.machine()}, "
          f"vector width {Target(TARGET).vector_lanes(32) * 32} bits")
    print(f"cases {totals['cases']} in {seconds:.0f} s ({args.jobs} jobs, seed {args.seed}, "
          f"time limit {args.timeout:g} s per case); schedules: "
          + ", ".join(f"{k} {v}" for k, v in sorted(totals["schedules"].items())))
    print(f"wrong results {totals['wrong']}, crashes {totals['crash']}, "
          f"hangs {totals['hang']}")
    slow = sorted(totals["slowest"], key=lambda r: -r["seconds"])
    print(f"cases over 10 s: {len(slow)}" + "".join(
        f"\n  {r['seconds']:.0f} s: seed {r['seed']} ({r['schedule']}) {r['program']}"
        for r in slow[:5]))
    for failure in totals["failures"]:
        print(f"--- seed {failure['seed']} ({failure['outcome']}), replay with "
              f"--replay {failure['seed']}\nprogram: {failure['program']}\n"
              f"schedule: {failure['schedule']}\n{failure['detail']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 1)))
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds a case may run before it counts as a hang")
    parser.add_argument("--replay", type=int, metavar="SEED",
                        help="run the case of this seed here and print it")
    args = parser.parse_args()
    if args.replay is not None:
        replay(args.replay)
        return
    start = time.perf_counter()

    def progress(result):
        done = progress.count = getattr(progress, "count", 0) + 1
        if result["outcome"] != "ok":
            print(f"seed {result['seed']}: {result['outcome']}", file=sys.stderr, flush=True)
        if done % 100 == 0:
            print(f"{done} cases, {time.perf_counter() - start:.0f} s", file=sys.stderr,
                  flush=True)
    totals = fuzz(case_seeds(args.cases, args.seed), args.jobs, args.timeout, progress)
    _print_report(totals, args, time.perf_counter() - start)


if __name__ == "__main__":
    main()
