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


def mirror_pad(data: Tensor, pad_before, pad_after, mode: str = "reflect",
               name: str = "MirrorPadInput") -> Tensor:
    """Pad with the tensor's own elements, as numpy's ``np.pad`` modes: ``"edge"`` repeats
    the border element, ``"reflect"`` mirrors about it (the border is not repeated; each
    width must be below the extent)."""
    if mode not in ("edge", "reflect"):
        raise IRError(f"mirror_pad: mode is 'edge' or 'reflect', found {mode!r}")
    n = data.ndim
    extents = [const_int(s) for s in data.shape]
    for d in range(n):
        if mode == "reflect" and extents[d] is not None and \
                max(pad_before[d], pad_after[d]) >= max(extents[d], 1) and extents[d] > 1:
            raise IRError(f"mirror_pad: reflect widths ({pad_before[d]}, {pad_after[d]}) must "
                          f"be below the extent {extents[d]} of axis {d}")
    out_shape = [data.shape[d] + pad_before[d] + pad_after[d] for d in range(n)]

    def source(d, index):
        if pad_before[d] == 0 and pad_after[d] == 0:
            return index
        last = data.shape[d] - 1
        i = index - pad_before[d]
        if mode == "edge":
            return tir_op.min(tir_op.max(i, const(0, i.dtype)), last)
        i = tir_op.Select_(i < 0, -i, i)
        return tir_op.Select_(i > last, last * 2 - i, i)

    return compute(out_shape, lambda *idx: data[tuple(source(d, i) for d, i in enumerate(idx))],
                   name=name, tag="injective")
