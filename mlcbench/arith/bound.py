"""Constant integer bounds: the smallest ``[lo, hi]`` we can prove for an expression.

Bounds come from what the :class:`~mlcbench.arith.Analyzer` knows: loop variables
bound to ranges (``for i in range(16)`` gives ``0 <= i <= 15``), facts from
``constraint_scope`` (``i < 10``), non-negative ``SizeVar``s, and the dtype range
for everything else. They are what decide ``(i * 4 + j) // 4 -> i``: the rest
``j`` must lie in ``[0, 4)``.

Bounds are Python ints, unclamped inside the analysis; the public
:func:`~mlcbench.arith.Analyzer.const_int_bound` clamps them to the dtype range.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..tir import expr as E
from .linear_form import LinearSum, expr_key, to_sum


@dataclass(frozen=True)
class ConstIntBound:
    """``min_value <= expr <= max_value`` for every value the variables can take.

    ``POS_INF`` / ``NEG_INF`` stand for "no bound" (as in TVM).
    """

    min_value: int
    max_value: int

    POS_INF = 2 ** 63 - 1
    NEG_INF = -(2 ** 63)

    def __iter__(self):
        return iter((self.min_value, self.max_value))


class ArithContext:
    """What the analyzer knows: variable ranges, facts, and substitutions.

    ``fact_bounds`` maps an atom key (``expr_key``) or the ``linear_key`` of a sum to
    an interval that holds under the current constraints.
    """

    def __init__(self):
        self.var_bounds: dict[int, tuple] = {}       # id(var) -> (var, lo, hi)
        self.fact_bounds: dict = {}                  # key -> (lo, hi)
        self.true_facts: dict = {}                   # key of a bool expr -> expr
        self.substitutions: dict = {}                # Var -> PrimExpr
        self.keep_alive: list = []                   # keys hold ids: keep their objects

    def snapshot(self):
        return (dict(self.var_bounds), dict(self.fact_bounds), dict(self.true_facts),
                dict(self.substitutions))

    def restore(self, state) -> None:
        self.var_bounds, self.fact_bounds, self.true_facts, self.substitutions = (
            dict(part) for part in state)


def dtype_range(dtype) -> tuple[int, int]:
    if dtype.is_bool:
        return 0, 1
    if dtype.is_integer:
        return dtype.min_value(), dtype.max_value()
    return ConstIntBound.NEG_INF, ConstIntBound.POS_INF


def _intersect(a, b):
    return max(a[0], b[0]), min(a[1], b[1])


def _floordiv_bound(lo, hi, dlo, dhi):
    """Bound of ``floordiv(x, d)`` for ``x in [lo, hi]``, ``d in [dlo, dhi]``, d > 0 or d < 0."""
    corners = [lo // dlo, lo // dhi, hi // dlo, hi // dhi]
    return min(corners), max(corners)


class BoundAnalysis:
    """Bounds of (already simplified) integer expressions under an :class:`ArithContext`.

    ``memo`` dicts are per-query caches shared with the simplifier.
    """

    def __init__(self, ctx: ArithContext, key_memo: dict, sum_memo: dict):
        self.ctx, self.key_memo, self.sum_memo = ctx, key_memo, sum_memo
        self.memo: dict[int, tuple] = {}

    def bound(self, expr: E.PrimExpr) -> tuple[int, int]:
        found = self.memo.get(id(expr))
        if found is not None:
            return found[0]
        cls = type(expr)
        if cls in (E.Add, E.Sub, E.Mul) and expr.dtype.code == "int" and expr.dtype.lanes == 1:
            result = self.bound_sum(to_sum(expr, self.key_memo, self.sum_memo))
        else:
            result = self.bound_atom(expr)
        self.memo[id(expr)] = (result, expr)
        return result

    def bound_sum(self, s: LinearSum) -> tuple[int, int]:
        lo = hi = s.const
        for _, (atom, coeff) in s.terms.items():
            alo, ahi = self.bound_atom(atom)
            if coeff > 0:
                lo, hi = lo + coeff * alo, hi + coeff * ahi
            else:
                lo, hi = lo + coeff * ahi, hi + coeff * alo
        facts = self.ctx.fact_bounds
        if facts and len(s.terms) > 1:
            known = facts.get(s.linear_key())
            if known is not None:
                lo, hi = _intersect((lo, hi), (known[0] + s.const, known[1] + s.const))
        return lo, hi

    def bound_atom(self, expr: E.PrimExpr) -> tuple[int, int]:
        handler = _ATOM_BOUNDS.get(type(expr))
        if handler is None or not (expr.dtype.is_integer or expr.dtype.is_bool):
            return dtype_range(expr.dtype)
        result = handler(self, expr)
        facts = self.ctx.fact_bounds
        if facts:
            known = facts.get(expr_key(expr, self.key_memo))
            if known is not None:
                result = _intersect(result, known)
        return result

    # -- per node -------------------------------------------------------------------
    def _var(self, var):
        entry = self.ctx.var_bounds.get(id(var))
        if entry is not None:
            return entry[1], entry[2]
        lo, hi = dtype_range(var.dtype)
        return (0, hi) if isinstance(var, E.SizeVar) else (lo, hi)

    def _floordiv(self, expr):
        lo, hi = self.bound(expr.a)
        dlo, dhi = self.bound(expr.b)
        if dlo > 0 or dhi < 0:
            return _floordiv_bound(lo, hi, dlo, dhi)
        return dtype_range(expr.dtype)

    def _floormod(self, expr):
        lo, hi = self.bound(expr.a)
        dlo, dhi = self.bound(expr.b)
        if dlo <= 0:
            return dtype_range(expr.dtype)
        if dlo == dhi and lo // dlo == hi // dlo:        # one period: exact
            shift = (lo // dlo) * dlo
            return lo - shift, hi - shift
        if lo >= 0:
            return 0, min(hi, dhi - 1)
        return 0, dhi - 1

    def _truncdiv(self, expr):
        lo, hi = self.bound(expr.a)
        dlo, dhi = self.bound(expr.b)
        if dlo > 0 or dhi < 0:
            corners = [E._c_div(x, d) for x in (lo, hi) for d in (dlo, dhi)]
            return min(corners), max(corners)
        return dtype_range(expr.dtype)

    def _truncmod(self, expr):
        lo, hi = self.bound(expr.a)
        dlo, dhi = self.bound(expr.b)
        if dlo <= 0:
            return dtype_range(expr.dtype)
        if lo >= 0:
            return self._floormod(expr)
        return max(lo, -(dhi - 1)), min(max(hi, 0), dhi - 1)

    def _mul(self, expr):
        (alo, ahi), (blo, bhi) = self.bound(expr.a), self.bound(expr.b)
        corners = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
        return min(corners), max(corners)

    def _min(self, expr):
        (alo, ahi), (blo, bhi) = self.bound(expr.a), self.bound(expr.b)
        return min(alo, blo), min(ahi, bhi)

    def _max(self, expr):
        (alo, ahi), (blo, bhi) = self.bound(expr.a), self.bound(expr.b)
        return max(alo, blo), max(ahi, bhi)

    def _select(self, expr):
        (alo, ahi), (blo, bhi) = self.bound(expr.true_value), self.bound(expr.false_value)
        return min(alo, blo), max(ahi, bhi)

    def _call(self, expr):
        if expr.op == "tir.if_then_else" and expr.dtype.is_integer:
            (alo, ahi), (blo, bhi) = self.bound(expr.args[1]), self.bound(expr.args[2])
            return min(alo, blo), max(ahi, bhi)
        return dtype_range(expr.dtype)

    def _cast(self, expr):
        if expr.value.dtype.is_integer or expr.value.dtype.is_bool:
            return _intersect(self.bound(expr.value), dtype_range(expr.dtype))
        return dtype_range(expr.dtype)

    def _imm(self, expr):
        return expr.value, expr.value


_ATOM_BOUNDS = {
    E.IntImm: BoundAnalysis._imm, E.Var: BoundAnalysis._var, E.SizeVar: BoundAnalysis._var,
    E.FloorDiv: BoundAnalysis._floordiv, E.FloorMod: BoundAnalysis._floormod,
    E.Div: BoundAnalysis._truncdiv, E.Mod: BoundAnalysis._truncmod, E.Mul: BoundAnalysis._mul,
    E.Min: BoundAnalysis._min, E.Max: BoundAnalysis._max, E.Select: BoundAnalysis._select,
    E.Call: BoundAnalysis._call, E.Cast: BoundAnalysis._cast,
}
