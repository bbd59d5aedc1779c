"""AutoTVM-style template tuning of an fp32 matmul: XGBTuner, GATuner and RandomTuner
at equal trial counts, best GFLOPS and its ratio to numpy measured in the same run.

After tuning, each tuner's best config is rebuilt (``apply_history_best`` on its log)
and timed against numpy's ``a @ b`` in interleaved rounds (best of ``--rounds``); the
table also shows the GFLOPS the tuner measured while it searched.

    python benchmarks/tune_matmul_autotvm.py --trials 64          # 1024^3 by default

The template tiles y/x/k, reorders, writes through a cache_write block computed at the
outer tile, unrolls the inner reduction and vectorizes the inner x loop, with knobs for
parallelizing the outer tiles and unrolling.
"""
import argparse
import tempfile
import time

import numpy as np

import mlcbench
from mlcbench import autotvm, te
from timing import call, compare, host_line, kernel


@autotvm.template("benchmark/matmul")
def matmul(N, L, M, dtype):
    A = te.placeholder((N, L), name="A", dtype=dtype)
    B = te.placeholder((L, M), name="B", dtype=dtype)
    k = te.reduce_axis((0, L), name="k")
    C = te.compute((N, M), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    cfg = autotvm.get_config()
    CC = s.cache_write(C, "global")
    y, x = s[C].op.axis
    cfg.define_split("tile_y", y, num_outputs=2, max_factor=64)
    cfg.define_split("tile_x", x, num_outputs=2, max_factor=128, policy="power2",
                     filter=lambda e: e.size[-1] >= 8)
    cfg.define_split("tile_k", L, num_outputs=2, max_factor=16)
    cfg.define_knob("parallel", [0, 1])
    cfg.define_knob("unroll_k", [0, 1])
    yo, yi = cfg["tile_y"].apply(s, C, y)
    xo, xi = cfg["tile_x"].apply(s, C, x)
    s[C].reorder(yo, xo, yi, xi)
    s[CC].compute_at(s[C], xo)
    yc, xc = s[CC].op.axis
    (kc,) = s[CC].op.reduce_axis
    ko, ki = cfg["tile_k"].apply(s, CC, kc)
    s[CC].reorder(ko, yc, ki, xc)
    s[CC].vectorize(xc)
    if cfg["unroll_k"].val:
        s[CC].unroll(ki)
    s[C].vectorize(xi)
    if cfg["parallel"].val:
        s[C].parallel(s[C].fuse(yo, xo))
    return s, [A, B, C]


def time_against_numpy(rows, n: int, rounds: int) -> dict:
    """Seconds per call of each tuner's best build and of numpy, interleaved; every
    build checked against numpy first."""
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    timers = {"numpy": call(lambda: a @ b)}
    for row in rows:
        with autotvm.apply_history_best(row["log"]):
            sch, args = matmul(n, n, n, "float32")
        lib = mlcbench.build(sch, args, target="llvm")
        arrays = [mlcbench.nd.array(a), mlcbench.nd.array(b),
                  mlcbench.nd.empty((n, n), "float32")]
        lib[lib.entry_name](*arrays)
        np.testing.assert_allclose(arrays[2].numpy(), a @ b, rtol=1e-3)
        timers[row["tuner"]] = kernel(lib, lib.entry_name, *arrays)
    return compare(timers, rounds)


def tune(name: str, task, trials: int, option) -> dict:
    tuners = {"XGBTuner": lambda: autotvm.tuner.XGBTuner(task, loss_type="rank",
                                                         feature_type="knob", seed=0),
              "GATuner": lambda: autotvm.tuner.GATuner(task, pop_size=16, seed=0),
              "RandomTuner": lambda: autotvm.tuner.RandomTuner(task, seed=0)}
    tuner = tuners[name]()
    log = tempfile.NamedTemporaryFile(suffix=".log", delete=False).name
    start = time.perf_counter()
    tuner.tune(n_trial=trials, measure_option=option,
               callbacks=[autotvm.callback.progress_bar(trials, prefix=f"[{name}]"),
                          autotvm.callback.log_to_file(log)])
    wall = time.perf_counter() - start
    errors = sum(res.error_no != 0 for _, res in autotvm.record.load_from_file(log))
    return {"tuner": name, "gflops": tuner.best_flops / 1e9, "sec_per_trial": wall / trials,
            "errors": errors, "best": tuner.best_config, "log": log}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(host_line())
    n = args.size
    task = autotvm.task.create("benchmark/matmul", args=(n, n, n, "float32"), target="llvm")
    print(f"config space: {len(task.config_space)} configs, {task.flop / 1e9:.2f} GFLOP")
    option = autotvm.measure_option(
        builder=autotvm.LocalBuilder(timeout=30),
        runner=autotvm.LocalRunner(number=3, repeat=1, min_repeat_ms=50, timeout=30))
    rows = [tune(name, task, args.trials, option)
            for name in ("XGBTuner", "GATuner", "RandomTuner")]
    best = time_against_numpy(rows, n, args.rounds)
    numpy_gflops = task.flop / best["numpy"] / 1e9
    print(f"\n{n}^3 fp32 matmul, {args.trials} trials per tuner; numpy "
          f"{numpy_gflops:.1f} GFLOPS (timed alongside)")
    print(f"{'tuner':<12} {'GFLOPS':>8} {'/ numpy':>8} {'while tuning':>13} {'s/trial':>8} "
          f"{'errors':>7}")
    for row in rows:
        gflops = task.flop / best[row["tuner"]] / 1e9
        print(f"{row['tuner']:<12} {gflops:>8.2f} {gflops / numpy_gflops:>8.2f} "
              f"{row['gflops']:>13.2f} {row['sec_per_trial']:>8.2f} {row['errors']:>7d}")
    for row in rows:
        print(f"best of {row['tuner']}: {row['best']}")


if __name__ == "__main__":
    main()
