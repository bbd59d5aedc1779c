"""Tuning throughput on Dask workers: trials per minute with 1, 2 and 4 workers.

The same tuning run (``ms.tune_tir`` of a matmul, replay-trace search, random cost
model, fixed seed) is made with the local builder and runner, then on a ``LocalCluster``
of 1, 2 and 4 worker processes on this machine (one thread each, the resource
``measure=1``, builds and measurements both on the workers). Each cluster first tunes a
few trials unreported, so workers have imported mlcbench and started their measuring
processes before the clock runs. Figures are trials per minute and the ratio to the
local run of the same invocation.

Gains stop where the cores do: a worker builds or measures on one core, so beyond the
host's core count more workers only take turns (and measurements taken side by side
with builds are noisier; see docs/distributed_tuning.md).

Run: ``python benchmarks/tune_distributed.py [--n 64] [--trials 48] [--workers 1 2 4]``
(needs the ``[dask]`` extra).
"""
from __future__ import annotations

import argparse
import tempfile
import time

from mlcbench import meta_schedule as ms
from mlcbench import te
from mlcbench.ir.module import IRModule

from timing import host_line

TARGET = "llvm --num-cores=1"
FAST = ms.EvaluatorConfig(number=3, repeat=1, min_repeat_ms=20)


def matmul_module(n: int) -> IRModule:
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    r = te.reduce_axis((0, n), name="r")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return IRModule({"main": te.create_prim_func([A, B, C])})


def schedule(sch):
    """Sampled tiles of i, j and k, reordered (the course's stochastic schedule)."""
    block = sch.get_block("C", func_name="main")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=sch.sample_perfect_tile(i, n=2))
    j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2))
    k0, k1 = sch.split(k, factors=sch.sample_perfect_tile(k, n=2))
    sch.reorder(i0, j0, k0, i1, k1, j1)
    return sch


def tune(n: int, trials: int, builder, runner, seed: int) -> float:
    """Wall seconds of one tuning run of ``trials`` trials into a fresh work dir."""
    with tempfile.TemporaryDirectory() as work_dir:
        started = time.perf_counter()
        ms.tune_tir(matmul_module(n), TARGET, work_dir, max_trials_global=trials,
                    num_trials_per_iter=16, space=schedule, strategy="replay-trace",
                    cost_model="random", seed=seed, builder=builder, runner=runner,
                    progress_bar=False)
        return time.perf_counter() - started


def on_cluster(workers: int, n: int, trials: int) -> float:
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      resources={"measure": 1}, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        runner = ms.DaskRunner(client, evaluator_config=FAST)
        tune(n, 2 * workers, client, runner, seed=1)           # warm-up, not reported
        return tune(n, trials, client, runner, seed=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--trials", type=int, default=48)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    print(host_line() + f"; {args.n}^3 matmul, {args.trials} trials per run")
    local_runner = ms.LocalRunner(evaluator_config=FAST)
    tune(args.n, 4, "local", local_runner, seed=1)
    local = tune(args.n, args.trials, "local", local_runner, seed=0)
    local_runner.shutdown()
    rate = args.trials / local * 60
    print(f"{'local (LocalBuilder, LocalRunner)':34s} {rate:7.1f} trials/min   1.00x")
    for workers in args.workers:
        seconds = on_cluster(workers, args.n, args.trials)
        print(f"{f'Dask LocalCluster, {workers} worker(s)':34s} "
              f"{args.trials / seconds * 60:7.1f} trials/min   {local / seconds:.2f}x")


if __name__ == "__main__":
    main()
