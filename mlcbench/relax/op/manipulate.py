"""Shape manipulation and indexing: ``reshape``, ``permute_dims``, ``concat``, ``split`` ...

These are injective: every output element reads a computable set of input elements.
"""
from __future__ import annotations

import math

from ... import topi
from ...ir.errors import IRError
from ...tir.expr import IntImm
from ..expr import ShapeExpr
from ..struct_info import TensorStructInfo, TupleStructInfo, dim_equal, dim_text, shape_text
from .registry import (broadcast_dims, check_arity, make_call, normalize_axis, register_op,
                       tensor_arg)


def _ints(values) -> tuple | None:
    if values is None:
        return None
    return tuple(int(v) for v in (values if isinstance(values, (list, tuple)) else [values]))


# -- permute_dims --------------------------------------------------------------------------

def _permute_infer(call):
    check_arity(call, 1)
    x = tensor_arg(call, 0, "x")
    axes = call.attrs.axes
    if axes is None:
        axes = tuple(range(x.ndim - 1, -1, -1))
    elif x.ndim >= 0 and sorted(normalize_axis(call.op.name, a, x.ndim) for a in axes) \
            != list(range(x.ndim)):
        raise IRError(f"relax.permute_dims: axes {list(axes)} are not a permutation of "
                      f"the {x.ndim} axes of the input")
    if x.dims is None:
        return TensorStructInfo(None, x.dtype, x.ndim)
    return TensorStructInfo([x.dims[a] for a in axes], x.dtype)


register_op("relax.permute_dims", _permute_infer, "injective",
            lambda bb, call: bb.call_te(topi.transpose, call.args[0], call.attrs.axes,
                                        primfunc_name_hint="transpose"))


def permute_dims(x, axes=None):
    """Reorder axes (``axes=None`` reverses them): ``permute_dims(w, [1, 0])``."""
    return make_call("relax.permute_dims", (x,), {"axes": _ints(axes)})


# -- reshape / flatten ---------------------------------------------------------------------

