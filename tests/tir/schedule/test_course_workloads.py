"""Course workloads scheduled end to end: each schedule builds and gives numpy's answer.

* the chapter-2 matmul tiled 32 x 32 (split i and j, reorder ``i0, j0, k, i1, j1``,
  vectorize the inner columns, parallelize the fused outer tiles);
* a 3x3 NCHW conv2d from ``topi`` whose padding block is inlined and whose output
  loops are fused and parallelized;
* a row softmax whose max / exp / sum stages are computed under the row loop, with the
  normalized output vectorized.
"""
import numpy as np

from mlcbench import te, topi
from mlcbench.script import tir as T
from mlcbench.tir import ForKind, Schedule
from helpers.schedule_testing import check_numeric, check_trace_roundtrip


def matmul(n: int):
    """The plain ``C = A @ B`` of chapter 2 at size ``n``."""
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def tile_matmul_32x32(func):
    """Chapter-2 tiling: 32 x 32 output tiles, k between the tile loops and the tile."""
    sch = Schedule(func)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 32])
    j0, j1 = sch.split(j, factors=[None, 32])
    sch.reorder(i0, j0, k, i1, j1)
    sch.decompose_reduction(block, k)
    sch.vectorize(j1)
    outer = sch.fuse(i0, j0)
    sch.parallel(outer)
    return sch


def loop_nest(func):
    """``[(loop name, extent, kind), ...]`` of the update block's loops, outermost first."""
    sch = Schedule(func)
    return [(sch.get(rv).loop_var.name, int(sch.get(rv).extent.value), sch.get(rv).kind)
            for rv in sch.get_loops("C_update")]


def test_tiled_matmul_matches_numpy():
    func = matmul(128)
    sch = tile_matmul_32x32(func)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)
    check_trace_roundtrip(func, sch)


def test_tiled_matmul_1024_loop_nest():
    sch = tile_matmul_32x32(matmul(1024))
    nest = loop_nest(sch.mod["main"])
    assert [(extent, kind) for _, extent, kind in nest] == [
        (32 * 32, ForKind.PARALLEL), (1024, ForKind.SERIAL), (32, ForKind.SERIAL),
        (32, ForKind.VECTORIZED)]
    assert [name for name, _, _ in nest] == ["i_0_j_0_fused", "k", "i_1", "j_1"]
    script = sch.mod.script()
    assert "T.parallel(1024)" in script and "T.vectorized(32)" in script
    assert 'with T.block("C_init")' in script


def conv2d(channels=4, filters=8, size=8):
    data = te.placeholder((1, channels, size, size), name="data")
    kernel = te.placeholder((filters, channels, 3, 3), name="kernel")
    out = topi.nn.conv2d_nchw(data, kernel, 1, 1, 1)
    return te.create_prim_func([data, kernel, out])


def conv2d_reference(data, kernel):
    """3x3, stride 1, padding 1 NCHW convolution in numpy (a sum of nine shifted taps)."""
    padded = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1)))
    height, width = data.shape[2:]
    out = np.zeros((data.shape[0], kernel.shape[0], height, width), "float32")
    for dy in range(3):
        for dx in range(3):
            window = padded[:, :, dy:dy + height, dx:dx + width]
            out += np.einsum("nchw,fc->nfhw", window, kernel[:, :, dy, dx])
    return out


def schedule_conv2d(func):
    """Inline the padding, fuse the four output loops and run them in parallel."""
    sch = Schedule(func)
    sch.compute_inline(sch.get_block("pad_temp"))
    n, f, y, x, rc, ry, rx = sch.get_loops("conv2d_nchw")
    fused = sch.fuse(n, f, y, x)
    sch.parallel(fused)
    return sch


def test_conv2d_padding_inlined_fused_parallel():
    func = conv2d()
    sch = schedule_conv2d(func)
    script = sch.mod.script()
    assert "pad_temp" not in script
    assert "T.if_then_else" in script
    outer = sch.get(sch.get_loops("conv2d_nchw")[0])
    assert (outer.kind, int(outer.extent.value)) == (ForKind.PARALLEL, 1 * 8 * 8 * 8)
    check_numeric(sch.mod["main"], lambda d, k, o: conv2d_reference(d, k))
    check_trace_roundtrip(func, sch)


def softmax(rows=6, cols=32):
    x = te.placeholder((rows, cols), name="x")
    return te.create_prim_func([x, topi.nn.softmax(x)])


def softmax_reference(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def schedule_softmax(func):
    """Every stage under the row loop of the output; the output row vectorized by 16."""
    sch = Schedule(func)
    row, col = sch.get_loops("T_softmax_norm")
    for stage in ("T_softmax_expsum", "T_softmax_exp", "T_softmax_maxelem"):
        sch.compute_at(sch.get_block(stage), row)
    _, inner = sch.split(col, factors=[None, 16])
    sch.vectorize(inner)
    sch.parallel(row)
    return sch


def test_softmax_reductions_under_row_loop():
    func = softmax()
    sch = schedule_softmax(func)
    row = sch.get(sch.get_loops("T_softmax_norm")[0]).loop_var
    for stage in ("T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum"):
        assert sch.get(sch.get_loops(stage)[0]).loop_var is row
    assert sch.get(sch.get_loops("T_softmax_norm")[-1]).kind == ForKind.VECTORIZED
    check_numeric(sch.mod["main"], lambda x, y: softmax_reference(x))
    check_trace_roundtrip(func, sch)
