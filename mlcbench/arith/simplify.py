"""The expression simplifier: bottom-up rewriting with a table of rules per node type.

Children are simplified first; then the rules listed for the node's class in
:data:`RULES` are tried in order and the first that applies wins. A rule is a plain
function ``rule(simplifier, expr) -> expr | None`` whose result is already simple.

Integer ``+ - *`` go through the linear form of :mod:`.linear_form`, so like terms
collect (``(i * 4 + j) - i * 4 -> j``); ``//`` and ``%`` by a positive constant split
the sum into the part divisible by the constant and a rest whose bounds decide the
remainder::

    (i * 4 + j) // 4  ->  i        when 0 <= j < 4
    (i * 4 + j) % 4   ->  j
    (i * 4 + j) // 8  ->  i // 2   (common factor 4, and 0 <= j < 4)

A rewrite never grows the expression: when the canonical form is larger than the
input with simplified children (``(i + j) * 4`` vs ``i * 4 + j * 4``), the input stays.
Floats are only constant-folded. Comparisons, ``min``/``max`` and ``select`` fold when
the bounds decide them.
"""
from __future__ import annotations

from math import gcd

from ..ir.errors import IRError
from ..tir import expr as E
from ..tir.functor import rebuild
from .bound import ArithContext, BoundAnalysis
from .linear_form import (LinearSum, binary_key, expr_key, expr_size, make, sum_to_expr,
                          to_sum)


