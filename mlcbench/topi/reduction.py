"""Reductions over axes: ``sum``, ``max``, ``min``, ``prod``, ``mean``, ``argmax``, ``argmin``.

``sum(x, axis=1)`` is block ``<x.name>_red`` over loops ``ax0, ...`` and reduce loops
``k1, ...`` (named after the reduced axis); ``keepdims=True`` keeps extent-1 axes.
"""
from __future__ import annotations

from ..te import comm_reducer, max as te_max, min as te_min, reduce_axis, sum as te_sum
from ..tir import op as tir_op
from ..tir.expr import Select, cast, const
from .utils import ax_compute, normalize_axes, prod as shape_prod


def _reduce(data, axis, keepdims: bool, reducer, name: str | None = None):
    axes = normalize_axes(axis, data.ndim, "reduce")
    raxes = {d: reduce_axis((0, data.shape[d]), name=f"k{d}") for d in axes}
    if keepdims:
        shape = [const(1) if d in raxes else s for d, s in enumerate(data.shape)]
    else:
        shape = [s for d, s in enumerate(data.shape) if d not in raxes]

    def fcompute(idx):
        source, pos = [], 0
        for d in range(data.ndim):
            if d in raxes:
                source.append(raxes[d].var)
                pos += keepdims
            else:
                source.append(idx[pos])
                pos += 1
        return reducer(data[tuple(source)], axis=[raxes[d] for d in axes])
    return ax_compute(shape, fcompute, name or f"{data.name}_red", "comm_reduce")


def sum(data, axis=None, keepdims: bool = False):  # noqa: A001
    """Sum over ``axis`` (an int, a tuple, or None for all axes)."""
    return _reduce(data, axis, keepdims, te_sum)


def max(data, axis=None, keepdims: bool = False):  # noqa: A001
    """Maximum over ``axis``."""
    return _reduce(data, axis, keepdims, te_max)


def min(data, axis=None, keepdims: bool = False):  # noqa: A001
    """Minimum over ``axis``."""
    return _reduce(data, axis, keepdims, te_min)


_prod = comm_reducer(lambda x, y: x * y, lambda t: const(1, t), name="prod")


def prod(data, axis=None, keepdims: bool = False):
    """Product over ``axis``."""
    return _reduce(data, axis, keepdims, _prod)


def mean(data, axis=None, keepdims: bool = False):
    """Sum over ``axis`` divided by the number of elements reduced (block ``T_divide``)."""
    axes = normalize_axes(axis, data.ndim, "mean")
    total = _reduce(data, axis, keepdims, te_sum)
    count = cast(data.dtype, shape_prod([data.shape[d] for d in axes]))
    return ax_compute(total.shape, lambda idx: total[idx] / count, "T_divide", "elemwise")


def _arg_reducer(better, name: str):
    """(index, value) reducer keeping the first index of the best value."""
    def fcombine(x, y):
        # Ties go to the lower index, so the result matches numpy's first occurrence in any order.
        keep = better(x[1], y[1]) | ((x[1] == y[1]) & (x[0] < y[0]))
        return Select(keep, x[0], y[0]), Select(keep, x[1], y[1])

    def fidentity(t_index, t_value):
        start = tir_op.min_value(t_value) if name == "argmax" else tir_op.max_value(t_value)
        # The identity loses to every real element: the worst value, and an index never read.
        return const(-1, t_index), start
    return comm_reducer(fcombine, fidentity, name=name)


_argmax = _arg_reducer(lambda a, b: a > b, "argmax")
_argmin = _arg_reducer(lambda a, b: a < b, "argmin")


def _arg_reduce(data, axis: int, keepdims: bool, reducer):
    (k,) = normalize_axes(axis, data.ndim, "argmax")
    red = _reduce_pairs(data, k, keepdims, reducer)
    return ax_compute(red[0].shape, lambda idx: red[0][idx], f"{data.name}_red", "comm_reduce")


def _reduce_pairs(data, axis: int, keepdims: bool, reducer):
    rk = reduce_axis((0, data.shape[axis]), name=f"k{axis}")
    shape = [const(1) if d == axis else s for d, s in enumerate(data.shape)
             if keepdims or d != axis]

    def fcompute(idx):
        source = list(idx) if keepdims else list(idx[:axis]) + [None] + list(idx[axis:])
        source[axis] = rk.var
        return reducer((rk.var, data[tuple(source)]), axis=rk)
    return ax_compute(shape, fcompute, f"{data.name}_red_temp", "comm_reduce")


def argmax(data, axis: int = 0, keepdims: bool = False):
    """Index (int32) of the first maximum along ``axis``."""
    return _arg_reduce(data, axis, keepdims, _argmax)


def argmin(data, axis: int = 0, keepdims: bool = False):
    """Index (int32) of the first minimum along ``axis``."""
    return _arg_reduce(data, axis, keepdims, _argmin)