def _resolve_new_shape(op_name, dims, new_dims) -> list:
    unknown = [k for k, d in enumerate(new_dims) if isinstance(d, IntImm) and d.value == -1]
    if len(unknown) > 1:
        raise IRError(f"{op_name}: at most one dimension may be -1, found {shape_text(new_dims)}")
    static_in = [d.value for d in dims] if dims and all(isinstance(d, IntImm) for d in dims) \
        else None
    known = [d.value for d in new_dims if isinstance(d, IntImm) and d.value != -1]
    static_out = len(known) == len(new_dims) - len(unknown)
    new_dims = list(new_dims)
    if static_in is not None and static_out:
        total, rest = math.prod(static_in), math.prod(known)
        if unknown:
            if rest == 0 or total % rest:
                raise IRError(f"{op_name}: cannot reshape {shape_text(dims)} to "
                              f"{shape_text(new_dims)}")
            new_dims[unknown[0]] = IntImm("int64", total // rest)
        elif total != rest:
            raise IRError(f"{op_name}: cannot reshape {shape_text(dims)} ({total} elements) "
                          f"to {shape_text(new_dims)} ({rest} elements)")
    return new_dims


def _reshape_infer(call):
    check_arity(call, 2)
    x = tensor_arg(call, 0, "x")
    shape = call.args[1]
    if not hasattr(shape, "values"):
        raise IRError(f"relax.reshape: the new shape must be a shape such as R.shape([2, 3]), "
                      f"found {type(shape).__name__}")
    return TensorStructInfo(_resolve_new_shape(call.op.name, x.dims, shape.values), x.dtype)


def _reshape_legalize(bb, call):
    # The inferred shape, with any -1 already resolved.
    dims = call.struct_info.dims
    return bb.call_te(topi.reshape, call.args[0], list(dims), primfunc_name_hint="reshape")


register_op("relax.reshape", _reshape_infer, "injective", _reshape_legalize)


def reshape(x, shape):
    """``reshape(x, (2, -1))``; one dimension may be -1 (inferred)."""
    if not isinstance(shape, ShapeExpr):
        shape = ShapeExpr(list(shape) if isinstance(shape, (list, tuple)) else [shape])
    return make_call("relax.reshape", (x, shape))


def _flatten_infer(call):
    check_arity(call, 1)
    x = tensor_arg(call, 0, "x")
    if x.dims is None:
        return TensorStructInfo(None, x.dtype, 1)
    size = IntImm("int64", 1)
    for d in x.dims:
        size = IntImm("int64", size.value * d.value) if isinstance(d, IntImm) and \
            isinstance(size, IntImm) else size * d
    return TensorStructInfo([size], x.dtype)


register_op("relax.flatten", _flatten_infer, "injective",
            lambda bb, call: bb.call_te(topi.reshape, call.args[0],
                                        list(call.struct_info.dims),
                                        primfunc_name_hint="reshape"))


def flatten(x):
    """All dimensions into one, as TVM's ``relax.op.flatten``."""
    return make_call("relax.flatten", (x,))


# -- concat / split ------------------------------------------------------------------------

def _concat_infer(call):
    check_arity(call, 1)
    fields = call.args[0].struct_info
    if not isinstance(fields, TupleStructInfo) or not fields.fields:
        raise IRError("relax.concat: expects a non-empty tuple of tensors")
    tensors = [f for f in fields.fields if isinstance(f, TensorStructInfo)]
    if len(tensors) != len(fields.fields) or any(t.dims is None for t in tensors):
        raise IRError("relax.concat: every field must be a tensor of known shape")
    first = tensors[0]
    axis = normalize_axis(call.op.name, call.attrs.axis, first.ndim)
    total = first.dims[axis]
    for t in tensors[1:]:
        if t.ndim != first.ndim or t.dtype != first.dtype or not all(
                dim_equal(a, b) for k, (a, b) in enumerate(zip(t.dims, first.dims)) if k != axis):
            raise IRError(f"relax.concat: shapes {shape_text(first.dims)} and "
                          f"{shape_text(t.dims)} differ outside axis {axis}")
        total = total + t.dims[axis]
    dims = list(first.dims)
    dims[axis] = total
    return TensorStructInfo(dims, first.dtype)


register_op("relax.concat", _concat_infer, "injective",
            lambda bb, call: bb.call_te(topi.concatenate, call.args[0], call.attrs.axis,
                                        primfunc_name_hint="concatenate"))


def concat(tensors, axis: int = 0):
    """Join a tuple of tensors along ``axis``."""
    return make_call("relax.concat", (tuple(tensors) if isinstance(tensors, list) else tensors,),
                     {"axis": int(axis)})


def _split_infer(call):
    x = tensor_arg(call, 0, "x")
    axis = normalize_axis(call.op.name, call.attrs.axis, x.ndim)
    extent = x.dims[axis] if x.dims is not None else None
    spec = call.attrs.indices_or_sections
    if extent is None or not isinstance(extent, IntImm):
        raise IRError("relax.split: the split axis needs a constant extent")
    if isinstance(spec, int):
        if extent.value % spec:
            raise IRError(f"relax.split: axis {axis} of extent {extent.value} does not split "
                          f"into {spec} equal sections")
        bounds = [extent.value // spec * k for k in range(spec + 1)]
    else:
        bounds = [0, *spec, extent.value]
    fields = []
    for lo, hi in zip(bounds, bounds[1:]):
        dims = list(x.dims)
        # Decreasing split points give empty sections, as numpy's split does.
        dims[axis] = IntImm("int64", max(hi - lo, 0))
        fields.append(TensorStructInfo(dims, x.dtype))
    return TupleStructInfo(fields)


register_op("relax.split", _split_infer, "injective",
            lambda bb, call: bb.call_te(topi.split, call.args[0],
                                        call.attrs.indices_or_sections, call.attrs.axis,
                                        primfunc_name_hint="split"))


def split(x, indices_or_sections, axis: int = 0):
    """``split(x, 3)`` into equal sections or ``split(x, [2, 5])`` at indices: a tuple."""
    spec = indices_or_sections if isinstance(indices_or_sections, int) \
        else _ints(indices_or_sections)
    return make_call("relax.split", (x,), {"indices_or_sections": spec, "axis": int(axis)})


# -- squeeze / expand_dims / take ----------------------------------------------------------

def _squeeze_infer(call):
    x = tensor_arg(call, 0, "x")
    if x.dims is None:
        raise IRError("relax.squeeze: the input shape must be known")
    axes = call.attrs.axis
    if axes is None:
        keep = [d for d in x.dims if not (isinstance(d, IntImm) and d.value == 1)]
        return TensorStructInfo(keep, x.dtype)
    axes = {normalize_axis(call.op.name, a, x.ndim) for a in axes}
    for a in axes:
        if not (isinstance(x.dims[a], IntImm) and x.dims[a].value == 1):
            raise IRError(f"relax.squeeze: axis {a} has extent {dim_text(x.dims[a])}, not 1")
    return TensorStructInfo([d for k, d in enumerate(x.dims) if k not in axes], x.dtype)


register_op("relax.squeeze", _squeeze_infer, "injective",
            lambda bb, call: bb.call_te(topi.squeeze, call.args[0], call.attrs.axis,
                                        primfunc_name_hint="squeeze"))


def squeeze(x, axis=None):
    """Remove extent-1 axes (all of them, or those in ``axis``)."""
    return make_call("relax.squeeze", (x,), {"axis": _ints(axis)})


def _expand_dims_infer(call):
    x = tensor_arg(call, 0, "x")
    if x.dims is None:
        raise IRError("relax.expand_dims: the input shape must be known")
    out_ndim = x.ndim + len(call.attrs.axis)
    axes = sorted(normalize_axis(call.op.name, a, out_ndim) for a in call.attrs.axis)
    dims, rest = [], iter(x.dims)
    for k in range(out_ndim):
        dims.append(IntImm("int64", 1) if k in axes else next(rest))
    return TensorStructInfo(dims, x.dtype)


def _expand_dims_te(x, axes):
    out_ndim = x.ndim + len(axes)
    # Ascending, so each position already counts the axes inserted before it.
    for a in sorted(a + out_ndim if a < 0 else a for a in axes):
        x = topi.expand_dims(x, a)
    return x


register_op("relax.expand_dims", _expand_dims_infer, "injective",
            lambda bb, call: bb.call_te(_expand_dims_te, call.args[0], call.attrs.axis,
                                        primfunc_name_hint="expand_dims"))


def expand_dims(x, axis):
    """Insert extent-1 axes at the positions ``axis`` (an int or a list)."""
    return make_call("relax.expand_dims", (x,), {"axis": _ints(axis)})


def _take_infer(call):
    check_arity(call, 2)
    x, idx = tensor_arg(call, 0, "x"), tensor_arg(call, 1, "indices")
    if idx.dtype and not idx.dtype.startswith(("int", "uint")):
        raise IRError(f"relax.take: indices must be integers, found {idx.dtype}")
    if x.dims is None or idx.dims is None:
        raise IRError("relax.take: the shapes of data and indices must be known")
    axis = call.attrs.axis
    if axis is None:
        return TensorStructInfo(idx.dims, x.dtype)
    axis = normalize_axis(call.op.name, axis, x.ndim)
    return TensorStructInfo(x.dims[:axis] + idx.dims + x.dims[axis + 1:], x.dtype)


register_op("relax.take", _take_infer, "injective",
            lambda bb, call: bb.call_te(topi.take, call.args[0], call.args[1], call.attrs.axis,
                                        primfunc_name_hint="take"))


def take(x, indices, axis=None):
    """Gather ``x`` at ``indices`` along ``axis`` (of the flattened ``x`` when None)."""
    return make_call("relax.take", (x, indices), {"axis": None if axis is None else int(axis)})


# -- broadcast_to --------------------------------------------------------------------------

def _broadcast_to_infer(call):
    check_arity(call, 2)
    x = tensor_arg(call, 0, "x")
    shape = call.args[1]
    if not hasattr(shape, "values"):
        raise IRError(f"relax.broadcast_to: the target shape must be a shape such as "
                      f"R.shape([2, 3]), found {type(shape).__name__}")
    target = tuple(shape.values)
    if x.dims is None:
        return TensorStructInfo(target, x.dtype)
    if x.ndim > len(target):
        raise IRError(f"relax.broadcast_to: cannot broadcast {shape_text(x.dims)} to the "
                      f"lower-rank shape {shape_text(target)}")
    dims = broadcast_dims(call.op.name, x.dims, target)
    for got, want in zip(dims, target):
        if not dim_equal(got, want):
            raise IRError(f"relax.broadcast_to: {shape_text(x.dims)} broadcasts to "
                          f"{shape_text(dims)}, not to {shape_text(target)}")
    return TensorStructInfo(target, x.dtype)


register_op("relax.broadcast_to", _broadcast_to_infer, "broadcast",
            lambda bb, call: bb.call_te(topi.broadcast_to, call.args[0],
                                        list(call.struct_info.dims),
                                        primfunc_name_hint="broadcast_to"))


def broadcast_to(x, shape):
    """``x`` repeated along extent-1 (or missing leading) axes to ``shape``."""
    if not isinstance(shape, ShapeExpr):
        shape = ShapeExpr(list(shape) if isinstance(shape, (list, tuple)) else [shape])
    return make_call("relax.broadcast_to", (x, shape))
