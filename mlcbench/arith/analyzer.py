"""The Analyzer: one object that knows variable ranges and facts, and answers questions.

Spelled like TVM's ``tvm.arith.Analyzer``::

    ana = Analyzer()
    ana.bind(i, Range(0, 16)); ana.bind(j, Range(0, 4))
    ana.simplify((i * 4 + j) // 4)          # i
    ana.can_prove(i * 4 + j < 64)           # True
    with ana.constraint_scope(i < 10):
        ana.can_prove(i <= 9)               # True
    ana.const_int_bound(i * 4 + j)          # ConstIntBound(min_value=0, max_value=63)

``simplify`` also accepts statements (see :mod:`.stmt_simplify`).
"""
from __future__ import annotations

from contextlib import contextmanager

from ..ir.errors import IRError
from ..tir import expr as E
from .bound import ArithContext, ConstIntBound, dtype_range
from .linear_form import LinearSum, expr_key, is_linear_dtype
from .simplify import ExprSimplifier


class Analyzer:
    """Integer reasoning about index expressions under known ranges and facts."""

    def __init__(self):
        self._ctx = ArithContext()
        self._simplifier = ExprSimplifier(self._ctx)

    # -- what is known ----------------------------------------------------------------
    def bind(self, var: E.Var, value, allow_override: bool = False) -> None:
        """Tell the analyzer ``var`` ranges over a ``Range`` or equals an expression.

        ``bind(i, Range(0, 16))`` gives ``0 <= i < 16``; ``bind(n, 8)`` replaces ``n``
        by ``8`` when simplifying.
        """
        if not allow_override and (id(var) in self._ctx.var_bounds or
                                   var in self._ctx.substitutions):
            previous = self._ctx.substitutions.get(var) or self._ctx.var_bounds[id(var)][1:]
            raise IRError(f"Analyzer.bind: variable {var.name} is already bound to {previous}; "
                          "pass allow_override=True to rebind it")
        self._ctx.keep_alive.append(var)
        if isinstance(value, E.Range):
            lo, hi = self._range_bounds(value)
            self._ctx.var_bounds[id(var)] = (var, lo, hi)
            return
        value = self.simplify(E.convert(value, var.dtype))
        self._ctx.substitutions[var] = value
        if is_linear_dtype(var.dtype):
            lo, hi = self._bounds_of(value)
            self._ctx.var_bounds[id(var)] = (var, lo, hi)

    update = bind

    def _range_bounds(self, rng: E.Range) -> tuple[int, int]:
        min_lo, min_hi = self._bounds_of(self.simplify(rng.min))
        _, extent_hi = self._bounds_of(self.simplify(rng.extent))
        return min_lo, max(min_lo, min_hi + extent_hi - 1)

    def _bounds_of(self, expr) -> tuple[int, int]:
        simp = self._simplifier
        simp.reset()
        return simp.bound(expr)

    @contextmanager
    def constraint_scope(self, condition):
        """Within the ``with`` block, ``condition`` is assumed true.

        Facts of the forms ``a < b``, ``a <= b``, ``a == b`` (and ``and`` of them) on
        integers tighten bounds; any condition is remembered as true verbatim.
        """
        state = self._ctx.snapshot()
        try:
            self._assume(self.simplify(E.convert(condition)))
            yield
        finally:
            self._ctx.restore(state)

    def _assume(self, cond) -> None:
        if type(cond) is E.And:
            self._assume(cond.a)
            self._assume(cond.b)
            return
        simp = self._simplifier
        simp.reset()
        self._ctx.keep_alive.append(cond)
        if type(cond) is E.Not:
            self._ctx.true_facts[simp.key(cond.a)] = False
        else:
            self._ctx.true_facts[simp.key(cond)] = True
        if type(cond) in _FACT_INTERVAL and is_linear_dtype(cond.a.dtype):
            diff = simp.sum_of(cond.a).copy().add(simp.sum_of(cond.b), -1)
            lo, hi = _FACT_INTERVAL[type(cond)]
            self._record_linear_fact(diff, lo, hi)

    def _record_linear_fact(self, diff: LinearSum, lo, hi) -> None:
        """``lo <= diff <= hi``: tighten the bound of its non-constant part."""
        if not diff.terms:
            return
        lo = None if lo is None else lo - diff.const
        hi = None if hi is None else hi - diff.const
        facts = self._ctx.fact_bounds
        if len(diff.terms) == 1:
            key, (atom, coeff) = next(iter(diff.terms.items()))
            lo, hi = _divide_interval(lo, hi, coeff)
            self._store(facts, key, lo, hi)
            return
        self._store(facts, diff.linear_key(), lo, hi)
        negated = frozenset((k, -c) for k, c in diff.linear_key())
        self._store(facts, negated, None if hi is None else -hi, None if lo is None else -lo)

    @staticmethod
    def _store(facts, key, lo, hi) -> None:
        old_lo, old_hi = facts.get(key, (ConstIntBound.NEG_INF * 4, ConstIntBound.POS_INF * 4))
        facts[key] = (old_lo if lo is None else max(old_lo, lo),
                      old_hi if hi is None else min(old_hi, hi))

    # -- questions ----------------------------------------------------------------------
    def simplify(self, expr, steps: int = 2, remove_unit_loops: bool = False):
        """Simplify an expression, or a statement (binding loop variables on the way).

        ``steps`` is accepted for TVM compatibility; one bottom-up pass reaches the
        normal form here.
        """
        if isinstance(expr, E.PrimExpr):
            return self._simplifier(expr)
        if isinstance(expr, (int, float, bool)):
            return E.convert(expr)
        if isinstance(expr, E.Range):
            return E.Range(self.simplify(expr.min), self.simplify(expr.extent))
        from .stmt_simplify import simplify_stmt
        return simplify_stmt(expr, self, remove_unit_loops)

    rewrite_simplify = simplify
    canonical_simplify = simplify

    def can_prove(self, condition) -> bool:
        """True only when ``condition`` holds for every value the variables can take."""
        result = self.simplify(E.convert(condition))
        return type(result) is E.IntImm and bool(result.value)

    def can_prove_equal(self, a, b) -> bool:
        a, b = E.convert(a), E.convert(b)
        if is_linear_dtype(a.dtype) and is_linear_dtype(b.dtype):
            return self.can_prove(E.binary(E.EQ, a, b))
        simp = self._simplifier
        return expr_key(simp(a), {}) == expr_key(simp(b), {})

    def can_prove_greater_equal(self, expr, lower: int) -> bool:
        return self.const_int_bound(expr).min_value >= lower

    def can_prove_less(self, expr, upper: int) -> bool:
        return self.const_int_bound(expr).max_value < upper

    def const_int_bound(self, expr) -> ConstIntBound:
        """Constant bounds of ``expr`` (clamped to its dtype's range)."""
        expr = self.simplify(E.convert(expr))
        lo, hi = self._bounds_of(expr)
        dlo, dhi = dtype_range(expr.dtype)
        return ConstIntBound(max(lo, dlo), min(hi, dhi))

    def int_set(self, expr, dom_map=None):
        """The interval of ``expr`` when the vars of ``dom_map`` range over their Ranges."""
        from .int_set import eval_set
        return eval_set(expr, dom_map or {}, self)


_FACT_INTERVAL = {E.LT: (None, -1), E.LE: (None, 0), E.GT: (1, None), E.GE: (0, None),
                  E.EQ: (0, 0)}


def _divide_interval(lo, hi, coeff: int):
    """Interval of ``x`` from ``lo <= coeff * x <= hi``."""
    if coeff < 0:
        lo, hi, coeff = (None if hi is None else -hi), (None if lo is None else -lo), -coeff
    new_lo = None if lo is None else -((-lo) // coeff)      # ceil
    new_hi = None if hi is None else hi // coeff
    return new_lo, new_hi


def simplify(expr, analyzer: Analyzer | None = None):
    """Simplify with a fresh (or the given) Analyzer: ``simplify(x + 0) -> x``."""
    return (analyzer or Analyzer()).simplify(expr)
