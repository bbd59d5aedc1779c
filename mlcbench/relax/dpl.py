"""A small dataflow pattern language: match call trees and rewrite them.

Patterns look through variable bindings, so ``is_op("relax.add")(is_op("relax.multiply")
(wildcard(), wildcard()), wildcard())`` matches ``lv1 = R.add(lv0, c)`` when
``lv0 = R.multiply(a, b)`` in the same function::

    a, b, c = wildcard(), wildcard(), wildcard()
    pattern = is_op("relax.add")(is_op("relax.multiply")(a, b), c)

    def rewriter(expr, matches):
        return relax.op.ewise_fma(matches[a], matches[b], matches[c])

    new_func = rewrite_call(pattern, rewriter, func)
"""
from __future__ import annotations

from ..ir.errors import InvalidTypeError
from ..ir.op import Op
from .expr import Call, Constant, Var
from .expr_functor import PyExprMutator


class DFPattern:
    """Base of patterns. ``p.match(expr)`` tests; ``p(args...)`` makes a call pattern."""

    def __call__(self, *args):
        return CallPattern(self, tuple(args))

    def match(self, expr, var2val: dict | None = None) -> bool:
        return _match(self, expr, {}, var2val or {})

    def extract_matched_expr(self, expr, var2val: dict | None = None) -> dict | None:
        """``{pattern: matched expression}`` for every sub-pattern, or None."""
        matches: dict = {}
        return matches if _match(self, expr, matches, var2val or {}) else None

    def __or__(self, other):
        return OrPattern(self, other)

    def has_attr(self, attrs: dict) -> "DFPattern":
        return AttrPattern(self, dict(attrs))


class WildcardPattern(DFPattern):
    pass


class ConstantPattern(DFPattern):
    pass


class VarPattern(DFPattern):
    def __init__(self, name: str = ""):
        self.name = name


class ExprPattern(DFPattern):
    def __init__(self, expr):
        self.expr = expr


class CallPattern(DFPattern):
    def __init__(self, op: DFPattern, args: tuple):
        self.op, self.args = op, args


class OrPattern(DFPattern):
    def __init__(self, left: DFPattern, right: DFPattern):
        self.left, self.right = left, right


class AttrPattern(DFPattern):
    def __init__(self, pattern: DFPattern, attrs: dict):
        self.pattern, self.attrs = pattern, attrs


def wildcard() -> WildcardPattern:
    """Matches any expression."""
    return WildcardPattern()


def is_const() -> ConstantPattern:
    """Matches a Constant (also through a variable bound to one)."""
    return ConstantPattern()


def is_var(name: str = "") -> VarPattern:
    """Matches a variable (with that name hint, when given)."""
    return VarPattern(name)


def is_expr(expr) -> ExprPattern:
    """Matches exactly ``expr`` (the same object)."""
    return ExprPattern(expr)


def is_op(op_name: str) -> ExprPattern:
    """Matches the operator ``op_name``; call it with argument patterns."""
    return ExprPattern(Op.get(op_name))


def _match(pattern, expr, matches: dict, var2val: dict) -> bool:
    ok = _match_here(pattern, expr, matches, var2val)
    if not ok and isinstance(expr, Var) and expr in var2val and \
            not isinstance(pattern, (VarPattern, WildcardPattern)):
        return _match(pattern, var2val[expr], matches, var2val)
    if ok:
        matches[pattern] = expr
    return ok


def _match_here(pattern, expr, matches, var2val) -> bool:
    if isinstance(pattern, WildcardPattern):
        return True
    if isinstance(pattern, ConstantPattern):
        return isinstance(expr, Constant)
    if isinstance(pattern, VarPattern):
        return isinstance(expr, Var) and (not pattern.name or expr.name_hint == pattern.name)
    if isinstance(pattern, ExprPattern):
        return expr is pattern.expr
    if isinstance(pattern, OrPattern):
        return _match(pattern.left, expr, matches, var2val) or \
            _match(pattern.right, expr, matches, var2val)
    if isinstance(pattern, AttrPattern):
        return _match(pattern.pattern, expr, matches, var2val) and isinstance(expr, Call) and \
            all(expr.attrs.get(k) == v for k, v in pattern.attrs.items())
    if isinstance(pattern, CallPattern):
        if not isinstance(expr, Call) or len(expr.args) != len(pattern.args):
            return False
        return _match(pattern.op, expr.op, matches, var2val) and all(
            _match(p, a, matches, var2val) for p, a in zip(pattern.args, expr.args))
    raise InvalidTypeError(f"unknown pattern {type(pattern).__name__}")


class _Rewriter(PyExprMutator):
    def __init__(self, pattern, rewriter):
        super().__init__()
        self.pattern, self.rewriter = pattern, rewriter
        self.bindings: dict = {}

    def visit_binding(self, binding):
        super().visit_binding(binding)
        new_var = self.var_remap_.get(binding.var, binding.var)
        self.bindings[new_var] = self.builder_.lookup_binding(new_var)

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        matches = self.pattern.extract_matched_expr(call, self.bindings)
        if matches is None:
            return call
        return self.rewriter(call, matches)


def rewrite_call(pattern: DFPattern, rewriter, func):
    """Replace every call matching ``pattern`` by ``rewriter(call, matches)``; bindings that
    become unused are removed."""
    from .analysis import remove_all_unused
    return remove_all_unused(_Rewriter(pattern, rewriter).visit_expr(func))
