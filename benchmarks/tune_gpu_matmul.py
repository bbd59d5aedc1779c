"""Course chapter 7's tuning cell on the simulated GPU: MetaSchedule against the hand schedules.

The cell, as the course writes it::

    database = ms.tune_tir(mod=MyModuleMatmul, target="nvidia/geforce-rtx-2080-ti",
                           max_trials_global=64, num_trials_per_iter=64, work_dir=...)
    sch_tuned = ms.tir_integration.compile_tir(database, MyModuleMatmul, target)
    rt_mod = tvm.build(sch_tuned.mod, target=target)

Figures are *modeled* GPU GFLOPS of the 1024^3 fp32 matmul on ``--target`` (the
simulator's counters and roofline, see ``benchmarks/gpu_sim.py``), for the course's
three hand schedules (naive, local blocking, shared blocking) and for the tuned program,
with the tuned program's ratio to each; also the tuning run's wall time on this host.
The search starts from the shared-blocking hand schedule's decisions (the GPU seed
point), so the tuned figure is at least that schedule's; ``--no-seed`` leaves the seed
out, to see what the search finds alone.

Run: ``MLCBENCH_GPU=sim .venv/bin/python benchmarks/tune_gpu_matmul.py [--n 1024]
[--trials 64] [--seed 0]``
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("MLCBENCH_GPU", "sim")

import mlcbench as tvm  # noqa: E402
from mlcbench import meta_schedule as ms  # noqa: E402
from mlcbench.meta_schedule.gpu_measure import (build_simulated, device_inputs,  # noqa: E402
                                                modeled_profile)
from mlcbench.target import Target  # noqa: E402
from mlcbench.target.target import host_cpu_name  # noqa: E402

from gpu_sim import blocking, blocking_with_shared, matmul_module, naive  # noqa: E402


def modeled_gflops(sch_mod, target, flop: float) -> float:
    """GFLOPS of the modeled time of one call (traced, not run)."""
    rt_mod = build_simulated(sch_mod, target)      # modeled on the simulator on any host
    _, args = device_inputs(sch_mod)
    return flop / modeled_profile(rt_mod, "main", args).seconds / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--trials", type=int, default=64)
    parser.add_argument("--per-iter", type=int, default=64)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--target", default="nvidia/geforce-rtx-2080-ti")
    parser.add_argument("--no-seed", action="store_true",
                        help="leave out the hand schedule's decisions as the first candidate")
    args = parser.parse_args()
    target, mod, flop = Target(args.target), matmul_module(args.n), 2.0 * args.n ** 3
    print(f"host {host_cpu_name()} ({Target('llvm').vector_width_bits}-bit vectors), "
          f"{os.cpu_count()} cores; modeled GPU {args.target}, {args.n}^3 fp32 matmul")
    hand = {
        "naive": naive(tvm.tir.Schedule(mod)),
        "local (8,8,8,8,4)": blocking(tvm.tir.Schedule(mod), 8, 8, 8, 8, 4),
        "shared (8,8,8,8,8)": blocking_with_shared(tvm.tir.Schedule(mod), 8, 8, 8, 8, 8),
    }
    figures = {name: modeled_gflops(sch.mod, target, flop) for name, sch in hand.items()}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as work_dir:
        space = ms.space_generator.PostOrderApply(measure_default=not args.no_seed)
        database = ms.tune_tir(mod=mod, target=args.target, max_trials_global=args.trials,
                               num_trials_per_iter=args.per_iter, work_dir=work_dir,
                               seed=args.seed, progress_bar=False, space=space)
        tuned = ms.tir_integration.compile_tir(database, mod, args.target)
        errors = [r.error_msg for r in database.get_all_tuning_records() if not r.is_valid]
    seconds = time.perf_counter() - started
    tuned_gflops = modeled_gflops(tuned.mod, target, flop)
    print(f"\n{'schedule':<22}{'modeled GFLOPS':>16}{'tuned / this':>14}")
    for name, gflops in figures.items():
        print(f"{name:<22}{gflops:>16.1f}{tuned_gflops / gflops:>14.2f}")
    print(f"{'MetaSchedule':<22}{tuned_gflops:>16.1f}{1.0:>14.2f}")
    print(f"\ntuning: {args.trials} trials in {seconds:.0f} s on this host; "
          f"{len(errors)} failed")
    for error in sorted(set(e.strip().splitlines()[-1][:160] for e in errors)):
        print(f"  failed: {error}")
    print(tuned.trace)


if __name__ == "__main__":
    main()