class ExprSimplifier:
    """Simplifies expressions under what an :class:`ArithContext` knows.

    Results and bounds are cached per top-level call only, because the context may
    change in between. Structural facts about a node (its key, linear form and size)
    do not depend on the context, so those caches live across calls until they hold
    :attr:`STRUCTURAL_CACHE_LIMIT` nodes: the schedule primitives simplify the same
    index expressions many times over.
    """

    STRUCTURAL_CACHE_LIMIT = 200_000

    def __init__(self, ctx: ArithContext):
        self.ctx = ctx
        self.key_memo: dict = {}
        self.sum_memo: dict = {}
        self.size_memo: dict = {}
        self.reset()

    def reset(self) -> None:
        self.memo: dict[int, tuple] = {}
        if (len(self.key_memo) + len(self.sum_memo) + len(self.size_memo)
                > self.STRUCTURAL_CACHE_LIMIT):
            self.key_memo.clear()
            self.sum_memo.clear()
            self.size_memo.clear()
        self.bounds = BoundAnalysis(self.ctx, self.key_memo, self.sum_memo)

    def __call__(self, expr: E.PrimExpr) -> E.PrimExpr:
        self.reset()
        return self.visit(expr)

    # -- helpers shared by the rules --------------------------------------------------
    def key(self, expr):
        return expr_key(expr, self.key_memo)

    def sum_of(self, expr) -> LinearSum:
        return to_sum(expr, self.key_memo, self.sum_memo)

    def bound(self, expr) -> tuple[int, int]:
        return self.bounds.bound(expr)

    def diff_bound(self, a, b) -> tuple[int, int]:
        """Bounds of ``a - b`` after collecting like terms."""
        return self.bounds.bound_sum(self.sum_of(a).copy().add(self.sum_of(b), -1))

    def size(self, expr) -> int:
        return expr_size(expr, self.size_memo)

    def smaller(self, candidate, original):
        """The canonical ``candidate`` unless it is larger than (or the same as) ``original``.

        Returning ``original`` itself when nothing changed lets mutators keep sharing.
        """
        if self.size(candidate) > self.size(original) or self.key(candidate) == self.key(original):
            return original
        return candidate

    # -- traversal --------------------------------------------------------------------
    def visit(self, expr: E.PrimExpr) -> E.PrimExpr:
        found = self.memo.get(id(expr))
        if found is not None:
            return found[0]
        if type(expr) is E.Let:
            result = self._visit_let(expr)
        else:
            chosen = self._known_branch(expr)
            result = self.visit(chosen) if chosen is not None else \
                self._apply_rules(self._visit_children(expr))
        self.memo[id(expr)] = (result, expr)
        self.memo[id(result)] = (result, result)
        return result

    def _known_branch(self, expr):
        """The branch a select or ``if_then_else`` takes when its condition simplifies to
        a constant, else None: only that branch is then simplified. An unrolled loop
        whose body chooses among its iterations' expressions by the loop variable (a
        Winograd transform's 36 positions) would otherwise simplify every choice in
        every copy."""
        cls = type(expr)
        if cls is E.Select:
            condition, true_value, false_value = (expr.condition, expr.true_value,
                                                  expr.false_value)
        elif cls is E.Call and expr.op == "tir.if_then_else":
            condition, true_value, false_value = expr.args
        else:
            return None
        condition = self.visit(condition)
        if type(condition) is not E.IntImm:
            return None
        return true_value if condition.value else false_value

    def _visit_children(self, expr):
        cls = type(expr)
        if cls is E.IntImm or cls is E.FloatImm or cls is E.StringImm:
            return expr
        if cls is E.Var or cls is E.SizeVar:
            return self.ctx.substitutions.get(expr, expr)
        if isinstance(expr, E.BinaryOp):
            a, b = self.visit(expr.a), self.visit(expr.b)
            if a is expr.a and b is expr.b and not (isinstance(a, _IMMS) and isinstance(b, _IMMS)):
                return expr
            try:
                return E.binary(cls, a, b)
            except IRError:                       # x // 0 with constants: leave it alone
                return cls(a, b, expr.dtype)
        changes = {}
        for field in expr._fields:
            value = getattr(expr, field.name)
            if isinstance(value, E.PrimExpr):
                new = self.visit(value)
            elif isinstance(value, tuple) and any(isinstance(v, E.PrimExpr) for v in value):
                new = tuple(self.visit(v) if isinstance(v, E.PrimExpr) else v for v in value)
                new = value if all(x is y for x, y in zip(new, value)) else new
            else:
                continue
            if new is not value:
                changes[field.name] = new
        if not changes:
            return expr
        if cls is E.Cast:
            return E.cast(expr.dtype, changes["value"])
        return rebuild(expr, changes)

    def _apply_rules(self, expr):
        for rule in RULES.get(type(expr), ()):
            result = rule(self, expr)
            if result is not None:
                expr = result
                break
        if self.ctx.true_facts and expr.dtype.is_bool and type(expr) is not E.IntImm:
            decided = known_fact(self, expr)
            expr = expr if decided is None else decided
        return expr

    def _visit_let(self, expr: E.Let):
        value = self.visit(expr.value)
        if not isinstance(value, (E.IntImm, E.FloatImm, E.Var)):
            body = self.visit(expr.body)
            if value is expr.value and body is expr.body:
                return expr
            return E.Let(expr.var, value, body)
        # Inline the constant: the body is simplified with its own caches, since the
        # same node may appear elsewhere where the variable means something else.
        saved = (self.memo, self.key_memo, self.sum_memo, self.size_memo, self.bounds)
        saved_sub = self.ctx.substitutions.get(expr.var)
        self.reset()
        self.ctx.substitutions[expr.var] = value
        try:
            return self.visit(expr.body)
        finally:
            if saved_sub is None:
                self.ctx.substitutions.pop(expr.var, None)
            else:
                self.ctx.substitutions[expr.var] = saved_sub
            self.memo, self.key_memo, self.sum_memo, self.size_memo, self.bounds = saved

    # -- division by a positive constant, on linear forms -----------------------------
    def floordiv_sum(self, s: LinearSum, c: int) -> LinearSum:
        """``floordiv(s, c)`` as a linear sum (c > 0)."""
        if c == 1:
            return s
        nested = _single_atom(s)
        if type(nested) is E.FloorDiv and _positive_const(nested.b) and _fits(
                nested.b.value * c, s.dtype):
            return self.floordiv_sum(self.sum_of(nested.a), nested.b.value * c)
        quotient, rest = _split_divisible(s, c)
        lo, hi = self.bounds.bound_sum(rest)
        if lo // c == hi // c:
            quotient.const += lo // c
            return quotient
        factored = self._common_factor(rest, c)
        if factored is not None:
            g, big, _ = factored
            return quotient.add(self.floordiv_sum(big, c // g))
        if rest.const % c == 0:
            quotient.const += rest.const // c
            rest.const = 0
        atom = make(E.FloorDiv, sum_to_expr(rest), E.IntImm(s.dtype, c))
        return quotient.add(LinearSum.atom(self.key(atom), atom))

    def floormod_sum(self, s: LinearSum, c: int) -> LinearSum:
        """``floormod(s, c)`` as a linear sum (c > 0)."""
        if c == 1:
            return LinearSum(s.dtype)
        nested = _single_atom(s)
        if type(nested) is E.FloorMod and _positive_const(nested.b) and nested.b.value % c == 0:
            return self.floormod_sum(self.sum_of(nested.a), c)
        _, rest = _split_divisible(s, c)
        rest.const %= c
        lo, hi = self.bounds.bound_sum(rest)
        if lo // c == hi // c:
            rest.const -= (lo // c) * c
            return rest
        factored = self._common_factor(rest, c)
        if factored is not None:
            g, big, small = factored
            return self.floormod_sum(big, c // g).scaled(g).add(small)
        atom = make(E.FloorMod, sum_to_expr(rest), E.IntImm(s.dtype, c))
        return LinearSum.atom(self.key(atom), atom)

    def _common_factor(self, rest: LinearSum, c: int):
        """Write ``rest = g * big + small`` with ``g | c`` and ``0 <= small < g``.

        Then ``floordiv(rest, c) = floordiv(big, c / g)`` and
        ``floormod(rest, c) = floormod(big, c / g) * g + small``.
        """
        factors = sorted({gcd(abs(coeff), c) for _, coeff in rest.terms.values()}, reverse=True)
        for g in factors:
            if g == 1:
                break
            big, small = LinearSum(rest.dtype), LinearSum(rest.dtype, rest.const)
            for key, (atom, coeff) in rest.terms.items():
                (big.add_term(key, atom, coeff // g) if coeff % g == 0
                 else small.add_term(key, atom, coeff))
            lo, hi = self.bounds.bound_sum(small)
            if big.terms and lo // g == hi // g:
                shift = lo // g
                big.const += shift
                small.const -= shift * g
                return g, big, small
        return None

    def fold_div_mod_pairs(self, s: LinearSum) -> LinearSum:
        """``(x // c) * c * k + (x % c) * k -> x * k`` inside a sum (in place)."""
        progress = True
        while progress:
            progress = False
            for key, (atom, coeff) in list(s.terms.items()):
                if type(atom) is not E.FloorMod or not _positive_const(atom.b):
                    continue
                c = atom.b.value
                div_key = binary_key(E.FloorDiv, atom.dtype, self.key(atom.a), self.key(atom.b))
                partner = s.terms.get(div_key)
                if key in s.terms and partner is not None and partner[1] == coeff * c:
                    del s.terms[key], s.terms[div_key]
                    s.add(self.sum_of(atom.a), coeff)
                    progress = True
        return s


_IMMS = (E.IntImm, E.FloatImm)


# -- small predicates ---------------------------------------------------------------------

def _positive_const(expr) -> bool:
    return type(expr) is E.IntImm and expr.value > 0


def _fits(value: int, dtype) -> bool:
    return dtype.min_value() <= value <= dtype.max_value()


def _single_atom(s: LinearSum):
    if s.const == 0 and len(s.terms) == 1:
        (atom, coeff), = s.terms.values()
        if coeff == 1:
            return atom
    return None


def _split_divisible(s: LinearSum, c: int):
    """``s = c * quotient + rest``: terms whose coefficient ``c`` divides go to quotient."""
    quotient, rest = LinearSum(s.dtype), LinearSum(s.dtype, s.const)
    for key, (atom, coeff) in s.terms.items():
        if coeff % c == 0:
            quotient.add_term(key, atom, coeff // c)
        else:
            rest.add_term(key, atom, coeff)
    return quotient, rest


from .rules import RULES, known_fact  # noqa: E402  (the rule table refers to ExprSimplifier's helpers)
