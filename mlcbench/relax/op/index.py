"""Indexing: ``strided_slice`` (numpy's ``x[b:e:s]`` on chosen axes).

>>> strided_slice(x, axes=[1], begin=[0], end=[-1], strides=[2])   # x[:, 0:-1:2]
"""
from __future__ import annotations

from ... import topi
from ...ir.errors import IRError
from ...tir.expr import IntImm
from ...topi.indexing import slice_bounds
from ..struct_info import TensorStructInfo, dim_text
from .registry import check_arity, make_call, normalize_axis, register_op, tensor_arg


def _ints(values, what: str) -> tuple:
    values = values if isinstance(values, (list, tuple)) else [values]
    try:
        return tuple(int(v) for v in values)
    except (TypeError, ValueError):
        raise IRError(f"relax.strided_slice: {what} must be integers, found {values!r}") from None


def _strided_slice_infer(call):
    check_arity(call, 1)
    x = tensor_arg(call, 0, "x")
    a = call.attrs
    if x.dims is None:
        return TensorStructInfo(None, x.dtype, x.ndim)
    dims = list(x.dims)
    for axis, b, e, s in zip(a.axes, a.begin, a.end, a.strides):
        axis = normalize_axis(call.op.name, axis, x.ndim)
        if not isinstance(dims[axis], IntImm):
            raise IRError(f"relax.strided_slice: axis {axis} has extent "
                          f"{dim_text(dims[axis])}; slicing needs a constant extent")
        if s == 0:
            raise IRError(f"relax.strided_slice: stride 0 on axis {axis}; strides must be "
                          f"nonzero")
        dims[axis] = IntImm("int64", slice_bounds(dims[axis].value, b, e, s)[1])
    return TensorStructInfo(dims, x.dtype)


register_op("relax.strided_slice", _strided_slice_infer, "injective",
            lambda bb, call: bb.call_te(topi.strided_slice, call.args[0], call.attrs.begin,
                                        call.attrs.end, call.attrs.strides, call.attrs.axes,
                                        primfunc_name_hint="strided_slice"))


def strided_slice(x, axes, begin, end, strides=None):
    """``x[begin:end:strides]`` along each of ``axes``; bounds clamp like numpy's, negative
    values count from the end, other axes are kept whole."""
    axes, begin, end = _ints(axes, "axes"), _ints(begin, "begin"), _ints(end, "end")
    strides = (1,) * len(axes) if strides is None else _ints(strides, "strides")
    if not len(axes) == len(begin) == len(end) == len(strides):
        raise IRError(f"relax.strided_slice: axes, begin, end and strides must have one "
                      f"length, found {len(axes)}, {len(begin)}, {len(end)}, {len(strides)}")
    if len(set(axes)) != len(axes):
        raise IRError(f"relax.strided_slice: axes {list(axes)} repeat an axis")
    return make_call("relax.strided_slice", (x,),
                     {"axes": axes, "begin": begin, "end": end, "strides": strides})
