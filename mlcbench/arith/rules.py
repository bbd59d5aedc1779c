"""The simplifier's rules, as data: ``RULES[NodeClass]`` lists rewrites tried in order.

Each rule receives the :class:`~mlcbench.arith.simplify.ExprSimplifier` (for bounds,
linear forms and keys) and a node whose children are already simplified, and
returns a simpler node or ``None`` when it does not apply. Adding a rule is adding
a row; no traversal code changes.
"""
from __future__ import annotations

from ..tir import expr as E
from .linear_form import LinearSum, is_linear_dtype, make, sum_to_expr

TRUE = E.IntImm("bool", 1)
FALSE = E.IntImm("bool", 0)


def _bool(value: bool) -> E.IntImm:
    return TRUE if value else FALSE


def _is_int(expr) -> bool:
    return is_linear_dtype(expr.dtype)


# -- + - * ---------------------------------------------------------------------------------

def linear_sum(simp, expr):
    """Collect like terms: ``x * 1``, ``x + 0``, ``x - x``, ``(i + 1) * 4 - 4 -> i * 4``."""
    if not _is_int(expr):
        return None
    s = simp.sum_of(expr)
    if any(type(atom) is E.FloorMod for atom, _ in s.terms.values()):
        s = simp.fold_div_mod_pairs(s.copy())
    return simp.smaller(sum_to_expr(s), expr)


# -- // and % by positive constants -----------------------------------------------------

def floordiv_by_const(simp, expr):
    """``(i * 4 + j) // 4 -> i``, ``x // 1 -> x``, ``(x // a) // b -> x // (a * b)``."""
    if not (_is_int(expr) and type(expr.b) is E.IntImm and expr.b.value > 0):
        return None
    result = simp.floordiv_sum(simp.sum_of(expr.a), expr.b.value)
    return simp.smaller(sum_to_expr(result), expr)


def floormod_by_const(simp, expr):
    """``(i * 4 + j) % 4 -> j``, ``x % 1 -> 0``, ``(x % 8) % 4 -> x % 4``."""
    if not (_is_int(expr) and type(expr.b) is E.IntImm and expr.b.value > 0):
        return None
    result = simp.floormod_sum(simp.sum_of(expr.a), expr.b.value)
    return simp.smaller(sum_to_expr(result), expr)


def truncdiv_of_non_negative(simp, expr):
    """Truncating ``/`` and ``%`` equal the floor versions when both sides are >= 0."""
    if not (_is_int(expr) and type(expr.b) is E.IntImm and expr.b.value > 0):
        return None
    if simp.bound(expr.a)[0] < 0:
        return None
    floor_cls = E.FloorDiv if type(expr) is E.Div else E.FloorMod
    rule = floordiv_by_const if floor_cls is E.FloorDiv else floormod_by_const
    result = rule(simp, make(floor_cls, expr.a, expr.b))
    if isinstance(result, floor_cls) and result.a is expr.a:
        return None                               # nothing gained: keep the user's operator
    return simp.smaller(result, expr)


# -- min / max -----------------------------------------------------------------------------

def min_max_by_bounds(simp, expr):
    """``min(x, x) -> x``; ``min(i, 16) -> i`` when ``i < 16`` is known."""
    a, b = expr.a, expr.b
    if simp.key(a) == simp.key(b):
        return a
    if not _is_int(expr):
        return None
    lo, hi = simp.diff_bound(a, b)
    a_first = hi <= 0 if type(expr) is E.Min else lo >= 0
    b_first = lo >= 0 if type(expr) is E.Min else hi <= 0
    if a_first:
        return a
    if b_first:
        return b
    return None


def min_max_constant_last(simp, expr):
    """``min(4, x) -> min(x, 4)``: constants go to the right, as in sums."""
    if type(expr.a) is E.IntImm and type(expr.b) is not E.IntImm:
        return simp.visit(make(type(expr), expr.b, expr.a))
    return None


def nested_min_max_constants(simp, expr):
    """``min(min(x, 4), 8) -> min(x, 4)``: merge constant bounds of the same operator."""
    cls, a, b = type(expr), expr.a, expr.b
    if type(a) is cls and type(b) is E.IntImm and type(a.b) is E.IntImm:
        return simp.visit(make(cls, a.a, E.binary(cls, a.b, b)))
    return None


# -- comparisons ----------------------------------------------------------------------------

