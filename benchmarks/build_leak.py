"""Memory kept per build: RSS growth over many builds and runs in one process.

Run: ``python benchmarks/build_leak.py [--builds 1000] [--warmup 50]``.

Builds alternate between two small programs (an elementwise kernel, and a vectorized,
parallel matmul that calls into libgomp); each is run once, checked against
numpy, and its Module dropped. Python objects do not accumulate across builds (the count of
objects the garbage collector tracks is printed too), so what grows is native memory:
LLVM pass pipelines, JIT engines, code pages. Goal: under 5 KB per build.

The figure is the least-squares slope of RSS against the build count, sampled every
``--builds / 20`` builds after ``--warmup`` builds (the first builds fill caches that
are kept on purpose: target machines, libgomp, the parser's tables). The heap figure
(``mallinfo2``: bytes malloc has handed out and not got back) tells a true leak from
pages malloc keeps for reuse.
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import os

import numpy as np

import mlcbench
from mlcbench.codegen.llvm.jit import live_engines
from mlcbench.script import from_source
from mlcbench.target import Target
from mlcbench.target.target import host_cpu_name

ELEMENTWISE = """
@T.prim_func
def scale_add(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    for i in range(256):
        with T.block("B"):
            vi = T.axis.spatial(256, i)
            B[vi] = A[vi] * T.float32(2) + T.float32(1)
"""

MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
           C: T.Buffer((64, 64), "float32")):
    for i in T.parallel(64):
        for j0 in range(8):
            for k in range(64):
                for j1 in T.vectorized(8):
                    with T.block("C"):
                        vi = T.axis.spatial(64, i)
                        vj = T.axis.spatial(64, j0 * 8 + j1)
                        vk = T.axis.reduce(64, k)
                        with T.init():
                            C[vi, vj] = T.float32(0)
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def heap_bytes() -> int:
    """Bytes malloc has handed out and not got back (0 where glibc lacks mallinfo2)."""
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallinfo2"):
        return 0
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd


def build_and_run(programs, count: int, rng) -> None:
    """Build number ``count``: the elementwise kernel or the matmul, in turn, run once
    and checked against numpy."""
    program = programs[count % 2]
    if count % 2 == 0:
        a = rng.standard_normal(256).astype("float32")
        b = np.empty_like(a)
        mlcbench.build(program, target="llvm")(a, b)
        np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)
        return
    x, y = (rng.standard_normal((64, 64)).astype("float32") for _ in range(2))
    z = np.empty_like(x)
    mlcbench.build(program, target="llvm")(x, y, z)
    np.testing.assert_allclose(z, x @ y, rtol=1e-4, atol=1e-4)


def slope(xs, ys) -> float:
    return float(np.polyfit(np.asarray(xs, float), np.asarray(ys, float), 1)[0])


def measure(builds: int, warmup: int) -> dict:
    programs = (from_source(ELEMENTWISE), from_source(MATMUL))
    rng = np.random.default_rng(0)
    for count in range(warmup):
        build_and_run(programs, count, rng)
    step = max(1, builds // 20)
    counts, rss, heap, objects = [], [], [], []
    for done in range(builds + 1):
        if done % step == 0:
            gc.collect()
            counts.append(done)
            rss.append(rss_bytes())
            heap.append(heap_bytes())
            objects.append(len(gc.get_objects()))
        if done < builds:
            build_and_run(programs, done, rng)
    gc.collect()
    return {"builds": builds, "rss_per_build": slope(counts, rss),
            "heap_per_build": slope(counts, heap), "objects_per_build": slope(counts, objects),
            "rss_total": rss[-1] - rss[0], "live_engines": live_engines()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=50)
    args = parser.parse_args()
    host = Target("llvm")
    print(f"host {host_cpu_name()}, vector width {host.vector_width_bits} bits "
          f"({host.vector_lanes(32)} float32 lanes)")
    result = measure(args.builds, args.warmup)
    print(f"{result['builds']} builds (an elementwise kernel and a parallel matmul in "
          "turn), each run once and checked against numpy")
    print(f"RSS growth per build:  {result['rss_per_build'] / 1024:8.2f} KB "
          f"(goal < 5 KB; {result['rss_total'] / 2**20:.1f} MB over the run)")
    print(f"heap growth per build: {result['heap_per_build'] / 1024:8.2f} KB")
    print(f"Python objects per build: {result['objects_per_build']:.2f}; "
          f"JIT engines alive at the end: {result['live_engines']}")


if __name__ == "__main__":
    main()
