"""Course chapter 7's fp32 matmul schedules on a real CUDA device, as fractions of cuBLAS.

The schedules of ``benchmarks/gpu_sim.py`` (naive, local blocking, shared blocking),
built with ``mlcbench.build(..., target)`` and run on ``cuda(0)`` through the CUDA
driver (``pip install "mlcbench[cuda]"``), each checked against numpy and timed by
``time_evaluator`` (CUDA events); the reference is torch's matmul on the same device
(cuBLAS), timed with CUDA events in the same run. Prints the host CPU and vector width,
the GPU, and each schedule's ms, GFLOPS and fraction of cuBLAS.

``--sweep`` also tunes the shared-memory schedule by grid search: every tile-size choice
of ``blocking_with_shared`` that the cooperative fetch divides evenly and that fits the
target's shared memory and threads per block, each built, checked and timed on the
device; it prints the five best and the best one's share of cuBLAS.

``--model`` also prints the simulated GPU's modeled time of each sweep choice on the same
target, and how well it ranks them: Spearman's rank correlation with the measured
times, and the measured time of the model's favourite beside the best.

``--tune-trials N`` tunes the matmul with ``ms.tune_tir`` for the target (on this host
every candidate is timed on the device: ``ms.CUDABuilder`` / ``ms.CUDARunner``), then
times the best record's program like the others.

Run: ``.venv/bin/python benchmarks/cuda_matmul.py [--n 1024] [--target cuda] [--sweep]
[--model] [--tune-trials 64]`` (exits with the reason where there is no device).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

os.environ["MLCBENCH_GPU"] = "cuda"

import mlcbench as tvm  # noqa: E402
from mlcbench.runtime import cuda_driver  # noqa: E402
from mlcbench.target import Target  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_sim import SCHEDULES, matmul_module  # noqa: E402

from mlcbench import meta_schedule as ms  # noqa: E402
from mlcbench.driver.gpu_course import blocking_with_shared  # noqa: E402
from mlcbench.ir.errors import MLCBenchError  # noqa: E402


def cublas_seconds(a_np, b_np, number: int) -> float:
    """Seconds per torch.matmul on cuda (cuBLAS), between two CUDA events."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False      # fp32 FMA, as our kernels do
    a, b = torch.from_numpy(a_np).cuda(), torch.from_numpy(b_np).cuda()
    torch.matmul(a, b)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(number):
        torch.matmul(a, b)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / number


def measure(name: str, n: int, target: str, number: int, a_np, b_np, expected) -> float:
    return measure_schedule(SCHEDULES[name], n, target, number, a_np, b_np, expected)


def measure_schedule(schedule, n, target: str, number: int, a_np, b_np, expected) -> float:
    """Best of three means of ``number`` calls, after a call checked against ``expected``."""
    rt_mod = tvm.build(schedule(tvm.tir.Schedule(matmul_module(n))).mod, target=target)
    dev = tvm.cuda(0)
    a, b = tvm.nd.array(a_np, dev), tvm.nd.array(b_np, dev)
    c = tvm.nd.empty((n, n), "float32", dev)
    rt_mod["main"](a, b, c)
    np.testing.assert_allclose(c.numpy(), expected, rtol=1e-3)
    return rt_mod.time_evaluator("main", dev, number=number, repeat=3)(a, b, c).min


def sweep_configs(n: int, max_threads: int = 1024, max_shared_bytes: int = 48 * 1024):
    """(tile_local_y, tile_local_x, tile_block_y, tile_block_x, tile_k) choices that tile
    ``n`` and that the cooperative fetch (threads x 4 floats) covers evenly."""
    for ly in (4, 8):
        for lx in (4, 8):
            for by in (8, 16, 32):
                for bx in (8, 16, 32):
                    for k in (8, 16, 32):
                        threads = by * bx
                        rows, cols = by * ly, bx * lx
                        fits = (threads <= max_threads and (rows + cols) * k * 4 <= max_shared_bytes
                                and n % rows == 0 and n % cols == 0 and n % k == 0)
                        if fits and (rows * k) % (threads * 4) == 0 \
                                and (cols * k) % (threads * 4) == 0:
                            yield (ly, lx, by, bx, k)


def sweep(n: int, target: str, number: int, a_np, b_np, expected) -> list:
    """(seconds, config) of every sweep configuration, fastest first; a configuration
    that fails to build or to check is reported and left out."""
    timed = []
    for config in sweep_configs(n):
        try:
            seconds = measure_schedule(lambda sch: blocking_with_shared(sch, *config),
                                       n, target, number, a_np, b_np, expected)
        except (MLCBenchError, AssertionError) as err:
            print(f"  {config}: {type(err).__name__}: {str(err).splitlines()[0][:120]}")
            continue
        timed.append((seconds, config))
    return sorted(timed)


