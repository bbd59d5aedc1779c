"""Constant padding (``nn.pad``), the ``pad_temp`` stage of convolutions and pooling."""
from __future__ import annotations

from ...ir.errors import IRError
from ...te.operation import compute, compute_with_axis_names
from ...te.tensor import Tensor
from ...tir import op as tir_op
from ...tir.expr import PrimExpr, const, convert
from ..utils import const_int


def pad(data: Tensor, pad_before, pad_after=None, pad_value=0.0, name: str = "PadInput",
        attrs=None, axis_names=None) -> Tensor:
    """``data`` with ``pad_before[d]`` / ``pad_after[d]`` elements of ``pad_value`` added
    on each side of dimension ``d``.

    >>> nn.pad(x, (0, 0, 1, 1), (0, 0, 1, 1), name="pad_temp")   # NCHW, one pixel
    """
    n = data.ndim
    pad_after = pad_before if pad_after is None else pad_after
    if len(pad_before) != n or len(pad_after) != n:
        raise IRError(f"pad: expected {n} pad widths per side for a rank-{n} tensor, found "
                      f"{len(pad_before)} before and {len(pad_after)} after")
    before = [convert(p) for p in pad_before]
    after = [convert(p) for p in pad_after]
    out_shape = [data.shape[d] + before[d] + after[d] for d in range(n)]
    value = pad_value if isinstance(pad_value, PrimExpr) else const(pad_value, data.dtype)

    def fpad(*indices):
        conditions, source = [], []
        for d in range(n):
            if const_int(before[d]) == 0 and const_int(after[d]) == 0:
                source.append(indices[d])
                continue
            source.append(indices[d] - before[d])
            conditions.append(indices[d] >= before[d])
            conditions.append(indices[d] < data.shape[d] + before[d])
        if not conditions:
            return data[tuple(source)]
        return tir_op.if_then_else(tir_op.all(*conditions), data[tuple(source)], value)

    if axis_names is not None:
        return compute_with_axis_names(out_shape, fpad, axis_names, name, "injective", attrs)
    return compute(out_shape, fpad, name=name, tag="injective", attrs=attrs)
