"""Templates of matrix products for x86 CPUs: ``dense.x86`` and ``dense_pack.x86``.

Both compute ``out[i, j] = sum_k data[i, k] * W[j, k]`` (TVM's dense, weight (N, K)),
or ``data[i, k] * W[k, j]`` when the workload says ``weight_layout="KN"`` -- what
``R.matmul(x, R.permute_dims(w))`` becomes once the transpose is its own kernel. The
knobs follow TVM's x86 schedules: split the rows (``tile_y``), the columns
(``tile_x``, whose inner factor is the vector) and the reduction (``tile_k``), run the
reduction outside the register tile, unroll the tile's rows, make the outer tiles
parallel. ``dense_pack.x86`` first copies the weight into panels as wide as the vector
tile (``packed_weight[j // bn, k, j % bn]``), so the vector loop reads contiguous memory
whatever the weight's layout::

    task = autotvm.task.create("dense_pack.x86", args=(
        ("TENSOR", (32, 64), "float32"), ("TENSOR", (128, 64), "float32"), None, "float32"))
"""
from __future__ import annotations

from ... import te, topi
from ...ir.errors import TuningError
from ..task import get_config, template
from .workload import placeholder_of

WEIGHT_LAYOUTS = ("NK", "KN")

# The widest vector tile a knob may pick (four AVX-512 registers of float32).
MAX_VECTOR_TILE = 64


def _operands(name: str, data, weight, bias, weight_layout: str):
    if weight_layout not in WEIGHT_LAYOUTS:
        raise TuningError(f"{name}: weight_layout must be one of {WEIGHT_LAYOUTS}, found "
                          f"{weight_layout!r}")
    if bias is not None:
        raise TuningError(f"{name}: the bias is an epilogue of the kernel, not an operand of "
                          f"the template; pass None, found {bias!r}")
    A = placeholder_of(data, "data", name)
    W = placeholder_of(weight, "weight", name)
    k_extent = int(A.shape[1])
    n_extent = int(W.shape[0] if weight_layout == "NK" else W.shape[1])
    w_k = int(W.shape[1] if weight_layout == "NK" else W.shape[0])
    if w_k != k_extent:
        raise TuningError(f"{name}: data has {k_extent} columns but the {weight_layout} "
                          f"weight of shape {tuple(W.shape)} reduces over {w_k}")
    return A, W, int(A.shape[0]), n_extent, k_extent


def _define_tiles(cfg, rows: int, cols: int, reduce: int) -> None:
    cfg.define_split("tile_y", rows, num_outputs=2, max_factor=8)
    cfg.define_split("tile_x", cols, num_outputs=2, max_factor=MAX_VECTOR_TILE)
    cfg.define_split("tile_k", reduce, num_outputs=2, max_factor=16)
    cfg.define_knob("unroll_y", [1, 0])
    cfg.define_knob("parallel", [0, 1])


def _schedule_tiles(cfg, s, C) -> None:
    """``for yo, xo (parallel?), ko, ki, yi (unrolled?), xi (vector)``."""
    y, x = s[C].op.axis
    (k,) = s[C].op.reduce_axis
    yo, yi = cfg["tile_y"].apply(s, C, y)
    xo, xi = cfg["tile_x"].apply(s, C, x)
    ko, ki = cfg["tile_k"].apply(s, C, k)
    # The reduction outside the tile, so each step updates yi rows of xi-wide accumulators.
    s[C].reorder(yo, xo, ko, ki, yi, xi)
    if cfg["unroll_y"].val:
        s[C].unroll(yi)
    s[C].vectorize(xi)
    if cfg["parallel"].val:
        s[C].parallel(s[C].fuse(yo, xo))


@template("dense.x86")
def dense_nopack(data, weight, bias=None, out_dtype="float32", weight_layout="NK"):
    """The weight read in place (TVM's ``dense_nopack.x86``, here ``dense.x86``)."""
    A, W, rows, cols, reduce = _operands("dense.x86", data, weight, bias, weight_layout)
    C = topi.nn.matmul(A, W, out_dtype=out_dtype, transpose_b=weight_layout == "NK")
    cfg = get_config()
    _define_tiles(cfg, rows, cols, reduce)
    cfg.add_flop(2 * rows * cols * reduce)
    s = te.create_schedule(C.op)
    _schedule_tiles(cfg, s, C)
    return s, [A, W, C]


@template("dense_pack.x86")
def dense_pack(data, weight, bias=None, out_dtype="float32", weight_layout="NK"):
    """The weight packed into ``tile_x``-wide panels first."""
    A, W, rows, cols, reduce = _operands("dense_pack.x86", data, weight, bias, weight_layout)
    cfg = get_config()
    _define_tiles(cfg, rows, cols, reduce)
    cfg.add_flop(2 * rows * cols * reduce)
    # Panels as wide as the vector tile, so each vector load reads one panel row.
    bn = cfg["tile_x"].size[-1]
    if weight_layout == "NK":
        packed = te.compute((cols // bn, reduce, bn), lambda j0, k, j1: W[j0 * bn + j1, k],
                            name="packed_weight")
    else:
        packed = te.compute((cols // bn, reduce, bn), lambda j0, k, j1: W[k, j0 * bn + j1],
                            name="packed_weight")
    k = te.reduce_axis((0, reduce), name="k")
    C = te.compute((rows, cols), lambda i, j: te.sum(
        A[i, k].astype(out_dtype) * packed[j // bn, k, j % bn].astype(out_dtype), axis=k),
        name="T_dense_pack", tag="dense_pack")
    s = te.create_schedule(C.op)
    _schedule_tiles(cfg, s, C)
    j0, _, j1 = s[packed].op.axis
    s[packed].vectorize(j1)
    if cfg["parallel"].val:
        s[packed].parallel(j0)
    return s, [A, W, C]