def modeled_seconds(config, n: int, target: str, inputs) -> float:
    """The simulated GPU's modeled time of one sweep choice (nothing runs on the device)."""
    from mlcbench.meta_schedule.gpu_measure import build_simulated, modeled_profile
    sch = blocking_with_shared(tvm.tir.Schedule(matmul_module(n)), *config)
    return modeled_profile(build_simulated(sch.mod, target), "main", inputs).seconds


def report_model(timed: list, n: int, target: str) -> None:
    """How the simulator's model ranks the sweep's choices against the device."""
    from mlcbench.meta_schedule.gpu_measure import device_inputs
    _, inputs = device_inputs(matmul_module(n))
    measured = np.array([seconds for seconds, _ in timed])
    modeled = np.array([modeled_seconds(config, n, target, inputs) for _, config in timed])
    rho = np.corrcoef(measured.argsort().argsort(), modeled.argsort().argsort())[0, 1]
    pick = int(modeled.argmin())
    print(f"model: Spearman rank correlation with the device {rho:.2f} over {len(timed)} "
          f"choices; its favourite {timed[pick][1]} runs in {measured[pick] * 1e3:.3f} ms "
          f"({measured.min() / measured[pick]:.2f} of the best measured), modeled "
          f"{modeled[pick] * 1e3:.3f} ms")


def tune_and_measure(n: int, target: str, trials: int, number: int, a_np, b_np,
                     expected) -> float:
    """ms.tune_tir for ``target`` with ``trials`` trials, then the best record timed and
    checked against numpy on the device (instead of on the simulated GPU, which would
    take minutes at 4096^3)."""
    with tempfile.TemporaryDirectory() as work_dir:
        start = time.perf_counter()
        database = ms.tune_tir(matmul_module(n), target, work_dir, max_trials_global=trials,
                               num_trials_per_iter=min(trials, 32), seed=0,
                               runner=ms.CUDARunner(verify_best=False))
        took = time.perf_counter() - start
        sch = ms.tir_integration.compile_tir(database, matmul_module(n), target)
    print(f"tune_tir: {trials} trials in {took:.0f} s ({took / trials:.2f} s per trial)")
    return measure_schedule(lambda _: sch, n, target, number, a_np, b_np, expected)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--number", type=int, default=10)
    parser.add_argument("--target", default="cuda")
    parser.add_argument("--sweep", action="store_true",
                        help="also grid-search the shared-memory schedule's tile sizes")
    parser.add_argument("--model", action="store_true",
                        help="with --sweep: rank the choices by the simulator's model too")
    parser.add_argument("--tune-trials", type=int, default=0,
                        help="also tune with ms.tune_tir, timing candidates on the device")
    args = parser.parse_args()
    missing = cuda_driver.probe()
    if missing:
        sys.exit(f"no CUDA device to measure: {missing}")
    host = Target("llvm")
    print(f"host CPU {host.mcpu}, vector width {host.vector_width_bits} bits; "
          f"GPU {cuda_driver.context().name} ({cuda_driver.context().arch})")
    rng = np.random.default_rng(0)
    a_np, b_np = (rng.random((args.n, args.n), dtype=np.float32) for _ in range(2))
    flop = 2 * args.n ** 3
    expected = a_np @ b_np
    try:
        reference = cublas_seconds(a_np, b_np, args.number)
        print(f"{args.n}^3 fp32 matmul; cuBLAS (torch) {reference * 1e3:.3f} ms "
              f"({flop / reference / 1e9:.0f} GFLOPS, the reference)")
    except (ImportError, RuntimeError, AssertionError) as err:
        reference = None
        print(f"{args.n}^3 fp32 matmul; no cuBLAS reference ({err})")
    print(f"{'schedule':<8}{'ms':>10}{'GFLOPS':>10}{'x cuBLAS':>10}")
    for name in SCHEDULES:
        seconds = measure(name, args.n, args.target, args.number, a_np, b_np, expected)
        share = f"{reference / seconds:>10.3f}" if reference else f"{'-':>10}"
        print(f"{name:<8}{seconds * 1e3:>10.3f}{flop / seconds / 1e9:>10.0f}{share}")
    if args.sweep:
        timed = sweep(args.n, args.target, args.number, a_np, b_np, expected)
        print(f"sweep: {len(timed)} tile choices of blocking_with_shared timed; the best five "
              "(local y, local x, block y, block x, k):")
        for seconds, config in timed[:5]:
            share = f"{reference / seconds:.3f} x cuBLAS" if reference else ""
            print(f"  {config}: {seconds * 1e3:.3f} ms, {flop / seconds / 1e9:.0f} GFLOPS {share}")
        if args.model and timed:
            report_model(timed, args.n, args.target)
    if args.tune_trials:
        seconds = tune_and_measure(args.n, args.target, args.tune_trials, args.number,
                                   a_np, b_np, expected)
        share = f", {reference / seconds:.3f} x cuBLAS" if reference else ""
        print(f"tuned: {seconds * 1e3:.3f} ms, {flop / seconds / 1e9:.0f} GFLOPS{share}")
    print(f"built for {args.target}")


if __name__ == "__main__":
    main()