_DECIDE = {   # cmp -> (true when diff bounds (lo, hi) say so, false when ...)
    E.LT: (lambda lo, hi: hi < 0, lambda lo, hi: lo >= 0),
    E.LE: (lambda lo, hi: hi <= 0, lambda lo, hi: lo > 0),
    E.GT: (lambda lo, hi: lo > 0, lambda lo, hi: hi <= 0),
    E.GE: (lambda lo, hi: lo >= 0, lambda lo, hi: hi < 0),
    E.EQ: (lambda lo, hi: lo == hi == 0, lambda lo, hi: lo > 0 or hi < 0),
    E.NE: (lambda lo, hi: lo > 0 or hi < 0, lambda lo, hi: lo == hi == 0),
}
NEGATE = {E.LT: E.GE, E.LE: E.GT, E.GT: E.LE, E.GE: E.LT, E.EQ: E.NE, E.NE: E.EQ}


def compare_by_bounds(simp, expr):
    """``i < 16 -> True`` for ``i in [0, 16)``; ``x == x -> True``."""
    if not _is_int(expr.a):
        return None
    lo, hi = simp.diff_bound(expr.a, expr.b)
    is_true, is_false = _DECIDE[type(expr)]
    if is_true(lo, hi):
        return TRUE
    if is_false(lo, hi):
        return FALSE
    return None


def compare_move_constant(simp, expr):
    """``i + 1 < 5 -> i < 4``: constants gather on the constant side."""
    a, b = expr.a, expr.b
    if not _is_int(a) or (type(a) is E.IntImm) == (type(b) is E.IntImm):
        return None
    flip = type(a) is E.IntImm
    symbolic, constant = (b, a) if flip else (a, b)
    s = simp.sum_of(symbolic)
    if s.const == 0 or not s.terms:
        return None
    moved = LinearSum(s.dtype, 0, s.terms)
    new_constant = E.IntImm(constant.dtype, constant.value - s.const)
    operands = (new_constant, sum_to_expr(moved)) if flip else (sum_to_expr(moved), new_constant)
    return type(expr)(*operands, expr.dtype)


def known_fact(simp, expr):
    """A condition given to ``constraint_scope`` (or its negation) is decided.

    Applied to every boolean result, after the rules of its node type.
    """
    facts = simp.ctx.true_facts
    if facts:
        value = facts.get(simp.key(expr))
        if value is not None:
            return _bool(value)
    return None


# -- logic ------------------------------------------------------------------------------------

def and_or_constants(simp, expr):
    """``True and x -> x``, ``False and x -> False``, ``x or x -> x``."""
    is_and = type(expr) is E.And
    for this, other in ((expr.a, expr.b), (expr.b, expr.a)):
        if type(this) is E.IntImm and this.dtype.lanes == 1:
            if bool(this.value) == is_and:
                return other if other.dtype == expr.dtype else None
            return _bool(not is_and)
    if simp.key(expr.a) == simp.key(expr.b):
        return expr.a
    for this, other in ((expr.a, expr.b), (expr.b, expr.a)):
        if type(this) is E.Not and simp.key(this.a) == simp.key(other):
            return _bool(not is_and)            # x and not x / x or not x
    return None


def not_rules(simp, expr):
    """``not True -> False``, ``not not x -> x``, ``not (i < n) -> i >= n`` (integers)."""
    a = expr.a
    if type(a) is E.IntImm:
        return _bool(not a.value)
    if type(a) is E.Not:
        return a.a
    if type(a) in NEGATE and _is_int(a.a):
        return simp.visit(NEGATE[type(a)](a.a, a.b, a.dtype))
    return None


# -- select ------------------------------------------------------------------------------------

def select_known_condition(simp, expr):
    """``select(True, a, b) -> a``; ``select(c, a, a) -> a``."""
    if type(expr) is E.Call:
        if expr.op != "tir.if_then_else":
            return None
        condition, true_value, false_value = expr.args
    else:
        condition, true_value, false_value = expr.condition, expr.true_value, expr.false_value
    if type(condition) is E.IntImm:
        return true_value if condition.value else false_value
    if simp.key(true_value) == simp.key(false_value):
        return true_value
    return None


RULES = {
    E.Add: [linear_sum],
    E.Sub: [linear_sum],
    E.Mul: [linear_sum],
    E.FloorDiv: [floordiv_by_const],
    E.FloorMod: [floormod_by_const],
    E.Div: [truncdiv_of_non_negative],
    E.Mod: [truncdiv_of_non_negative],
    E.Min: [min_max_by_bounds, min_max_constant_last, nested_min_max_constants],
    E.Max: [min_max_by_bounds, min_max_constant_last, nested_min_max_constants],
    E.And: [and_or_constants],
    E.Or: [and_or_constants],
    E.Not: [not_rules],
    E.Select: [select_known_condition],
    E.Call: [select_known_condition],
    **{cmp: [compare_by_bounds, compare_move_constant] for cmp in _DECIDE},
}
