"""Selection operators: ``strided_slice`` (numpy's ``a[b:e:s]`` on chosen axes) and
``where`` (numpy's three-way select with broadcasting)."""
from __future__ import annotations

from ..ir.errors import IRError
from ..te.tensor import Tensor
from ..tir import op as tir_op
from ..tir.expr import cast, const
from .broadcast import broadcast_index, broadcast_shape
from .utils import ax_compute, const_int, normalize_axis


def slice_bounds(extent: int, begin: int, end: int, stride: int) -> tuple[int, int]:
    """``(first index, element count)`` of ``range(extent)[begin:end:stride]``; begin and
    end are clamped as numpy clamps them (ONNX's Slice follows the same rule)."""
    if stride == 0:
        raise IRError("strided_slice: a stride of 0 selects nothing; strides must be nonzero")
    picked = range(*slice(begin, end, stride).indices(extent))
    return picked.start, len(picked)


def strided_slice(a: Tensor, begin, end, strides=None, axes=None) -> Tensor:
    """``a[begin:end:strides]`` along ``axes`` (every axis from 0 when None); other axes are
    kept whole. Bounds are constants, clamped to the extent like numpy's.

    >>> strided_slice(x, [1], [-1], axes=[2])     # x[:, :, 1:-1]
    """
    axes = list(range(len(begin))) if axes is None else list(axes)
    strides = [1] * len(axes) if strides is None else list(strides)
    if not len(axes) == len(begin) == len(end) == len(strides):
        raise IRError(f"strided_slice: axes, begin, end and strides must have one length, "
                      f"found {len(axes)}, {len(begin)}, {len(end)}, {len(strides)}")
    starts, steps = [0] * a.ndim, [1] * a.ndim
    shape = list(a.shape)
    for axis, b, e, s in zip(axes, begin, end, strides):
        axis = normalize_axis(int(axis), a.ndim, "strided_slice")
        extent = const_int(a.shape[axis])
        if extent is None:
            raise IRError(f"strided_slice: axis {axis} needs a constant extent")
        starts[axis], count = slice_bounds(extent, int(b), int(e), int(s))
        steps[axis] = int(s)
        shape[axis] = const(count, a.shape[axis].dtype)

    def fcompute(idx):
        return a[tuple(i * steps[d] + starts[d] if (starts[d], steps[d]) != (0, 1) else i
                       for d, i in enumerate(idx))]
    return ax_compute(shape, fcompute, "T_strided_slice", "injective")


def where(condition: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """``x`` where ``condition`` holds, else ``y``; the three broadcast like numpy's."""
    if x.dtype != y.dtype:
        raise IRError(f"where: x and y must have one dtype, found {x.dtype} and {y.dtype}")
    shape = broadcast_shape(broadcast_shape(condition.shape, x.shape, "where"), y.shape,
                            "where")

    def fcompute(idx):
        cond = condition[broadcast_index(condition, shape, idx)]
        if condition.dtype != "bool":
            cond = cast("bool", cond)
        return tir_op.Select_(cond, x[broadcast_index(x, shape, idx)],
                              y[broadcast_index(y, shape, idx)])
    return ax_compute(shape, fcompute, "T_where", "broadcast")
