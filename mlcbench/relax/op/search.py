"""``where(condition, x1, x2)``: numpy's three-way select, broadcasting all three."""
from __future__ import annotations

from ... import topi
from ...ir.errors import IRError
from ..struct_info import TensorStructInfo
from .registry import broadcast_dims, check_arity, make_call, register_op, tensor_arg


def _where_infer(call):
    check_arity(call, 3)
    cond = tensor_arg(call, 0, "condition")
    x, y = tensor_arg(call, 1, "x1"), tensor_arg(call, 2, "x2")
    if cond.dtype and cond.dtype != "bool":
        raise IRError(f"relax.where: condition must be bool, found {cond.dtype}; compare "
                      f"or cast it first")
    if x.dtype and y.dtype and x.dtype != y.dtype:
        raise IRError(f"relax.where: x1 and x2 must have one dtype, found {x.dtype} and "
                      f"{y.dtype}")
    if cond.dims is None or x.dims is None or y.dims is None:
        ndims = (cond.ndim, x.ndim, y.ndim)
        return TensorStructInfo(None, x.dtype, -1 if min(ndims) < 0 else max(ndims))
    dims = broadcast_dims(call.op.name, broadcast_dims(call.op.name, cond.dims, x.dims),
                          y.dims)
    return TensorStructInfo(dims, x.dtype or y.dtype)


register_op("relax.where", _where_infer, "broadcast",
            lambda bb, call: bb.call_te(topi.where, *call.args, primfunc_name_hint="where"))


def where(condition, x1, x2):
    """``x1`` where ``condition`` (a bool tensor) holds, else ``x2``."""
    return make_call("relax.where", (condition, x1, x2))
