"""Expressions: TIR ``PrimExpr`` -> LLVM values, scalar or vector.

Each node kind has one ``_expr_<ClassName>`` method. Vector dtypes (``float32x16``)
become LLVM vectors; a scalar operand meeting a vector one is broadcast.

Float arithmetic carries the ``contract`` flag only, so ``a * b + c`` may become an
FMA while ``max`` keeps its NaN behaviour (``max(a, b) = a > b ? a : b``, as TVM).
"""
from __future__ import annotations

import math

from llvmlite import ir

from ...ir.dtype import DataType, dtype as as_dtype
from ...tir import expr as E
from . import types as T
from .memory import MemoryAccess
from .intrinsics import IntrinsicCalls

_INT_CMP = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


# How float T.max/T.min are lowered. "intrinsic" (llvm.maximum/minimum, or one select
# against a constant that is not NaN): NaN in either operand gives NaN, as numpy's
# np.maximum/np.minimum, and -0 < +0. The others are kept for benchmarks/min_max_nan.py,
# which measures the choice: "select" (a > b ? a : b, TVM's lowering: max(NaN, 0) is 0)
# and "nan_select" (select, then NaN on an unordered compare). On a 256-bit host,
# against "select": row max 0.61x (LLVM vectorizes a reduction of llvm.maximum, not one
# of that select), vectorized 2x2 max-pool 1.05-1.15x, ReLU 1.04x; "nan_select" took
# 3.3-3.9x in the row max.
FLOAT_MIN_MAX = "intrinsic"


def _plain_constant(expr, symbol: str) -> bool:
    """A float constant that is not NaN, nor the zero that loses the tie (-0.0 for max,
    +0.0 for min): for it, max/min needs no NaN or signed-zero handling beyond a select."""
    if isinstance(expr, E.Broadcast):
        expr = expr.value
    if not isinstance(expr, E.FloatImm) or math.isnan(expr.value):
        return False
    if expr.value != 0:
        return True
    return (math.copysign(1.0, expr.value) > 0) == (symbol == ">")


