"""The Matmul rule's column-tile groups against the ungrouped nest, same run, numpy alongside.

Run: ``python benchmarks/panel_groups.py [--rounds 5] [--shapes 1024x1024x1024 ...]``
(``OMP_NUM_THREADS`` sets our threads).

Each product ``A[m, k] @ B[k, n]`` is built twice with the default schedule: once as
it is (column tiles in groups whose packed panels fit ``PANEL_GROUP_BYTES``, the group
outside the row tiles) and once with the budget lifted so no group forms (row tiles
outside, all of B walked per row tile). Both are checked against numpy and timed with
``timing.compare`` in interleaved rounds. GFLOPS are printed beside their share of the
machine's measured FMA peak (``machine_peaks``).
"""
from __future__ import annotations

import argparse
import os

os.environ.setdefault("GOMP_SPINCOUNT", "10000")   # before libgomp loads

import numpy as np  # noqa: E402

import mlcbench  # noqa: E402
from mlcbench import dlight, te, topi  # noqa: E402
from mlcbench.dlight.cpu import tiling  # noqa: E402
from mlcbench.driver.machine_peaks import machine_peaks  # noqa: E402
from mlcbench.target import Target  # noqa: E402
from timing import call, compare, kernel  # noqa: E402

SHAPES = ("1024x1024x1024", "128x768x3072", "512x512x2048")


def build(m: int, k: int, n: int, budget: int, target):
    """The default-scheduled ``A @ B`` with ``budget`` bytes for a group of panels."""
    saved, tiling.PANEL_GROUP_BYTES = tiling.PANEL_GROUP_BYTES, budget
    try:
        a, b = te.placeholder((m, k), name="A"), te.placeholder((k, n), name="B")
        mod = mlcbench.IRModule({"main": te.create_prim_func([a, b, topi.nn.matmul(a, b)])})
        with target:
            mod = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(mod)
        return mlcbench.build(mod, target=target)
    finally:
        tiling.PANEL_GROUP_BYTES = saved


def figures(shape: str, rounds: int, target) -> dict:
    m, k, n = (int(v) for v in shape.split("x"))
    rng = np.random.default_rng(0)
    a, b = rng.random((m, k), dtype="float32"), rng.random((k, n), dtype="float32")
    libs = {"grouped": build(m, k, n, tiling.PANEL_GROUP_BYTES, target),
            "ungrouped": build(m, k, n, 1 << 62, target)}
    outs = {name: np.zeros((m, n), "float32") for name in libs}
    for name, lib in libs.items():
        lib["main"](a, b, outs[name])
        np.testing.assert_allclose(outs[name], a @ b, rtol=1e-3)
    contenders = {name: kernel(lib, "main", a, b, outs[name]) for name, lib in libs.items()}
    contenders["numpy"] = call(lambda: a @ b)
    best = compare(contenders, rounds=rounds, min_repeat_ms=200)
    return {name: 2 * m * n * k / seconds / 1e9 for name, seconds in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), help="MxKxN")
    args = parser.parse_args()
    target = Target("llvm")
    rows = [(shape, figures(shape, args.rounds, target)) for shape in args.shapes]
    peak = machine_peaks(kernel_gflops=max(max(r.values()) for _, r in rows)).gflops
    print(f"host CPU {target.mcpu}, vector width {target.vector_width_bits} bits, "
          f"{target.num_cores} cores; FMA peak {peak:.0f} GFLOPS")
    print(f"{'M x K x N':<16}{'grouped':>9}{'of peak':>9}{'ungrouped':>11}{'of peak':>9}"
          f"{'numpy':>8}{'grouped / ungrouped':>21}")
    for shape, r in rows:
        print(f"{shape:<16}{r['grouped']:>9.1f}{r['grouped'] / peak:>9.0%}"
              f"{r['ungrouped']:>11.1f}{r['ungrouped'] / peak:>9.0%}{r['numpy']:>8.1f}"
              f"{r['grouped'] / r['ungrouped']:>20.2f}x")
    print(f"GFLOPS; groups of panels up to {tiling.PANEL_GROUP_BYTES >> 10} KB; numpy with "
          "its default threads")


if __name__ == "__main__":
    main()
