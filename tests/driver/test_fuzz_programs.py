"""Whole programs under random schedules give numpy's answer: a seeded slice of the fuzzer.

``benchmarks/fuzz_programs.py`` draws a program (elementwise over broadcast inputs, a
reduction, a pooling, a convolution or a matmul; float32, float64 or int32; random shapes,
strides, paddings, dilations and an epilogue) and a schedule (none, the default rules, a
sampled design space of the tuner, or random primitives), builds it and compares with
numpy. Here a fixed slice of its cases runs in one worker process with a time limit, so a
crash or a hang fails the test instead of ending the run; the generator and the driver
are checked on their own.
"""
import faulthandler
import importlib.util
import os
import pathlib
import random
import signal
import time

import numpy as np
import pytest

_BENCHMARKS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, _BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fuzz, programs = _load("fuzz_programs"), _load("random_programs")

# Cases of seed 0 whose builds take under 5 s each (about 0.4 s on average): a tuner's
# sampled schedule with heavy unrolling can take 20 s to lower, which the benchmark's
# longer runs cover.
SLICE = fuzz.case_seeds(132, 0)[26:]


def _failures(totals) -> str:
    return "\n".join(f"seed {f['seed']} ({f['outcome']}): {f['program']}\n"
                     f"schedule: {f['schedule']}\n{f['detail']}" for f in totals["failures"])


def test_seeded_slice_has_no_wrong_result_crash_or_hang():
    totals = fuzz.fuzz(SLICE, jobs=1, timeout=60)
    assert totals["cases"] == len(SLICE)
    assert (totals["wrong"], totals["crash"], totals["hang"]) == (0, 0, 0), _failures(totals)
    # the slice exercises every way of scheduling, not only the unscheduled function
    assert {"none", "default", "space", "primitives"} <= set(totals["schedules"])


def test_a_case_replays_from_its_seed():
    first, again = fuzz.run_case(12345), fuzz.run_case(12345)
    assert first["outcome"] == "ok", first["detail"]
    assert (first["program"], first["schedule"]) == (again["program"], again["schedule"])


def _draw(seed):
    return random.Random(seed).randrange


def test_programs_cover_every_kind_dtype_and_epilogue():
    specs = [programs.random_program(_draw(seed)) for seed in range(300)]
    assert {s["kind"] for s in specs} == set(programs.KINDS)
    assert {s["dtype"] for s in specs} == set(programs.DTYPES)
    assert {s["epilogue"] for s in specs} == set(programs.EPILOGUES)
    windows = [s for s in specs if s["kind"] in ("pool", "conv2d")]
    assert {tuple(s["stride"]) for s in windows} > {(1, 1)}
    assert any(max(s["padding"]) > 0 for s in windows)
    assert any(max(s["dilation"]) > 1 for s in windows)


@pytest.mark.parametrize("seed", range(0, 400, 7))
def test_reference_has_the_shape_and_dtype_of_the_function_output(seed):
    spec = programs.random_program(_draw(seed))
    func, reference = programs.make_program(spec)
    arrays = fuzz.random_arrays(func, seed)
    expected = reference(*arrays[:-1])
    assert expected.shape == arrays[-1].shape
    assert expected.dtype == arrays[-1].dtype


def test_max_pool_windows_always_touch_the_input():
    """A max over padding alone has no agreed value: the generator never draws one."""
    spec = {"data": [1, 1, 1, 1], "kernel": [2, 1], "stride": [1, 1], "dilation": [2, 1],
            "padding": [1, 0, 1, 0], "ceil_mode": False}
    assert not programs._windows_touch_input(spec)      # taps at -1 and 1 around one row
    pools = [programs.random_program(_draw(seed)) for seed in range(400)]
    assert all(programs._windows_touch_input(s) for s in pools
               if s["kind"] == "pool" and s["pool_type"] == "max")


def test_a_wrong_answer_is_caught():
    spec = programs.random_program(_draw(3))
    func, reference = programs.make_program(spec)
    sch = fuzz.Schedule(func)
    fuzz.check_program(spec, sch, func, reference, 0)
    with pytest.raises(AssertionError):
        fuzz.check_program(spec, sch, func, lambda *a: reference(*a) + 1, 0)


def _dies_or_sleeps(seed):
    if seed == 1:
        faulthandler.disable()      # a deliberate crash: no traceback dump on stderr
        os.kill(os.getpid(), signal.SIGSEGV)
    if seed == 2:
        time.sleep(60)
    return {"seed": seed, "outcome": "ok"}


def test_worker_pool_counts_crashes_and_hangs_and_goes_on():
    results = []
    pool = fuzz.fuzz_schedules.WorkerPool(
        1, _dies_or_sleeps, lambda seed, outcome, detail: {"seed": seed, "outcome": outcome},
        timeout=2)
    try:
        pool.run([0, 1, 2, 3], results.append)
    finally:
        pool.close()
    assert sorted((r["seed"], r["outcome"]) for r in results) == [
        (0, "ok"), (1, "crash"), (2, "hang"), (3, "ok")]


def test_float_tolerance_follows_the_least_precise_dtype():
    spec = {"dtype": "float32", "cast_to": "float64"}
    assert fuzz._compared_as(spec) == "float32"
    exact = np.array([1.0, 2.0])
    fuzz.assert_matches(exact + 1e-6, exact, "float32")
    with pytest.raises(AssertionError):
        fuzz.assert_matches(exact + 1e-6, exact, "float64")
