"""Elementwise binary operators with numpy broadcasting.

``add(x, y)`` with ``x`` of shape ``(4, 1)`` and ``y`` of shape ``(5,)`` is a ``(4, 5)``
tensor computed by block ``T_add`` as ``x[v_ax0, 0] + y[v_ax1]``. A Python number or a
scalar expression may stand for either operand; two scalars give a scalar expression.
"""
from __future__ import annotations

from ..ir.errors import IRError
from ..te.tensor import Tensor
from ..tir import op as tir_op
from ..tir.expr import (EQ, GE, GT, LE, LT, NE, Div, FloorDiv, FloorMod, binary, convert)
from .utils import ax_compute, const_int


def broadcast_shape(lhs_shape, rhs_shape, where: str = "broadcast") -> tuple:
    """numpy's broadcast of two shapes (aligned from the right)."""
    ndim = max(len(lhs_shape), len(rhs_shape))
    lhs = (1,) * (ndim - len(lhs_shape)) + tuple(lhs_shape)
    rhs = (1,) * (ndim - len(rhs_shape)) + tuple(rhs_shape)
    out = []
    for a, b in zip(lhs, rhs):
        ca, cb = const_int(a), const_int(b)
        if ca == 1:
            out.append(convert(b))
        elif cb == 1 or a is b:
            out.append(convert(a))
        elif ca is not None and cb is not None and ca != cb:
            raise IRError(f"{where}: shapes {_show(lhs_shape)} and {_show(rhs_shape)} do not "
                          f"broadcast (dimension {ca} against {cb})")
        else:
            out.append(convert(a))
    return tuple(out)


def _show(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def broadcast_index(tensor: Tensor, out_shape, indices) -> tuple:
    """Indices into ``tensor`` for output element ``indices``: broadcast dims read 0."""
    offset = len(out_shape) - tensor.ndim
    result = []
    for dim, extent in enumerate(tensor.shape):
        out_extent = out_shape[offset + dim]
        stretched = const_int(extent) == 1 and const_int(out_extent) != 1
        result.append(convert(0, indices[offset + dim].dtype) if stretched
                      else indices[offset + dim])
    return tuple(result)


def broadcast_to(data: Tensor, shape) -> Tensor:
    shape = tuple(convert(s) for s in shape)
    out_shape = broadcast_shape(data.shape, shape, "broadcast_to")
    return ax_compute(out_shape, lambda idx: data[broadcast_index(data, out_shape, idx)],
                      "T_broadcast_to", "broadcast")


def _binary_op(name: str, fcombine):
    def op(lhs, rhs):
        if not isinstance(lhs, Tensor) and not isinstance(rhs, Tensor):
            return fcombine(convert(lhs), convert(rhs))
        if not isinstance(rhs, Tensor):
            return ax_compute(lhs.shape, lambda idx: fcombine(lhs[idx], rhs), f"T_{name}",
                              "elemwise")
        if not isinstance(lhs, Tensor):
            return ax_compute(rhs.shape, lambda idx: fcombine(lhs, rhs[idx]), f"T_{name}",
                              "elemwise")
        out_shape = broadcast_shape(lhs.shape, rhs.shape, name)
        return ax_compute(out_shape, lambda idx: fcombine(
            lhs[broadcast_index(lhs, out_shape, idx)],
            rhs[broadcast_index(rhs, out_shape, idx)]), f"T_{name}", "broadcast")

    op.__name__ = name
    op.__doc__ = (f"Elementwise ``{name}`` with numpy broadcasting; either side may be a "
                  f"scalar.\n\n    >>> topi.{name}(x, y)      # block T_{name}\n")
    return op


add = _binary_op("add", lambda a, b: a + b)
subtract = _binary_op("subtract", lambda a, b: a - b)
multiply = _binary_op("multiply", lambda a, b: a * b)
divide = _binary_op("divide", lambda a, b: binary(Div, a, b))
floor_divide = _binary_op("floor_divide", lambda a, b: binary(FloorDiv, a, b))
floor_mod = _binary_op("floor_mod", lambda a, b: binary(FloorMod, a, b))
maximum = _binary_op("maximum", tir_op.max)
minimum = _binary_op("minimum", tir_op.min)
power = _binary_op("power", tir_op.pow)
equal = _binary_op("equal", lambda a, b: binary(EQ, a, b))
not_equal = _binary_op("not_equal", lambda a, b: binary(NE, a, b))
less = _binary_op("less", lambda a, b: binary(LT, a, b))
less_equal = _binary_op("less_equal", lambda a, b: binary(LE, a, b))
greater = _binary_op("greater", lambda a, b: binary(GT, a, b))
greater_equal = _binary_op("greater_equal", lambda a, b: binary(GE, a, b))
