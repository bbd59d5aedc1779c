"""Elementwise binary ops with numpy broadcasting: ``add``, ``multiply``, ``less`` ...

>>> add(x, y)      # x: (4, 1), y: (5,)  ->  R.Tensor((4, 5), dtype="float32")
"""
from __future__ import annotations

from ... import topi
from ...ir.errors import IRError
from ..struct_info import TensorStructInfo
from .registry import broadcast_dims, check_arity, make_call, register_op, tensor_arg


def binary_infer(call, out_dtype: str | None = None) -> TensorStructInfo:
    check_arity(call, 2)
    lhs, rhs = tensor_arg(call, 0, "lhs"), tensor_arg(call, 1, "rhs")
    if lhs.dtype and rhs.dtype and lhs.dtype != rhs.dtype:
        raise IRError(f"{call.op.name}: operands have different dtypes, {lhs.dtype} and "
                      f"{rhs.dtype}; cast one with R.astype")
    dtype = out_dtype or lhs.dtype or rhs.dtype
    if lhs.dims is None or rhs.dims is None:
        ndim = max(lhs.ndim, rhs.ndim) if lhs.ndim >= 0 and rhs.ndim >= 0 else -1
        return TensorStructInfo(None, dtype, ndim)
    return TensorStructInfo(broadcast_dims(call.op.name, lhs.dims, rhs.dims), dtype)


def _compare_infer(call):
    return binary_infer(call, out_dtype="bool")


def _define(name: str, topi_func, infer=binary_infer):
    op_name = f"relax.{name}"

    def legalize(bb, call):
        return bb.call_te(topi_func, call.args[0], call.args[1], primfunc_name_hint=name)

    register_op(op_name, infer, "broadcast", legalize)

    def user_function(x1, x2):
        return make_call(op_name, (x1, x2))

    user_function.__name__ = user_function.__qualname__ = name
    user_function.__doc__ = f"``{name}(x1, x2)`` elementwise with numpy broadcasting."
    return user_function


add = _define("add", topi.add)
subtract = _define("subtract", topi.subtract)
multiply = _define("multiply", topi.multiply)
divide = _define("divide", topi.divide)
floor_divide = _define("floor_divide", topi.floor_divide)
power = _define("power", topi.power)
maximum = _define("maximum", topi.maximum)
minimum = _define("minimum", topi.minimum)
equal = _define("equal", topi.equal, _compare_infer)
not_equal = _define("not_equal", topi.not_equal, _compare_infer)
less = _define("less", topi.less, _compare_infer)
less_equal = _define("less_equal", topi.less_equal, _compare_infer)
greater = _define("greater", topi.greater, _compare_infer)
greater_equal = _define("greater_equal", topi.greater_equal, _compare_infer)
