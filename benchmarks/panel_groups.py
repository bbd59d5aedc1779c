"""Column-tile groups of the Matmul and Conv2D rules against the ungrouped nests, same run.

Run: ``python benchmarks/panel_groups.py [--rounds 5] [--shapes 1024x1024x1024 ...]
[--convs 512x512x7x3 ...]`` (``OMP_NUM_THREADS`` sets our threads).

Each product ``A[m, k] @ B[k, n]`` (``MxKxN``) and each NCHW convolution with relu
(``CINxCOUTxSIZExKERNEL``, stride 1, same padding: ResNet-50's layers) is built twice
with the default schedule: once as it is (column tiles in groups whose packed panels fit
``PANEL_GROUP_BYTES``: outside the row tiles, and for convolutions outside the output
rows) and once with the budget lifted so no group forms. Both are checked against
numpy (products) or each other (convolutions) and timed with ``timing.compare`` in
interleaved rounds, numpy's product alongside. GFLOPS are printed beside their share of
the machine's measured FMA peak (``machine_peaks``).
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
CONVS = ("512x512x7x3", "256x1024x14x1", "256x256x14x3", "128x128x28x3", "64x64x56x3")


def build(tensors, budget: int, target):
    """The default-scheduled function of ``tensors`` with ``budget`` bytes for a group
    of panels."""
    saved, tiling.PANEL_GROUP_BYTES = tiling.PANEL_GROUP_BYTES, budget
    try:
        mod = mlcbench.IRModule({"main": te.create_prim_func(list(tensors))})
        with target:
            mod = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(mod)
        return mlcbench.build(mod, target=target)
    finally:
        tiling.PANEL_GROUP_BYTES = saved


def matmul_case(shape: str):
    m, k, n = (int(v) for v in shape.split("x"))
    a, b = te.placeholder((m, k), name="A"), te.placeholder((k, n), name="B")
    rng = np.random.default_rng(0)
    arrays = [rng.random((m, k), dtype="float32"), rng.random((k, n), dtype="float32")]
    return [a, b, topi.nn.matmul(a, b)], arrays, 2 * m * n * k, lambda x, y: x @ y


def conv_case(shape: str):
    c_in, c_out, size, kernel_size = (int(v) for v in shape.split("x"))
    x = te.placeholder((1, c_in, size, size), name="x")
    w = te.placeholder((c_out, c_in, kernel_size, kernel_size), name="w")
    y = topi.nn.relu(topi.nn.conv2d_nchw(x, w, 1, kernel_size // 2, 1))
    rng = np.random.default_rng(0)
    arrays = [rng.random((1, c_in, size, size), dtype="float32"),
              rng.random((c_out, c_in, kernel_size, kernel_size), dtype="float32")]
    return [x, w, y], arrays, 2 * c_out * c_in * kernel_size ** 2 * size ** 2, None


def figures(case, rounds: int, target) -> dict:
    tensors, arrays, flops, reference = case
    libs = {"grouped": build(tensors, tiling.PANEL_GROUP_BYTES, target),
            "ungrouped": build(tensors, 1 << 62, target)}
    shape = [int(v) for v in tensors[-1].shape]
    outs = {name: np.zeros(shape, "float32") for name in libs}
    for name, lib in libs.items():
        lib["main"](*arrays, outs[name])
    expected = reference(*arrays) if reference else outs["ungrouped"]
    np.testing.assert_allclose(outs["grouped"], expected, rtol=1e-3)
    contenders = {name: kernel(lib, "main", *arrays, outs[name]) for name, lib in libs.items()}
    if reference:
        contenders["numpy"] = call(lambda: reference(*arrays))
    best = compare(contenders, rounds=rounds, min_repeat_ms=200)
    return {name: flops / seconds / 1e9 for name, seconds in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), help="MxKxN")
    parser.add_argument("--convs", nargs="*", default=list(CONVS),
                        help="CINxCOUTxSIZExKERNEL")
    args = parser.parse_args()
    target = Target("llvm")
    rows = [(shape, figures(matmul_case(shape), args.rounds, target)) for shape in args.shapes]
    rows += [(f"conv {shape}", figures(conv_case(shape), args.rounds, target))
             for shape in args.convs]
    peak = machine_peaks(kernel_gflops=max(max(r.values()) for _, r in rows)).gflops
    print(f"host CPU {target.mcpu}, vector width {target.vector_width_bits} bits, "
          f"{target.num_cores} cores; FMA peak {peak:.0f} GFLOPS")
    print(f"{'workload':<22}{'grouped':>9}{'of peak':>9}{'ungrouped':>11}{'of peak':>9}"
          f"{'numpy':>8}{'grouped / ungrouped':>21}")
    for shape, r in rows:
        numpy = f"{r['numpy']:>8.1f}" if "numpy" in r else f"{'-':>8}"
        print(f"{shape:<22}{r['grouped']:>9.1f}{r['grouped'] / peak:>9.0%}"
              f"{r['ungrouped']:>11.1f}{r['ungrouped'] / peak:>9.0%}{numpy}"
              f"{r['grouped'] / r['ungrouped']:>20.2f}x")
    print(f"GFLOPS; groups of panels up to {tiling.PANEL_GROUP_BYTES >> 10} KB; numpy with "
          "its default threads")


if __name__ == "__main__":
    main()
