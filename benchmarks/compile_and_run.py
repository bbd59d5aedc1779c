"""Compile time of mm_relu and run time of a parallel, vectorized 1024^3 matmul.

Run: ``python benchmarks/compile_and_run.py [--n 1024] [--lanes 16]``.

Goals: parse + build of the 128^3 mm_relu under 0.3 s; the hand-scheduled matmul
(``T.parallel`` rows, i-k-j order, j vectorized by 16) within 10x of numpy's ``a @ b``
measured in the same run (timings drift on this machine: only ratios are meaningful).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np

from mlcbench.driver.build import build, build_lowered, lower
from mlcbench.driver.kernels import MM_RELU, parallel_vectorized_matmul
from mlcbench.runtime import cpu
from mlcbench.script import from_source

from timing import host_line


def _seconds(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def compile_times() -> dict:
    """Seconds spent parsing, lowering and in LLVM for mm_relu (best of 3)."""
    best = {"parse": 1e9, "lower": 1e9, "codegen": 1e9, "total": 1e9}
    for _ in range(3):
        mod, parse = _seconds(lambda: from_source(MM_RELU))
        lowered, lowering = _seconds(lambda: lower(mod))
        _, codegen = _seconds(lambda: build_lowered(lowered))
        _, total = _seconds(lambda: build(from_source(MM_RELU)))
        for key, value in (("parse", parse), ("lower", lowering), ("codegen", codegen),
                           ("total", total)):
            best[key] = min(best[key], value)
    return best


_COLD_BUILD = """
import time
start = time.perf_counter()
import mlcbench
imported = time.perf_counter()
from mlcbench.driver.kernels import MM_RELU
mlcbench.build(mlcbench.script.from_source(MM_RELU))
print(imported - start, time.perf_counter() - imported)
"""


def cold_process_times(repeat: int = 5) -> dict:
    """``import mlcbench`` and the first parse + build of mm_relu in a fresh process
    (LLVM initialisation included), best of ``repeat`` processes."""
    imports, builds = [], []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", _COLD_BUILD], capture_output=True,
                             text=True, check=True).stdout.split()
        imports.append(float(out[0]))
        builds.append(float(out[1]))
    return {"import": min(imports), "first build": min(builds)}


def matmul_ratio(n: int, lanes: int) -> dict:
    """Median run times of the compiled matmul and numpy, interleaved to share the noise."""
    lib = build(from_source(parallel_vectorized_matmul(n, lanes)))
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    c = np.zeros((n, n), "float32")
    lib["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3)
    evaluator = lib.time_evaluator("matmul", cpu(), number=3, repeat=1)
    ours, reference = [], []
    for _ in range(5):
        ours.append(evaluator(a, b, c).mean)
        _, seconds = _seconds(lambda: a @ b)
        reference.append(seconds)
    mine, theirs = float(np.median(ours)), float(np.median(reference))
    return {"ours_ms": mine * 1e3, "numpy_ms": theirs * 1e3, "ratio": mine / theirs,
            "gflops": 2 * n ** 3 / mine / 1e9}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--lanes", type=int, default=16)
    args = parser.parse_args()
    print(host_line())
    times = compile_times()
    print("mm_relu 128^3: " + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in times.items())
          + f"  (goal: total < 300 ms: {'ok' if times['total'] < 0.3 else 'MISSED'})")
    cold = cold_process_times()
    print(f"fresh process: import mlcbench {cold['import'] * 1e3:.0f} ms (goal < 500 ms: "
          f"{'ok' if cold['import'] < 0.5 else 'MISSED'}), first parse + build of mm_relu "
          f"{cold['first build'] * 1e3:.0f} ms (goal < 300 ms: "
          f"{'ok' if cold['first build'] < 0.3 else 'MISSED'})")
    result = matmul_ratio(args.n, args.lanes)
    print(f"matmul {args.n}^3 parallel+vectorized: {result['ours_ms']:.1f} ms "
          f"({result['gflops']:.0f} GFLOPS), numpy {result['numpy_ms']:.1f} ms, "
          f"ratio {result['ratio']:.2f}x (goal < 10x: "
          f"{'ok' if result['ratio'] < 10 else 'MISSED'})")


if __name__ == "__main__":
    main()
