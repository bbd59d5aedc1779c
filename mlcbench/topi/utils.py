"""Small helpers shared by the operators: constant shapes, axis normalization, naming."""
from __future__ import annotations

from ..ir.errors import IRError
from ..te.operation import compute_with_axis_names
from ..tir.expr import IntImm, PrimExpr, convert


def ax_compute(shape, fcompute, name: str, tag: str = "", attrs=None):
    """A compute whose loops are named ``ax0, ax1, ...`` (TVM's C++ operators) and whose
    ``fcompute`` receives the index tuple: ``fcompute(indices)``."""
    names = [f"ax{k}" for k in range(len(shape))]
    return compute_with_axis_names(shape, lambda *idx: fcompute(idx), names, name, tag, attrs)


def const_int(value) -> int | None:
    """The Python int of a constant extent, or None when it is symbolic."""
    if isinstance(value, int):
        return value
    if isinstance(value, IntImm):
        return value.value
    return None


def get_const_tuple(shape) -> tuple:
    """Shape as Python ints (symbolic dims stay expressions)."""
    return tuple(const_int(s) if const_int(s) is not None else s for s in shape)


def normalize_axis(axis: int, ndim: int, where: str) -> int:
    if not -ndim <= axis < ndim:
        raise IRError(f"{where}: axis {axis} is out of range for a tensor of rank {ndim}")
    return axis + ndim if axis < 0 else axis


def normalize_axes(axis, ndim: int, where: str) -> list:
    """``None`` means every axis; ints may be negative. Sorted, unique."""
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, int) else list(axis)
    return sorted({normalize_axis(int(a), ndim, where) for a in axes})


def as_expr(value, dtype=None) -> PrimExpr:
    return convert(value, dtype)


def prod(values):
    result = convert(1)
    for v in values:
        result = result * v
    return result
