"""Template-free tuning (``ms.tune_tir``, default design space) of a 1024^3 fp32 matmul.

One tuning run of ``--trials`` trials (default 512) with the schedule rules' design
space, evolutionary search and the XGBoost cost model; at the end the tuner measures
its ``--remeasure`` fastest programs again, in turn, and keeps the best of those. The
best record among the first 64, 128, ... trials (by the tuner's first measurement) and
the tuner's final pick are then rebuilt and timed against numpy's ``a @ b`` in
interleaved rounds (best of ``--rounds``), because this machine's timings drift and
what the tuner measured while it searched was taken under another load.

Run: ``python benchmarks/tune_matmul.py [--n 1024] [--trials 512] [--work-dir DIR]``.
A work dir of an earlier run is resumed (its records count as the first trials);
``--trials 0`` only re-measures the checkpoints of the records already there.

Prints one row per checkpoint and one for the final pick: trials, best GFLOPS and its
share of the machine's FMA peak (``mlcbench.driver.machine_peaks``), ratio to numpy, fraction of the last result, and what the program is (the default schedule, or
the tile sizes sampled for i, j, k and whether B is packed); then the wall time per
trial split into search, build, run and update.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("GOMP_SPINCOUNT", "10000")   # before libgomp loads: see parallel.py

import numpy as np  # noqa: E402

from mlcbench import te  # noqa: E402
from mlcbench.ir.module import IRModule  # noqa: E402
from mlcbench import meta_schedule as ms  # noqa: E402
from mlcbench.driver.machine_peaks import machine_peaks  # noqa: E402
from mlcbench.meta_schedule.database import first_per_trace  # noqa: E402
from mlcbench.target import Target, host_cpu_name  # noqa: E402
from mlcbench.tir.build import build  # noqa: E402
from timing import call, compare, kernel  # noqa: E402

TARGET = "llvm --num-cores=2"


def matmul_module(n: int) -> IRModule:
    a, b = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return IRModule({"main": te.create_prim_func([a, b, c])})


def checkpoints(trials: int) -> list[int]:
    points = [p for p in (64, 128, 256, 512, 1024, 2048) if p < trials]
    return points + [trials]


def best_within(records, count: int):
    """The fastest valid record among the first ``count`` measured."""
    valid = [r for r in records[:count] if r.is_valid]
    return min(valid, key=lambda r: r.mean_run_secs, default=None)


def time_against_numpy(mod, n: int, rounds: int) -> tuple[float, float]:
    """Best seconds per call of the built ``mod`` and of numpy, interleaved."""
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    c = np.zeros((n, n), "float32")
    lib = build(mod, target=TARGET)
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3)
    best = compare({"ours": kernel(lib, "main", a, b, c), "numpy": call(lambda: a @ b)}, rounds)
    return best["ours"], best["numpy"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--trials", type=int, default=512)
    parser.add_argument("--per-iter", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--remeasure", type=int, default=4,
                        help="programs measured again at the end (remeasure_top_k)")
    args = parser.parse_args()
    mod, n = matmul_module(args.n), args.n
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="tune_matmul_")
    rounds = []
    start = time.perf_counter()
    if args.trials > 0:
        database = ms.tune_tir(mod, TARGET, work_dir, max_trials_global=args.trials,
                               num_trials_per_iter=args.per_iter, seed=args.seed,
                               callbacks=[rounds.append], remeasure_top_k=args.remeasure)
    else:
        database = ms.JSONDatabase(work_dir=work_dir)
    wall = time.perf_counter() - start
    records = database.get_all_tuning_records()
    trials = len(first_per_trace(records))
    flops = 2 * n ** 3
    print(f"\n{len(records)} records ({trials} trials) in {work_dir}; "
          f"tuning wall time {wall:.0f} s")
    picks = [(str(count), best_within(first_per_trace(records), count))
             for count in checkpoints(trials)]
    picks.append(("pick", database.query_tuning_record(mod, TARGET)))
    results = []
    for label, record in picks:
        if record is None:
            print(f"{label:>7}  no valid record")
            continue
        ours, theirs = time_against_numpy(record.as_schedule().mod, n, args.rounds)
        results.append((label, flops / ours / 1e9, flops / theirs / 1e9, describe(record)))
    fastest = max([r[1] for r in results] + [r[2] for r in results], default=None)
    peaks = machine_peaks(kernel_gflops=fastest)
    host = Target(TARGET)
    print(f"host CPU {host_cpu_name()}, vector width {host.vector_width_bits} bits, "
          f"{host.num_cores} cores; {peaks.describe()}")
    print(f"{'trials':>7} {'GFLOPS':>8} {'of peak':>8} {'numpy GFLOPS':>13} {'of peak':>8} "
          f"{'vs numpy':>9} {'of last':>8}  program")
    last = results[-1][1] if results else float("nan")
    for label, ours, theirs, what in results:
        print(f"{label:>7} {ours:8.1f} {peaks.share(ours):>8} {theirs:13.1f} "
              f"{peaks.share(theirs):>8} {ours / theirs:8.2f}x {ours / last:7.0%}  {what}")
    print_phase_times(rounds)


def describe(record) -> str:
    """``default schedule`` or the sampled tiles of i, j, k (``packed B`` when packed)."""
    tiles = [inst.decision for inst in record.trace.insts if inst.kind == "sample_perfect_tile"]
    if not tiles:
        return "default schedule"
    packed = any(inst.kind == "transform_layout" for inst in record.trace.insts)
    return " ".join(map(str, tiles)) + (", packed B" if packed else "")


def print_phase_times(rounds) -> None:
    """Seconds per trial of this run, split by phase."""
    trials = sum(len(r.candidates) for r in rounds)
    if not trials:
        return
    phases = {}
    for r in rounds:
        for phase, seconds in r.phase_seconds.items():
            phases[phase] = phases.get(phase, 0.0) + seconds
    total = sum(r.seconds for r in rounds)
    split = ", ".join(f"{phase} {seconds / trials:.2f}" for phase, seconds in phases.items())
    print(f"\n{trials} trials measured in this run: {total / trials:.2f} s per trial ({split})")


if __name__ == "__main__":
    main()
