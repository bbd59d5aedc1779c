"""Simplifying statements: every expression is simplified knowing the loops around it.

``for i in range(16): A[(i * 4 + 3) // 4] = ...`` becomes ``A[i] = ...`` because the
loop binds ``i`` to ``[0, 16)`` while its body is visited. Block iteration variables
are bound to their domains, ``if`` branches are visited under their condition (or its
negation), branches with a provable condition are dropped, and ``LetStmt`` of
constants are inlined. Unit loops stay unless ``remove_unit_loops=True``, so the
printed program remains close to what the user wrote.
"""
from __future__ import annotations

from contextlib import contextmanager

from ..tir import expr as E
from ..tir import stmt as S
from ..tir.functor import StmtExprMutator, substitute


class StmtSimplifier(StmtExprMutator):
    def __init__(self, analyzer, remove_unit_loops: bool = False):
        self.analyzer = analyzer
        self.remove_unit_loops = remove_unit_loops

    def visit_PrimExpr(self, expr):
        return self.analyzer.simplify(expr)

    @contextmanager
    def _bound(self, var, rng: E.Range):
        ctx = self.analyzer._ctx
        saved = ctx.var_bounds.get(id(var))
        self.analyzer.bind(var, rng, allow_override=True)
        try:
            yield
        finally:
            if saved is None:
                ctx.var_bounds.pop(id(var), None)
            else:
                ctx.var_bounds[id(var)] = saved

    def visit_For(self, op: S.For):
        lo, extent = self.visit(op.min), self.visit(op.extent)
        with self._bound(op.loop_var, E.Range(lo, extent)):
            body = self.visit(op.body)
        if self.remove_unit_loops and type(extent) is E.IntImm and extent.value == 1:
            return self.visit(substitute(body, {op.loop_var: lo}))
        if lo is op.min and extent is op.extent and body is op.body:
            return op
        return op.replace(min=lo, extent=extent, body=body)

    def visit_IfThenElse(self, op: S.IfThenElse):
        cond = self.visit(op.condition)
        if type(cond) is E.IntImm:
            taken = op.then_case if cond.value else op.else_case
            return self.visit(taken) if taken is not None else S.seq()
        with self.analyzer.constraint_scope(cond):
            then_case = self.visit(op.then_case)
        else_case = op.else_case
        if else_case is not None:
            with self.analyzer.constraint_scope(E.Not(cond)):
                else_case = self.visit(else_case)
        if cond is op.condition and then_case is op.then_case and else_case is op.else_case:
            return op
        return S.IfThenElse(cond, then_case, else_case)

    def visit_LetStmt(self, op: S.LetStmt):
        value = self.visit(op.value)
        if isinstance(value, (E.IntImm, E.FloatImm, E.Var)):
            return self.visit(substitute(op.body, {op.var: value}))
        body = self.visit(op.body)
        if value is op.value and body is op.body:
            return op
        return S.LetStmt(op.var, value, body)

    def visit_SeqStmt(self, op: S.SeqStmt):
        stmts = [self.visit(s) for s in op.seq]
        if all(a is b for a, b in zip(stmts, op.seq)):
            return op
        kept = [s for s in stmts if not _is_no_op(s)]
        return S.seq(*kept)

    def visit_Block(self, op: S.Block):
        with _bound_all(self, op.iter_vars):
            return self.generic_visit(op)

    def visit_IterVar(self, op: S.IterVar):
        dom = self.visit(op.dom)
        return op if dom is op.dom else op.replace(dom=dom)


@contextmanager
def _bound_all(simplifier: StmtSimplifier, iter_vars):
    if not iter_vars:
        yield
        return
    first, rest = iter_vars[0], iter_vars[1:]
    with simplifier._bound(first.var, first.dom), _bound_all(simplifier, rest):
        yield


def _is_no_op(stmt) -> bool:
    return type(stmt) is S.Evaluate and type(stmt.value) is E.IntImm


def simplify_stmt(stmt, analyzer, remove_unit_loops: bool = False):
    """Simplify every expression of ``stmt`` under the loop ranges that enclose it."""
    return StmtSimplifier(analyzer, remove_unit_loops).visit(stmt)
