"""Small helpers shared by the lowering passes."""
from __future__ import annotations

from ...ir.node import Node
from ..expr import IntImm, PrimExpr
from ..functor import StmtExprMutator
from ..stmt import Evaluate, Stmt


def const_int(expr) -> int | None:
    """The value of an integer constant, ``None`` for anything symbolic."""
    return expr.value if isinstance(expr, IntImm) and not expr.dtype.is_bool else None


def plus(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a + b`` without a ``+ 0`` (constants fold when the expression is built)."""
    if const_int(a) == 0:
        return b
    return a if const_int(b) == 0 else a + b


def times(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a * b`` without a ``* 1``."""
    if const_int(a) == 1:
        return b
    return a if const_int(b) == 1 else a * b


def is_true(expr) -> bool:
    """True for the constant ``True`` (a trivial block predicate or condition)."""
    return isinstance(expr, IntImm) and bool(expr.value)


def is_no_op(stmt: Stmt | None) -> bool:
    """``Evaluate`` of a constant does nothing (it is how an empty body is spelled)."""
    return stmt is None or (isinstance(stmt, Evaluate) and isinstance(stmt.value, IntImm))


def _analyzer():
    """An ``arith.Analyzer`` when the arithmetic package provides one, else ``None``."""
    try:
        from ...arith import Analyzer
    except ImportError:
        return None
    return Analyzer()


def simplify_expr(expr: PrimExpr, analyzer=None) -> PrimExpr:
    """Simplify with the arithmetic analyzer; constants are already folded on build."""
    analyzer = analyzer or _analyzer()
    if analyzer is None:
        return expr
    result = analyzer.simplify(expr)
    return result if result is not None else expr


class _SimplifyExprs(StmtExprMutator):
    def __init__(self, analyzer):
        self.analyzer = analyzer

    def visit_PrimExpr(self, expr):
        new = simplify_expr(expr, self.analyzer)
        return expr if new is expr or same_expr(new, expr) else new


def same_expr(a, b) -> bool:
    """Structurally equal with variables compared by identity (``A[i]`` is not ``A[j]``)."""
    if a is b:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_expr(x, y) for x, y in zip(a, b))
    if type(a) is not type(b) or not isinstance(a, Node) or a._binder:
        return not isinstance(a, Node) and not isinstance(b, Node) and a == b
    return all(same_expr(getattr(a, f.name), getattr(b, f.name)) for f in a._fields)


def simplify_stmt(stmt: Stmt) -> Stmt:
    """Simplify every expression of ``stmt`` (the same object comes back when none changed)."""
    analyzer = _analyzer()
    if analyzer is None:
        return stmt
    return _SimplifyExprs(analyzer).visit(stmt)
