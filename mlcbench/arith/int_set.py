"""Interval sets with symbolic ends: the values an index takes while loops run.

``eval_set(i * 4 + k, {k: Range(0, 4)})`` is ``[i * 4, i * 4 + 3]``: variables in the
domain map are relaxed to their ranges, every other variable stays symbolic. This is
how a block's access region is computed from the loops inside it, and how the
schedule sees a block's region from the loops around it.

An end of ``None`` means unbounded (TVM prints it as ``pos_inf`` / ``neg_inf``).
Interval arithmetic forgets correlations (``x - x`` over ``[0, 3]`` is ``[-3, 3]``),
so expressions are simplified first, which cancels such terms.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.errors import InvalidValueError
from ..tir import expr as E
from ..tir.functor import uses_var


@dataclass(frozen=True)
class IntSet:
    """The closed interval ``[min_value, max_value]``; ``None`` ends are unbounded."""

    min_value: E.PrimExpr | None
    max_value: E.PrimExpr | None

    @property
    def min(self):
        return self.min_value

    @property
    def max(self):
        return self.max_value

    @staticmethod
    def single_point(value) -> "IntSet":
        value = E.convert(value)
        return IntSet(value, value)

    @staticmethod
    def interval(lo, hi) -> "IntSet":
        return IntSet(None if lo is None else E.convert(lo), None if hi is None else E.convert(hi))

    @staticmethod
    def everything() -> "IntSet":
        return IntSet(None, None)

    @staticmethod
    def from_range(rng: E.Range, analyzer=None) -> "IntSet":
        analyzer = analyzer or _analyzer()
        return IntSet(rng.min, analyzer.simplify(rng.min + rng.extent - 1))

    def is_single_point(self) -> bool:
        return self.min_value is not None and self.min_value is self.max_value or (
            _both_const(self.min_value, self.max_value)
            and self.min_value.value == self.max_value.value)

    def is_everything(self) -> bool:
        return self.min_value is None and self.max_value is None

    def is_bounded(self) -> bool:
        return self.min_value is not None and self.max_value is not None

    def cover_range(self, bound: E.Range | None = None, analyzer=None) -> E.Range:
        """The Range ``[min, max + 1)``; unbounded ends fall back to ``bound``."""
        analyzer = analyzer or _analyzer()
        lo, hi = self.min_value, self.max_value
        if lo is None or hi is None:
            if bound is None:
                raise InvalidValueError(f"cannot cover the unbounded set {self} without a bound")
            lo = bound.min if lo is None else lo
            hi = analyzer.simplify(bound.min + bound.extent - 1) if hi is None else hi
        return E.Range(lo, analyzer.simplify(hi - lo + 1))

    def __repr__(self):
        lo = "neg_inf" if self.min_value is None else self.min_value
        hi = "pos_inf" if self.max_value is None else self.max_value
        return f"IntSet[{lo}, {hi}]"


def _both_const(a, b) -> bool:
    return type(a) is E.IntImm and type(b) is E.IntImm


def _analyzer():
    from .analyzer import Analyzer
    return Analyzer()


def union(sets, analyzer=None) -> IntSet:
    """The smallest interval containing every set (``min`` of mins, ``max`` of maxes)."""
    analyzer = analyzer or _analyzer()
    sets = list(sets)
    lo, hi = sets[0].min_value, sets[0].max_value
    for s in sets[1:]:
        lo = None if lo is None or s.min_value is None else analyzer.simplify(
            E.binary(E.Min, lo, s.min_value))
        hi = None if hi is None or s.max_value is None else analyzer.simplify(
            E.binary(E.Max, hi, s.max_value))
    return IntSet(lo, hi)


def intersect(sets, analyzer=None) -> IntSet:
    """The intersection of intervals (may be empty: then ``min > max``)."""
    analyzer = analyzer or _analyzer()
    sets = list(sets)
    lo, hi = sets[0].min_value, sets[0].max_value
    for s in sets[1:]:
        lo = s.min_value if lo is None else lo if s.min_value is None else analyzer.simplify(
            E.binary(E.Max, lo, s.min_value))
        hi = s.max_value if hi is None else hi if s.max_value is None else analyzer.simplify(
            E.binary(E.Min, hi, s.max_value))
    return IntSet(lo, hi)


def eval_set(expr, dom_map: dict, analyzer=None) -> IntSet:
    """Interval of ``expr`` when each var of ``dom_map`` ranges over its Range/IntSet."""
    analyzer = analyzer or _analyzer()
    expr = analyzer.simplify(E.convert(expr))
    result = _SetEvaluator(dom_map, analyzer).visit(expr)
    simplify = analyzer.simplify
    return IntSet(None if result.min_value is None else simplify(result.min_value),
                  None if result.max_value is None else simplify(result.max_value))


class _SetEvaluator:
    """Interval arithmetic, node by node."""

    def __init__(self, doms: dict, analyzer):
        # A Range becomes an IntSet only when the expression uses its var: callers pass
        # every loop of a nest, an index uses a few of them.
        self.doms, self.analyzer, self._sets = doms, analyzer, {}

    def visit(self, expr) -> IntSet:
        handler = getattr(self, "visit_" + type(expr).__name__, None)
        if handler is not None:
            return handler(expr)
        if self._uses_relaxed_var(expr):
            return IntSet.everything()
        return IntSet.single_point(expr)

    def _uses_relaxed_var(self, expr) -> bool:
        return uses_var(expr, lambda v: v in self.doms)

    def visit_Var(self, var):
        if var not in self._sets:
            dom = self.doms.get(var)
            self._sets[var] = (IntSet.single_point(var) if dom is None else
                               IntSet.from_range(dom, self.analyzer)
                               if isinstance(dom, E.Range) else dom)
        return self._sets[var]

    visit_SizeVar = visit_Var

    def visit_IntImm(self, imm):
        return IntSet.single_point(imm)

    def visit_Add(self, expr):
        a, b = self.visit(expr.a), self.visit(expr.b)
        return IntSet(_combine(E.Add, a.min_value, b.min_value),
                      _combine(E.Add, a.max_value, b.max_value))

    def visit_Sub(self, expr):
        a, b = self.visit(expr.a), self.visit(expr.b)
        return IntSet(_combine(E.Sub, a.min_value, b.max_value),
                      _combine(E.Sub, a.max_value, b.min_value))

    def visit_Mul(self, expr):
        a, b = self.visit(expr.a), self.visit(expr.b)
        if a.is_single_point() and b.is_single_point():
            return IntSet.single_point(E.binary(E.Mul, a.min_value, b.min_value))
        if not b.is_single_point():
            a, b = b, a
        if not b.is_single_point():
            return self._corners(E.Mul, a, b)
        return self._scale(E.Mul, a, b.min_value)

    def _scale(self, cls, a: IntSet, factor) -> IntSet:
        """``a * factor`` or ``a // factor`` for a point ``factor`` of known sign."""
        bound = self.analyzer.const_int_bound(factor)
        lo = None if a.min_value is None else E.binary(cls, a.min_value, factor)
        hi = None if a.max_value is None else E.binary(cls, a.max_value, factor)
        if bound.min_value >= 0:
            return IntSet(lo, hi)
        if bound.max_value <= 0:
            return IntSet(hi, lo)
        return IntSet.everything()

    def _corners(self, cls, a: IntSet, b: IntSet) -> IntSet:
        """Both operands vary: only constant ends give an answer."""
        ends = (a.min_value, a.max_value, b.min_value, b.max_value)
        if not all(type(e) is E.IntImm for e in ends):
            return IntSet.everything()
        values = [cls.py_op(x.value, y.value) for x in ends[:2] for y in ends[2:]]
        dtype = a.min_value.dtype
        return IntSet.interval(E.const(min(values), dtype), E.const(max(values), dtype))

    def visit_FloorDiv(self, expr):
        a, b = self.visit(expr.a), self.visit(expr.b)
        if a.is_single_point() and b.is_single_point():
            return IntSet.single_point(E.binary(E.FloorDiv, a.min_value, b.min_value))
        if b.is_single_point() and self.analyzer.const_int_bound(b.min_value).min_value > 0:
            return self._scale(E.FloorDiv, a, b.min_value)
        return IntSet.everything()

    def visit_FloorMod(self, expr):
        a, b = self.visit(expr.a), self.visit(expr.b)
        if a.is_single_point() and b.is_single_point():
            return IntSet.single_point(E.binary(E.FloorMod, a.min_value, b.min_value))
        if not (b.is_single_point() and a.is_bounded()):
            return IntSet.everything()
        divisor = b.min_value
        if self.analyzer.const_int_bound(divisor).min_value <= 0:
            return IntSet.everything()
        same_period = E.binary(E.EQ, E.binary(E.FloorDiv, a.min_value, divisor),
                               E.binary(E.FloorDiv, a.max_value, divisor))
        if self.analyzer.can_prove(same_period):
            return IntSet(E.binary(E.FloorMod, a.min_value, divisor),
                          E.binary(E.FloorMod, a.max_value, divisor))
        return IntSet.interval(E.const(0, expr.dtype), E.binary(E.Sub, divisor, 1))

    def visit_Min(self, expr):
        a, b = self.visit(expr.a), self.visit(expr.b)
        return IntSet(_combine(E.Min, a.min_value, b.min_value),
                      _combine(E.Min, a.max_value, b.max_value, none_wins=False))

    def visit_Max(self, expr):
        a, b = self.visit(expr.a), self.visit(expr.b)
        return IntSet(_combine(E.Max, a.min_value, b.min_value, none_wins=False),
                      _combine(E.Max, a.max_value, b.max_value))

    def visit_Select(self, expr):
        return union([self.visit(expr.true_value), self.visit(expr.false_value)], self.analyzer)

    def visit_Call(self, expr):
        if expr.op == "tir.if_then_else":
            return union([self.visit(expr.args[1]), self.visit(expr.args[2])], self.analyzer)
        if self._uses_relaxed_var(expr):
            return IntSet.everything()
        return IntSet.single_point(expr)

    def visit_Cast(self, expr):
        value = self.visit(expr.value)
        if value.is_single_point():
            return IntSet.single_point(E.cast(expr.dtype, value.min_value))
        if expr.dtype.is_integer and expr.dtype.bits >= expr.value.dtype.bits:
            return IntSet(None if value.min_value is None else E.cast(expr.dtype, value.min_value),
                          None if value.max_value is None else E.cast(expr.dtype, value.max_value))
        return IntSet.everything()


def _combine(cls, a, b, none_wins: bool = True):
    """``cls(a, b)`` on interval ends; ``None`` (infinite) absorbs unless ``none_wins`` is off."""
    if a is None or b is None:
        if none_wins:
            return None
        return b if a is None else a
    return E.binary(cls, a, b)
