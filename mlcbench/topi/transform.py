"""Shape and layout operators: reshape, transpose, concatenate, split, squeeze,
expand_dims, take. Each is one block named like TVM's (``T_reshape``, ``T_transpose``...)
over loops ``ax0, ax1, ...``.
"""
from __future__ import annotations

from ..ir.errors import IRError
from ..te.tensor import Tensor
from ..tir import op as tir_op
from ..tir.expr import cast, const, convert
from .utils import ax_compute, const_int, normalize_axes, normalize_axis, prod


def _infer_shape(data: Tensor, newshape) -> list:
    newshape = [convert(s) for s in newshape]
    unknown = [d for d, s in enumerate(newshape) if const_int(s) == -1]
    total = const_int(prod(data.shape))
    if len(unknown) > 1:
        raise IRError(f"reshape: at most one dimension may be -1, found {len(unknown)}")
    if unknown:
        known = const_int(prod([s for d, s in enumerate(newshape) if d != unknown[0]]))
        if total is None or known is None or total % known:
            raise IRError(f"reshape: cannot infer -1 for {total} elements into {newshape}")
        # The inferred extent takes the dtype of the given ones so the shape stays uniform.
        newshape[unknown[0]] = const(total // known, newshape[0].dtype)
    new_total = const_int(prod(newshape))
    if total is not None and new_total is not None and total != new_total:
        raise IRError(f"reshape: cannot reshape {total} elements into shape "
                      f"{[int(s) for s in newshape]} ({new_total} elements)")
    return newshape


def _ravel(indices, shape):
    flat = None
    for i, extent in zip(indices, shape):
        flat = i if flat is None else flat * extent + i
    return flat if flat is not None else convert(0)


def _unravel(flat, shape) -> tuple:
    idx = []
    for extent in reversed(shape[1:]):
        idx.append(tir_op.floormod(flat, extent))
        flat = tir_op.floordiv(flat, extent)
    idx.append(flat)
    return tuple(reversed(idx))


def reshape(a: Tensor, newshape) -> Tensor:
    """Same elements in row-major order, new shape (one ``-1`` is inferred)."""
    shape = _infer_shape(a, newshape)
    # Through one flat row-major index: any reshape maps elements in the same order.
    return ax_compute(shape, lambda idx: a[_unravel(_ravel(idx, shape), a.shape)],
                      "T_reshape", "injective")


def transpose(a: Tensor, axes=None) -> Tensor:
    """Permute axes: ``out.shape[d] = a.shape[axes[d]]``; default reverses them."""
    axes = list(range(a.ndim))[::-1] if axes is None else [
        normalize_axis(int(x), a.ndim, "transpose") for x in axes]
    if sorted(axes) != list(range(a.ndim)):
        raise IRError(f"transpose: axes must permute 0..{a.ndim - 1}, found {axes}")
    shape = [a.shape[d] for d in axes]

    def fcompute(idx):
        source = [None] * a.ndim
        for out_d, in_d in enumerate(axes):
            source[in_d] = idx[out_d]
        return a[tuple(source)]
    return ax_compute(shape, fcompute, "T_transpose", "injective")


def concatenate(tensors, axis: int = 0) -> Tensor:
    """Join tensors along ``axis``; other extents must agree."""
    tensors = list(tensors)
    axis = normalize_axis(axis, tensors[0].ndim, "concatenate")
    for t in tensors[1:]:
        if t.ndim != tensors[0].ndim:
            raise IRError(f"concatenate: ranks differ ({tensors[0].ndim} and {t.ndim})")
    offsets, total = [], convert(0)
    for t in tensors:
        offsets.append(total)
        total = total + t.shape[axis]
    shape = list(tensors[0].shape)
    shape[axis] = total

    def fcompute(idx):
        def load(k):
            source = list(idx)
            source[axis] = idx[axis] - offsets[k]
            return tensors[k][tuple(source)]
        value = load(len(tensors) - 1)
        # Nested from the last input outwards: the outermost test picks the first input.
        for k in range(len(tensors) - 2, -1, -1):
            value = tir_op.if_then_else(idx[axis] < offsets[k + 1], load(k), value)
        return value
    return ax_compute(shape, fcompute, "T_concat", "injective")


def strided_slice_axis(a: Tensor, axis: int, begin, end, name: str) -> Tensor:
    shape = list(a.shape)
    shape[axis] = convert(end - begin)

    def fcompute(idx):
        source = list(idx)
        source[axis] = idx[axis] + begin
        return a[tuple(source)]
    return ax_compute(shape, fcompute, name, "injective")


def split(ary: Tensor, indices_or_sections, axis: int = 0) -> list:
    """Split along ``axis`` into equal sections (an int) or at the given indices."""
    axis = normalize_axis(axis, ary.ndim, "split")
    extent = const_int(ary.shape[axis])
    if isinstance(indices_or_sections, int):
        sections = indices_or_sections
        if extent % sections:
            raise IRError(f"split: axis {axis} of extent {extent} does not divide into "
                          f"{sections} equal sections")
        points = [extent // sections * s for s in range(1, sections)]
        name = "T_split_sections"
    else:
        points = [int(p) for p in indices_or_sections]
        name = "T_split"
    bounds = [0] + points + [extent]
    # Decreasing indices give empty sections, as numpy's split does.
    return [strided_slice_axis(ary, axis, lo, max(lo, hi), name)
            for lo, hi in zip(bounds[:-1], bounds[1:])]


def squeeze(a: Tensor, axis=None) -> Tensor:
    """Drop extent-1 axes (all of them, or those listed)."""
    if axis is None:
        axes = [d for d, s in enumerate(a.shape) if const_int(s) == 1]
    else:
        axes = normalize_axes(axis, a.ndim, "squeeze")
        for d in axes:
            if const_int(a.shape[d]) != 1:
                raise IRError(f"squeeze: axis {d} has extent {a.shape[d]}, expected 1")
    kept = [d for d in range(a.ndim) if d not in axes]

    def fcompute(idx):
        # The dropped axes have extent 1, so they are read at index 0.
        source = [const(0, a.shape[d].dtype) for d in range(a.ndim)]
        for out_d, in_d in enumerate(kept):
            source[in_d] = idx[out_d]
        return a[tuple(source)]
    return ax_compute([a.shape[d] for d in kept], fcompute, "T_squeeze", "injective")


def expand_dims(a: Tensor, axis: int, num_newaxis: int = 1) -> Tensor:
    """Insert ``num_newaxis`` extent-1 axes at ``axis`` (negative counts from the end)."""
    axis = axis + a.ndim + 1 if axis < 0 else axis
    if not 0 <= axis <= a.ndim:
        raise IRError(f"expand_dims: axis must lie in [{-a.ndim - 1}, {a.ndim}], found {axis}")
    shape = list(a.shape[:axis]) + [const(1)] * num_newaxis + list(a.shape[axis:])

    def fcompute(idx):
        return a[tuple(idx[:axis]) + tuple(idx[axis + num_newaxis:])]
    return ax_compute(shape, fcompute, "T_expand_dims", "broadcast")


def take(a: Tensor, indices, axis=None, mode: str = "clip") -> Tensor:
    """Gather along ``axis`` (flattened when None) at ``indices``, a tensor or an int.

    ``mode="clip"`` clamps out-of-range indices, ``"wrap"`` wraps them, ``"fast"`` trusts them.
    """
    if axis is None:
        a = reshape(a, [-1])
        axis = 0
    axis = normalize_axis(axis, a.ndim, "take")
    extent = a.shape[axis]
    index_shape = list(indices.shape) if isinstance(indices, Tensor) else []

    def fix(index):
        # Indices may be int64 while shapes are int32 (or the reverse): compare in the shape's type.
        index = cast(extent.dtype, index)
        if mode == "clip":
            return tir_op.min(tir_op.max(index, 0), extent - 1)
        if mode == "wrap":
            return tir_op.floormod(index, extent)
        return index

    def fcompute(idx):
        n = len(index_shape)
        pos = idx[axis:axis + n]
        raw = indices[tuple(pos)] if isinstance(indices, Tensor) else convert(indices)
        source = tuple(idx[:axis]) + (fix(raw),) + tuple(idx[axis + n:])
        return a[source]
    shape = list(a.shape[:axis]) + index_shape + list(a.shape[axis + 1:])
    return ax_compute(shape, fcompute, "T_take", "injective")
