"""Reductions (``sum``, ``mean``, ``max``, ``min``) and ``matmul``."""
from __future__ import annotations

from ... import topi
from ...ir.errors import IRError
from ...tir.expr import IntImm
from ..struct_info import TensorStructInfo, shape_text
from .registry import (broadcast_dims, check_arity, make_call, normalize_axis, register_op,
                       tensor_arg)


def _reduce_infer(call):
    check_arity(call, 1)
    x = tensor_arg(call, 0, "x")
    axes = call.attrs.axis
    keepdims = call.attrs.keepdims
    if x.dims is None:
        ndim = -1 if x.ndim < 0 else (x.ndim if keepdims else
                                      (0 if axes is None else x.ndim - len(axes)))
        return TensorStructInfo(None, x.dtype, ndim)
    reduced = set(range(x.ndim)) if axes is None else \
        {normalize_axis(call.op.name, a, x.ndim) for a in axes}
    one = IntImm("int64", 1)
    dims = [one if k in reduced else d for k, d in enumerate(x.dims)
            if keepdims or k not in reduced]
    return TensorStructInfo(dims, x.dtype)


def _define_reduce(name: str, topi_func):
    op_name = f"relax.{name}"

    def legalize(bb, call):
        return bb.call_te(topi_func, call.args[0], call.attrs.axis, call.attrs.keepdims,
                          primfunc_name_hint=name)

    register_op(op_name, _reduce_infer, "comm_reduce", legalize)

    def user_function(x, axis=None, keepdims: bool = False):
        if axis is not None:
            axis = tuple(int(a) for a in (axis if isinstance(axis, (list, tuple)) else [axis]))
        return make_call(op_name, (x,), {"axis": axis, "keepdims": bool(keepdims)})

    user_function.__name__ = user_function.__qualname__ = name
    user_function.__doc__ = (f"``{name}(x, axis=None, keepdims=False)``: reduce over "
                             f"``axis`` (every axis when None).")
    return user_function


sum = _define_reduce("sum", topi.sum)  # noqa: A001
mean = _define_reduce("mean", topi.mean)
max = _define_reduce("max", topi.max)  # noqa: A001
min = _define_reduce("min", topi.min)  # noqa: A001


# -- matmul --------------------------------------------------------------------------------

def _matmul_infer(call):
    check_arity(call, 2)
    a, b = tensor_arg(call, 0, "x1"), tensor_arg(call, 1, "x2")
    dtype = call.attrs.out_dtype or a.dtype
    if a.dtype and b.dtype and a.dtype != b.dtype:
        raise IRError(f"relax.matmul: operands have different dtypes, {a.dtype} and {b.dtype}")
    if a.dims is None or b.dims is None:
        return TensorStructInfo(None, dtype, -1)
    if a.ndim == 0 or b.ndim == 0:
        raise IRError("relax.matmul: operands must have at least one dimension")
    a_dims = a.dims if a.ndim > 1 else (IntImm("int64", 1),) + a.dims
    b_dims = b.dims if b.ndim > 1 else b.dims + (IntImm("int64", 1),)
    k_a, k_b = a_dims[-1], b_dims[-2]
    if isinstance(k_a, IntImm) and isinstance(k_b, IntImm) and k_a.value != k_b.value:
        raise IRError(f"relax.matmul: inner dimensions differ: {shape_text(a.dims)} @ "
                      f"{shape_text(b.dims)} (reduction extent {k_a.value} against {k_b.value})")
    batch = broadcast_dims(call.op.name, a_dims[:-2], b_dims[:-2])
    dims = list(batch)
    if a.ndim > 1:
        dims.append(a_dims[-2])
    if b.ndim > 1:
        dims.append(b_dims[-1])
    return TensorStructInfo(dims, dtype)


def _matmul_te(a, b, out_dtype=None):
    """numpy's matmul in TE: 1-D operands get a unit axis that is dropped afterwards."""
    a2 = topi.expand_dims(a, 0) if a.ndim == 1 else a
    b2 = topi.expand_dims(b, 1) if b.ndim == 1 else b
    if a2.ndim == 2 and b2.ndim == 2:
        out = topi.nn.matmul(a2, b2, out_dtype=out_dtype)
    else:
        out = topi.nn.batch_matmul(a2, b2, out_dtype=out_dtype, transpose_b=False)
    drop = ([out.ndim - 2] if a.ndim == 1 else []) + ([out.ndim - 1] if b.ndim == 1 else [])
    return topi.squeeze(out, tuple(drop)) if drop else out


register_op("relax.matmul", _matmul_infer, "out_ewise_fusable",
            lambda bb, call: bb.call_te(_matmul_te, call.args[0], call.args[1],
                                        call.attrs.out_dtype, primfunc_name_hint="matmul"))


def matmul(x1, x2, out_dtype=None):
    """numpy's ``matmul``: ``(n, k) @ (k, m) -> (n, m)`` with batch broadcasting."""
    return make_call("relax.matmul", (x1, x2),
                     {"out_dtype": str(out_dtype) if out_dtype else None})
