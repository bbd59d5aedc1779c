"""The simulated GPU on course chapter 7's 1024^3 fp32 matmul: seconds per call on this
CPU and the modeled GPU time of each schedule.

Schedules (the course's cells, built with ``mlcbench.build(..., target)``):

* naive: one thread per element of C, 16x16 threads per block, C accumulated in place;
* local: ``blocking(sch, 8, 8, 8, 8, 4)``, an 8x8 tile of C per thread in registers;
* shared: ``blocking_with_shared(sch, 8, 8, 8, 8, 8)``, tiles of A and B fetched into
  shared memory by all threads of a block, 4 floats at a time.

For each: the first call (trace + run), later calls (run only; the course times them
with ``number=10``) in wall seconds and in CPU seconds of both cores together (steadier
than wall time on a shared machine), the modeled time and GFLOPS on ``--target`` (default the RTX 2080 Ti
the course tunes for), and the simulator's seconds per call as a ratio to numpy's
matmul measured in the same run. The published ordering on a real GPU is naive <
local < shared in GFLOPS; the modeled times should order the same way.

Run: ``MLCBENCH_GPU=sim .venv/bin/python benchmarks/gpu_sim.py [--n 1024] [--calls 3]``
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("MLCBENCH_GPU", "sim")

import mlcbench as tvm  # noqa: E402
from mlcbench.driver.gpu_course import blocking, blocking_with_shared  # noqa: E402
from mlcbench.script import tir as T  # noqa: E402
from mlcbench.target import Target  # noqa: E402


def matmul_module(n: int):
    @tvm.script.ir_module
    class Matmul:
        @T.prim_func
        def main(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32"),
                 C: T.Buffer((n, n), "float32")) -> None:
            T.func_attr({"global_symbol": "main", "tir.noalias": True})
            for i, j, k in T.grid(n, n, n):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = 0.0
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    return Matmul


def naive(sch):
    i, j, k = sch.get_loops(sch.get_block("C"))
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16])
    sch.reorder(i0, j0, i1, j1, k)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    return sch


SCHEDULES = {
    "naive": naive,
    "local": lambda sch: blocking(sch, 8, 8, 8, 8, 4),
    "shared": lambda sch: blocking_with_shared(sch, 8, 8, 8, 8, 8),
}


def numpy_seconds(a, b, calls: int) -> float:
    best = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        np.matmul(a, b)
        best = min(best, time.perf_counter() - start)
    return best


def measure(name: str, n: int, target: str, calls: int, a_np, b_np) -> dict:
    rt_mod = tvm.build(SCHEDULES[name](tvm.tir.Schedule(matmul_module(n))).mod, target=target)
    dev = tvm.cuda(0)
    a, b = tvm.nd.array(a_np, dev), tvm.nd.array(b_np, dev)
    c = tvm.nd.array(np.zeros((n, n), "float32"), dev)
    start = time.perf_counter()
    rt_mod["main"](a, b, c)
    first = time.perf_counter() - start
    np.testing.assert_allclose(c.numpy(), a_np @ b_np, rtol=1e-3)
    later = cpu = float("inf")
    for _ in range(calls):
        start, start_cpu = time.perf_counter(), time.process_time()
        rt_mod["main"](a, b, c)
        later = min(later, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    modeled = rt_mod.time_evaluator("main", dev, number=10)(a, b, c).mean
    return {"first": first, "later": later, "cpu": cpu, "modeled": modeled,
            "profile": rt_mod.profile("main", a, b, c)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--target", default="nvidia/geforce-rtx-2080-ti")
    parser.add_argument("--report", action="store_true", help="print each counter table")
    args = parser.parse_args()
    host = Target("llvm")
    print(f"host CPU {host.mcpu}, vector width {host.vector_width_bits} bits, "
          f"{host.num_cores} cores, load average {os.getloadavg()[0]:.1f}")
    rng = np.random.default_rng(0)
    a_np, b_np = (rng.random((args.n, args.n), dtype=np.float32) for _ in range(2))
    reference = numpy_seconds(a_np, b_np, 5)
    flop = 2 * args.n ** 3
    print(f"{args.n}^3 fp32 matmul; numpy {reference * 1e3:.1f} ms per call (reference)")
    print(f"{'schedule':<8}{'first call s':>14}{'later calls s':>15}{'CPU s':>8}{'x numpy':>9}"
          f"{'modeled ms':>12}{'modeled GFLOPS':>16}")
    for name in SCHEDULES:
        fig = measure(name, args.n, args.target, args.calls, a_np, b_np)
        print(f"{name:<8}{fig['first']:>14.2f}{fig['later']:>15.2f}{fig['cpu']:>8.2f}"
              f"{fig['later'] / reference:>9.0f}{fig['modeled'] * 1e3:>12.3f}"
              f"{flop / fig['modeled'] / 1e9:>16.0f}")
        if args.report:
            print(fig["profile"])
    print(f"modeled on {args.target}")


if __name__ == "__main__":
    main()