class ExprEmitter(MemoryAccess, IntrinsicCalls):
    """Mixin: needs ``self.builder``, ``self.vars`` ({Var: ir.Value}) and ``self.fail``."""

    builder: ir.IRBuilder
    vars: dict

    def emit_expr(self, expr) -> ir.Value:
        method = getattr(self, "_expr_" + type(expr).__name__, None)
        if method is None:
            self.fail(f"unsupported expression {type(expr).__name__}", expr)
        return method(expr)

    # -- leaves ------------------------------------------------------------------------
    def _expr_IntImm(self, op):
        return T.constant(op.dtype, op.value)

    def _expr_FloatImm(self, op):
        return T.constant(op.dtype, op.value)

    def _expr_Var(self, op):
        value = self.vars.get(op)
        if value is None:
            self.fail(f"variable {op.name!r} is used but not bound (not a parameter, loop "
                      "variable, let binding or symbolic shape)", op)
        return value

    _expr_SizeVar = _expr_Var

    def _expr_StringImm(self, op):
        self.fail("a string is only allowed as the function name of tir.call_extern", op)

    # -- arithmetic --------------------------------------------------------------------
    def _operands(self, op):
        a, b = self.emit_expr(op.a), self.emit_expr(op.b)
        lanes = max(T.lanes_of(a), T.lanes_of(b))
        return T.broadcast(self.builder, a, lanes), T.broadcast(self.builder, b, lanes)

    def _expr_Add(self, op):
        a, b = self._operands(op)
        if op.dtype.is_float:
            return self.builder.fadd(a, b, flags=T.FLOAT_FLAGS)
        return self.builder.add(a, b, flags=_int_flags(op.dtype))

    def _expr_Sub(self, op):
        a, b = self._operands(op)
        if op.dtype.is_float:
            return self.builder.fsub(a, b, flags=T.FLOAT_FLAGS)
        return self.builder.sub(a, b, flags=_int_flags(op.dtype))

    def _expr_Mul(self, op):
        a, b = self._operands(op)
        if op.dtype.is_float:
            return self.builder.fmul(a, b, flags=T.FLOAT_FLAGS)
        return self.builder.mul(a, b, flags=_int_flags(op.dtype))

    def _expr_Div(self, op):
        a, b = self._operands(op)
        if op.dtype.is_float:
            return self.builder.fdiv(a, b, flags=T.FLOAT_FLAGS)
        return self.builder.sdiv(a, b) if op.dtype.is_int else self.builder.udiv(a, b)

    def _expr_Mod(self, op):
        a, b = self._operands(op)
        if op.dtype.is_float:
            return self.builder.frem(a, b)
        return self.builder.srem(a, b) if op.dtype.is_int else self.builder.urem(a, b)

    def _expr_FloorDiv(self, op):
        a, b = self._operands(op)
        if op.dtype.is_float:
            return self.call_intrinsic("llvm.floor", [self.builder.fdiv(a, b)])
        if not op.dtype.is_int:
            return self.builder.udiv(a, b)
        quotient, needs_fix = self.builder.sdiv(a, b), self._floor_fix(a, b)
        return self.builder.sub(quotient, self.builder.zext(needs_fix, quotient.type))

    def _expr_FloorMod(self, op):
        a, b = self._operands(op)
        if op.dtype.is_float:
            ratio = self.call_intrinsic("llvm.floor", [self.builder.fdiv(a, b)])
            return self.builder.fsub(a, self.builder.fmul(ratio, b))
        if not op.dtype.is_int:
            return self.builder.urem(a, b)
        remainder = self.builder.srem(a, b)
        shift = self.builder.select(self._floor_fix(a, b), b, ir.Constant(b.type, None))
        return self.builder.add(remainder, shift)

    def _floor_fix(self, a, b):
        """True where truncating division rounded towards zero but floor must go down:
        the remainder is non-zero and its sign differs from the divisor's."""
        zero = ir.Constant(a.type, None)
        remainder = self.builder.srem(a, b)
        nonzero = self.builder.icmp_signed("!=", remainder, zero)
        signs_differ = self.builder.icmp_signed("<", self.builder.xor(remainder, b), zero)
        return self.builder.and_(nonzero, signs_differ)

    def _expr_Min(self, op):
        return self._min_max(op, "<")

    def _expr_Max(self, op):
        return self._min_max(op, ">")

    def _min_max(self, op, symbol: str):
        """Integers: a compare and a select. Floats: see ``FLOAT_MIN_MAX``."""
        a, b = self._operands(op)
        if not op.dtype.is_float or FLOAT_MIN_MAX == "select":
            return self.builder.select(self._compare(symbol, op.a.dtype, a, b), a, b)
        if FLOAT_MIN_MAX == "intrinsic":
            return self._nan_propagating_min_max(op, symbol, a, b)
        unordered = self.builder.fcmp_unordered("uno", a, b)
        picked = self.builder.select(self._compare(symbol, op.a.dtype, a, b), a, b)
        # a + b is NaN whenever either operand is: the NaN result without a branch.
        return self.builder.select(unordered, self.builder.fadd(a, b), picked)

    def _nan_propagating_min_max(self, op, symbol: str, a, b):
        # Put the plain constant second, where the select below expects it.
        if _plain_constant(op.a, symbol):
            a, b = b, a
        if _plain_constant(op.a, symbol) or _plain_constant(op.b, symbol):
            # `x > c or unordered ? x : c` is the same function when c is neither NaN nor
            # the zero that loses the tie, and is one vmaxps/vminps: ReLU's T.max(x, 0).
            unordered = self.builder.fcmp_unordered("ugt" if symbol == ">" else "ult", a, b)
            return self.builder.select(unordered, a, b)
        return self.call_intrinsic("llvm.maximum" if symbol == ">" else "llvm.minimum", [a, b])

    # -- comparisons and logic ---------------------------------------------------------
    def _compare(self, symbol: str, dt: DataType, a, b):
        if dt.is_float:
            if symbol == "!=":        # NaN != x is true, as in C and numpy
                return self.builder.fcmp_unordered(symbol, a, b)
            return self.builder.fcmp_ordered(symbol, a, b)
        if dt.is_int:
            return self.builder.icmp_signed(symbol, a, b)
        return self.builder.icmp_unsigned(symbol, a, b)

    def _emit_comparison(self, op):
        a, b = self._operands(op)
        return self._compare(_INT_CMP[type(op).__name__], op.a.dtype, a, b)

    _expr_EQ = _expr_NE = _expr_LT = _expr_LE = _expr_GT = _expr_GE = _emit_comparison

    def _expr_And(self, op):
        a, b = self._operands(op)
        return self.builder.and_(a, b)

    def _expr_Or(self, op):
        a, b = self._operands(op)
        return self.builder.or_(a, b)

    def _expr_Not(self, op):
        return self.builder.not_(self.emit_expr(op.a))

    def _expr_Select(self, op):
        cond = self.emit_expr(op.condition)
        t, f = self.emit_expr(op.true_value), self.emit_expr(op.false_value)
        lanes = max(T.lanes_of(cond), T.lanes_of(t), T.lanes_of(f))
        t, f = T.broadcast(self.builder, t, lanes), T.broadcast(self.builder, f, lanes)
        return self.builder.select(cond, t, f)

    def _expr_Cast(self, op):
        value = self.emit_expr(op.value)
        return T.convert(self.builder, value, op.value.dtype, op.dtype)

    # -- vectors -----------------------------------------------------------------------
    def _expr_Ramp(self, op):
        """``[base, base + stride, ...]`` = splat(base) + <0, 1, ...> * splat(stride)."""
        base = self.emit_expr(op.base)
        # The stride in the base's type, so the vector arithmetic has one type.
        stride = self.emit_expr(E.convert(op.stride, op.base.dtype))
        vec_type = ir.VectorType(base.type, op.lanes)
        steps = ir.Constant(vec_type, [ir.Constant(base.type, k) for k in range(op.lanes)])
        scaled = self.builder.mul(steps, T.broadcast(self.builder, stride, op.lanes))
        return self.builder.add(T.broadcast(self.builder, base, op.lanes), scaled)

    def _expr_Broadcast(self, op):
        return T.broadcast(self.builder, self.emit_expr(op.value), op.lanes)

    def _expr_Let(self, op):
        self.vars[op.var] = self.emit_expr(op.value)
        try:
            return self.emit_expr(op.body)
        finally:
            del self.vars[op.var]

    def _expr_BufferLoad(self, op):
        return self.emit_load(op.buffer, op.indices, op.dtype)

    def _expr_Call(self, op):
        return self.emit_call(op)


def _int_flags(dt: DataType) -> tuple:
    """Signed index arithmetic does not wrap in TIR: ``nsw`` lets LLVM widen and vectorize."""
    return ("nsw",) if as_dtype(dt).is_int and as_dtype(dt).bits >= 32 else ()
