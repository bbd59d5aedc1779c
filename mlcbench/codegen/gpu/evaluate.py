"""TIR expressions evaluated with numpy for all threads of a block at once.

A value is a 2-D array: one row per thread (or a single row when every thread has
the same value) and one column per vector lane, so ``tx * 4 + Ramp(0, 1, 4)`` is a
``(threads, 4)`` array by broadcasting. Integers are held as int64 (indices cannot
overflow while tracing), floats in their own dtype. Subclasses provide ``env``
(Var -> value), ``load(buffer, index, mask)`` and ``count_flops(n)``.
"""
from __future__ import annotations

import numpy as np

from ...tir import expr as E

_FLOAT_OPS = (E.Add, E.Sub, E.Mul, E.Div, E.Min, E.Max)

_UNARY_MATH = {
    "tir.exp": np.exp, "tir.exp2": np.exp2, "tir.log": np.log, "tir.log2": np.log2,
    "tir.log10": np.log10, "tir.sqrt": np.sqrt, "tir.sin": np.sin, "tir.cos": np.cos,
    "tir.tan": np.tan, "tir.tanh": np.tanh, "tir.fabs": np.abs, "tir.abs": np.abs,
    "tir.floor": np.floor, "tir.ceil": np.ceil, "tir.round": np.rint, "tir.trunc": np.trunc,
    "tir.rsqrt": lambda x: 1 / np.sqrt(x), "tir.sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tir.bitwise_not": np.invert,
}
_BINARY_CALLS = {
    "tir.pow": np.power, "tir.fmod": np.fmod, "tir.bitwise_and": np.bitwise_and,
    "tir.bitwise_or": np.bitwise_or, "tir.bitwise_xor": np.bitwise_xor,
    "tir.shift_left": np.left_shift, "tir.shift_right": np.right_shift,
}


def _numpy_dtype(dtype):
    scalar = dtype.with_lanes(1)
    if scalar.is_float:
        return scalar.to_numpy()
    # All integers as int64: index arithmetic cannot overflow while tracing.
    return np.bool_ if str(scalar) == "bool" else np.int64


def _nonzero(b):
    """Divisors of inactive threads may be 0: make them 1 (their result is unused)."""
    return np.where(b == 0, 1, b)


def _trunc_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


_BINARY = {
    E.Add: np.add, E.Sub: np.subtract, E.Mul: np.multiply, E.Min: np.minimum,
    E.Max: np.maximum, E.EQ: np.equal, E.NE: np.not_equal, E.LT: np.less,
    E.LE: np.less_equal, E.GT: np.greater, E.GE: np.greater_equal,
    E.And: np.logical_and, E.Or: np.logical_or,
    E.FloorDiv: lambda a, b: a // _nonzero(b), E.FloorMod: lambda a, b: a % _nonzero(b),
    E.Mod: lambda a, b: a - _nonzero(b) * _trunc_div(a, _nonzero(b)),
}


class ExprEvaluator:
    """Evaluates expressions for ``num_threads`` threads; see the module docstring."""

    def __init__(self, num_threads: int):
        self.num_threads = num_threads
        self.env: dict = {}

    def eval(self, expr, mask) -> np.ndarray:
        method = getattr(self, "_eval_" + type(expr).__name__, None)
        if method is None:
            if isinstance(expr, E.BinaryOp):
                return self._binary(expr, mask)
            return np.zeros((1, expr.dtype.lanes), dtype=_numpy_dtype(expr.dtype))
        return method(expr, mask)

    def _eval_IntImm(self, expr, mask):
        return np.array([[expr.value]], dtype=_numpy_dtype(expr.dtype))

    def _eval_FloatImm(self, expr, mask):
        return np.array([[expr.value]], dtype=_numpy_dtype(expr.dtype))

    def _eval_Var(self, expr, mask):
        return self.env[expr]

    _eval_SizeVar = _eval_Var

    def _binary(self, expr, mask):
        a, b = self.eval(expr.a, mask), self.eval(expr.b, mask)
        # TIR's Div on integers truncates toward zero (C's /), unlike numpy's //.
        if isinstance(expr, E.Div) and expr.dtype.is_float:
            # Inactive threads and skipped iterations leave divisors of 0 (a softmax's
            # sum): no warnings for values nobody uses, as for the math calls below.
            with np.errstate(all="ignore"):
                result = a / b
        elif isinstance(expr, E.Div):
            result = _trunc_div(a, _nonzero(b))
        else:
            result = _BINARY[type(expr)](a, b)
        if expr.dtype.is_float and isinstance(expr, _FLOAT_OPS):
            self.count_flops(int(mask.sum()) * expr.dtype.lanes)
        return result.astype(_numpy_dtype(expr.dtype), copy=False)

    def _eval_Not(self, expr, mask):
        return np.logical_not(self.eval(expr.a, mask))

    def _eval_Select(self, expr, mask):
        cond = self.eval(expr.condition, mask)
        return np.where(cond, self.eval(expr.true_value, mask),
                        self.eval(expr.false_value, mask))

    def _eval_Cast(self, expr, mask):
        return self.eval(expr.value, mask).astype(_numpy_dtype(expr.dtype))

    def _eval_BufferLoad(self, expr, mask):
        return self.load(expr.buffer, self.eval(expr.indices[0], mask), mask)

    def _eval_Ramp(self, expr, mask):
        base, stride = self.eval(expr.base, mask), self.eval(expr.stride, mask)
        return base + stride * np.arange(expr.lanes)[None, :]

    def _eval_Broadcast(self, expr, mask):
        value = self.eval(expr.value, mask)
        return np.broadcast_to(value, (value.shape[0], expr.lanes))

    def _eval_Let(self, expr, mask):
        self.env[expr.var] = self.eval(expr.value, mask)
        return self.eval(expr.body, mask)

    def _eval_Call(self, expr, mask):
        op, args = expr.op, expr.args
        if op == "tir.if_then_else":
            cond = np.broadcast_to(self.eval(args[0], mask)[:, 0], mask.shape)
            # Each side only for the threads taking it: a guarded load is never traced outside.
            then = self.eval(args[1], mask & cond) if (mask & cond).any() else 0
            other = self.eval(args[2], mask & ~cond) if (mask & ~cond).any() else 0
            return np.where(cond[:, None], then, other).astype(_numpy_dtype(expr.dtype))
        if op == "tir.likely":
            return self.eval(args[0], mask)
        if op == "tir.fma":
            a, b, c = (self.eval(x, mask) for x in args)
            self.count_flops(2 * int(mask.sum()) * expr.dtype.lanes)
            return a * b + c
        values = [self.eval(a, mask) for a in args if not isinstance(a, E.StringImm)]
        # Inactive threads may hold any value (log of 0): no warnings for results nobody uses.
        if op in _UNARY_MATH and len(values) == 1:
            self.count_flops(int(mask.sum()) * expr.dtype.lanes)
            with np.errstate(all="ignore"):
                return _UNARY_MATH[op](values[0]).astype(_numpy_dtype(expr.dtype))
        if op in _BINARY_CALLS and len(values) == 2:
            with np.errstate(all="ignore"):
                return _BINARY_CALLS[op](*values).astype(_numpy_dtype(expr.dtype))
        # Calls the tracer cannot evaluate (extern functions): their arguments were
        # traced above; the value is taken as zero.
        return np.zeros((1, expr.dtype.lanes), dtype=_numpy_dtype(expr.dtype))

    def load(self, buffer, index, mask):
        raise NotImplementedError

    def count_flops(self, n: int) -> None:
        """Called with the number of floating-point operations just evaluated."""
