"""Course chapter 7's fp32 matmul schedules on a real CUDA device, as fractions of cuBLAS.

The schedules of ``benchmarks/gpu_sim.py`` (naive, local blocking, shared blocking),
built with ``mlcbench.build(..., target)`` and run on ``cuda(0)`` through the CUDA
driver (``pip install "mlcbench[cuda]"``), each checked against numpy and timed by
``time_evaluator`` (CUDA events); the reference is torch's matmul on the same device
(cuBLAS), timed with CUDA events in the same run. Prints the host CPU and vector width,
the GPU, and each schedule's ms, GFLOPS and fraction of cuBLAS.

Run: ``.venv/bin/python benchmarks/cuda_matmul.py [--n 1024] [--target cuda]``
(exits with the reason where there is no device).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

os.environ["MLCBENCH_GPU"] = "cuda"

import mlcbench as tvm  # noqa: E402
from mlcbench.runtime import cuda_driver  # noqa: E402
from mlcbench.target import Target  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_sim import SCHEDULES, matmul_module  # noqa: E402


def cublas_seconds(a_np, b_np, number: int) -> float:
    """Seconds per torch.matmul on cuda (cuBLAS), between two CUDA events."""
    import torch
    a, b = torch.from_numpy(a_np).cuda(), torch.from_numpy(b_np).cuda()
    torch.matmul(a, b)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(number):
        torch.matmul(a, b)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / number


def measure(name: str, n: int, target: str, number: int, a_np, b_np) -> float:
    rt_mod = tvm.build(SCHEDULES[name](tvm.tir.Schedule(matmul_module(n))).mod, target=target)
    dev = tvm.cuda(0)
    a, b = tvm.nd.array(a_np, dev), tvm.nd.array(b_np, dev)
    c = tvm.nd.empty((n, n), "float32", dev)
    rt_mod["main"](a, b, c)
    np.testing.assert_allclose(c.numpy(), a_np @ b_np, rtol=1e-3)
    return rt_mod.time_evaluator("main", dev, number=number, repeat=3)(a, b, c).min


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--number", type=int, default=10)
    parser.add_argument("--target", default="cuda")
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
    try:
        reference = cublas_seconds(a_np, b_np, args.number)
        print(f"{args.n}^3 fp32 matmul; cuBLAS (torch) {reference * 1e3:.3f} ms "
              f"({flop / reference / 1e9:.0f} GFLOPS, the reference)")
    except (ImportError, RuntimeError, AssertionError) as err:
        reference = None
        print(f"{args.n}^3 fp32 matmul; no cuBLAS reference ({err})")
    print(f"{'schedule':<8}{'ms':>10}{'GFLOPS':>10}{'x cuBLAS':>10}")
    for name in SCHEDULES:
        seconds = measure(name, args.n, args.target, args.number, a_np, b_np)
        share = f"{reference / seconds:>10.3f}" if reference else f"{'-':>10}"
        print(f"{name:<8}{seconds * 1e3:>10.3f}{flop / seconds / 1e9:>10.0f}{share}")
    print(f"built for {args.target}")


if __name__ == "__main__":
    main()
