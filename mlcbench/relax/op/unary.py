"""Elementwise unary ops (``exp``, ``sqrt``, ``sigmoid`` ...), ``astype`` and ``ewise_fma``.

The result has the operand's shape and dtype (``astype`` changes the dtype only).
"""
from __future__ import annotations

from ... import topi
from ...ir.errors import IRError
from ..struct_info import TensorStructInfo, dim_equal, shape_text
from .registry import check_arity, make_call, register_op, tensor_arg


def unary_infer(call) -> TensorStructInfo:
    check_arity(call, 1)
    return tensor_arg(call, 0, "x")


def define_unary(name: str, topi_func, pattern: str = "elemwise", float_only: bool = False):
    """Register ``relax.<name>`` lowering to ``topi_func`` and return its user function."""
    op_name = f"relax.{name}"

    def infer(call):
        sinfo = unary_infer(call)
        if float_only and sinfo.dtype and not sinfo.dtype.startswith("float"):
            raise IRError(f"{op_name}: expects a floating-point tensor, found {sinfo.dtype}")
        return sinfo

    def legalize(bb, call):
        return bb.call_te(topi_func, call.args[0], primfunc_name_hint=name.split(".")[-1])

    register_op(op_name, infer, pattern, legalize)

    def user_function(x):
        return make_call(op_name, (x,))

    user_function.__name__ = user_function.__qualname__ = name.split(".")[-1]
    user_function.__doc__ = f"``{name}(x)`` elementwise."
    return user_function


exp = define_unary("exp", topi.exp, float_only=True)
log = define_unary("log", topi.log, float_only=True)
sqrt = define_unary("sqrt", topi.sqrt, float_only=True)
rsqrt = define_unary("rsqrt", topi.rsqrt, float_only=True)
tanh = define_unary("tanh", topi.tanh, float_only=True)
sigmoid = define_unary("sigmoid", topi.sigmoid, float_only=True)
erf = define_unary("erf", topi.erf, float_only=True)
negative = define_unary("negative", topi.negative)
abs = define_unary("abs", topi.abs)  # noqa: A001


def _astype_infer(call):
    sinfo = unary_infer(call)
    return TensorStructInfo(sinfo.shape, call.attrs.dtype, sinfo.ndim)


register_op("relax.astype", _astype_infer, "elemwise",
            lambda bb, call: bb.call_te(topi.cast, call.args[0], call.attrs.dtype,
                                        primfunc_name_hint="cast"))


def astype(x, dtype: str):
    """``astype(x, "int32")``: convert elements to ``dtype``."""
    return make_call("relax.astype", (x,), {"dtype": str(dtype)})


def _fma_infer(call):
    check_arity(call, 3)
    sinfos = [tensor_arg(call, k) for k in range(3)]
    first = sinfos[0]
    for other in sinfos[1:]:
        same = other.dtype == first.dtype and other.ndim == first.ndim and (
            first.dims is None or other.dims is None
            or all(dim_equal(a, b) for a, b in zip(first.dims, other.dims)))
        if not same:
            raise IRError(f"relax.ewise_fma: operands must have one shape and dtype, found "
                          f"{shape_text(first.dims or ())} {first.dtype} and "
                          f"{shape_text(other.dims or ())} {other.dtype}")
    return first


def _fma_te(a, b, c):
    return topi.add(topi.multiply(a, b), c)


register_op("relax.ewise_fma", _fma_infer, "elemwise",
            lambda bb, call: bb.call_te(_fma_te, *call.args, primfunc_name_hint="ewise_fma"))


def ewise_fma(x1, x2, x3):
    """``x1 * x2 + x3`` elementwise, all three of one shape (the course's fused op)."""
    return make_call("relax.ewise_fma", (x1, x2, x3))


def _clip_infer(call):
    sinfo = unary_infer(call)
    if call.attrs.min > call.attrs.max:
        raise IRError(f"relax.clip: min {call.attrs.min} is above max {call.attrs.max}")
    return sinfo


register_op("relax.clip", _clip_infer, "elemwise",
            lambda bb, call: bb.call_te(topi.clip, call.args[0], call.attrs.min,
                                        call.attrs.max, primfunc_name_hint="clip"))


def clip(x, min, max):  # noqa: A002 -- TVM's spelling
    """Clamp each element into ``[min, max]`` (numbers)."""
    return make_call("relax.clip", (x,), {"min": float(min), "max": float(max)})
