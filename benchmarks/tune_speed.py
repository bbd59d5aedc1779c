"""Seconds per tuning trial of ``ms.tune_tir`` on a 1024^3 fp32 matmul: every candidate
measured in full (``LocalRunner(adaptive=None)``, how tuning measured before) against
adaptive measurement (the default ``AdaptiveTiming``: a clearly slower candidate stops
after its first call or a 10 ms probe), in the same run, one after the other, with the
same seed and trial budget.

Run: ``python benchmarks/tune_speed.py [--n 1024] [--trials 64] [--order full,adaptive]``.

Prints, per mode: seconds per trial split into search, build, run and update; how the
candidates were measured (full / probe / first call); the tuner's best GFLOPS and its
share of the machine's FMA peak (``mlcbench.driver.machine_peaks``); then the ratio of
the two modes' seconds per trial. Each mode's best program is timed again afterwards,
both in interleaved rounds, so that the two searches' results are compared under the
same load.
"""
from __future__ import annotations

import argparse
import collections
import os
import tempfile
import time

os.environ.setdefault("GOMP_SPINCOUNT", "10000")   # before libgomp loads: see parallel.py

import numpy as np  # noqa: E402

from mlcbench import meta_schedule as ms  # noqa: E402
from mlcbench.meta_schedule.runner import LocalRunner  # noqa: E402
from mlcbench.driver.machine_peaks import machine_peaks  # noqa: E402
from mlcbench.target import Target, host_cpu_name  # noqa: E402
from mlcbench.tir.build import build  # noqa: E402
from timing import compare, kernel  # noqa: E402
from tune_matmul import TARGET, matmul_module  # noqa: E402

MODES = {"full": None, "adaptive": ms.AdaptiveTiming()}


def tune(mod, mode: str, trials: int, per_iter: int, seed: int) -> dict:
    """One tuning run; its seconds per trial by phase, measurement methods and best."""
    rounds = []
    runner = LocalRunner(adaptive=MODES[mode])
    work_dir = tempfile.mkdtemp(prefix=f"tune_speed_{mode}_")
    start = time.perf_counter()
    try:
        database = ms.tune_tir(mod, TARGET, work_dir, max_trials_global=trials,
                               num_trials_per_iter=per_iter, seed=seed, runner=runner,
                               callbacks=[rounds.append], progress_bar=False)
    finally:
        runner.shutdown()
    wall = time.perf_counter() - start
    records = database.get_all_tuning_records()
    methods = collections.Counter(r.measurement.method if r.measurement else "none"
                                  for r in records if r.is_valid)
    phases = collections.Counter()
    for r in rounds:
        phases.update(r.phase_seconds)
    measured = sum(len(r.candidates) for r in rounds)
    return {"mode": mode, "trials": measured, "wall": wall, "phases": phases,
            "methods": methods, "best": database.query_tuning_record(mod, TARGET)}


def retime(results, n: int, rounds: int) -> dict:
    """Best seconds per call of each mode's best program, timed in interleaved rounds."""
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    contenders = {}
    for result in results:
        if result["best"] is not None:
            lib = build(result["best"].as_schedule().mod, target=TARGET)
            c = np.zeros((n, n), "float32")
            contenders[result["mode"]] = kernel(lib, "main", a, b, c)
    return compare(contenders, rounds) if contenders else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--per-iter", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--order", default="full,adaptive")
    args = parser.parse_args()
    host = Target(TARGET)
    peaks = machine_peaks()
    print(f"host CPU {host_cpu_name()}, vector width {host.vector_width_bits} bits, "
          f"{host.num_cores} cores; {peaks.describe()}; load {os.getloadavg()[0]:.1f}")
    mod, flops = matmul_module(args.n), 2 * args.n ** 3
    results = [tune(mod, mode, args.trials, args.per_iter, args.seed)
               for mode in args.order.split(",")]
    best = retime(results, args.n, args.rounds)
    # a program faster than the cached peak means the peak was measured low: again
    peaks = machine_peaks(kernel_gflops=max((flops / s / 1e9 for s in best.values()),
                                            default=None))
    print(f"{peaks.describe()}; load {os.getloadavg()[0]:.1f}")
    print(f"\n{'mode':>9} {'trials':>6} {'s/trial':>8}  {'search':>6} {'build':>6} "
          f"{'run':>6} {'update':>6}  {'best GFLOPS':>11} {'of peak':>7}  measured as")
    for r in results:
        per = {k: v / max(r["trials"], 1) for k, v in r["phases"].items()}
        gflops = flops / best[r["mode"]] / 1e9 if r["mode"] in best else float("nan")
        methods = ", ".join(f"{m} {c}" for m, c in sorted(r["methods"].items()))
        print(f"{r['mode']:>9} {r['trials']:>6} {r['wall'] / max(r['trials'], 1):8.2f}  "
              + " ".join(f"{per.get(p, 0.0):6.2f}" for p in ("search", "build", "run",
                                                             "update"))
              + f"  {gflops:11.1f} {peaks.share(gflops):>7}  {methods}")
    if len(results) == 2 and all(r["trials"] for r in results):
        a, b = (r["wall"] / r["trials"] for r in results)
        print(f"\ns/trial {results[1]['mode']} / {results[0]['mode']}: {b / a:.2f}")


if __name__ == "__main__":
    main()
