"""RemoveNoOp: delete statements that do nothing.

Removed: ``Evaluate`` of a constant (``T.evaluate(0)``); loops whose body does nothing
or whose constant extent is zero; ``if`` statements with a constant condition (the taken
branch stays) or with empty branches; ``let``/``Allocate`` around nothing; stores of a
value into the element it was just loaded from (``A[i] = A[i]``). A sequence that loses
all its statements becomes ``Evaluate(0)``.

Before::

    for i in range(16):
        T.evaluate(0)
    B[0] = A[0]

After::

    B[0] = A[0]
"""
from __future__ import annotations

from ...ir.transform import prim_func_pass
from ..expr import BufferLoad, IntImm, Not
from ..functor import StmtExprMutator
from ..stmt import Evaluate, IfThenElse, seq
from ._common import const_int, is_no_op, same_expr

NO_OP = Evaluate(IntImm("int32", 0))


class _NoOpRemover(StmtExprMutator):
    def visit_PrimExpr(self, expr):
        return expr                     # nothing to remove inside expressions

    def visit_SeqStmt(self, stmt):
        kept = [s for s in (self.visit(s) for s in stmt.seq) if not is_no_op(s)]
        if len(kept) == len(stmt.seq) and all(a is b for a, b in zip(kept, stmt.seq)):
            return stmt
        return seq(*kept) if kept else NO_OP

    def visit_For(self, loop):
        body = self.visit(loop.body)
        if is_no_op(body) or const_int(loop.extent) == 0:
            return NO_OP
        return loop if body is loop.body else loop.replace(body=body)

    def visit_IfThenElse(self, stmt):
        then_case = self.visit(stmt.then_case)
        else_case = self.visit(stmt.else_case) if stmt.else_case is not None else None
        else_case = None if is_no_op(else_case) else else_case
        if isinstance(stmt.condition, IntImm):
            taken = then_case if stmt.condition.value else else_case
            return NO_OP if taken is None or is_no_op(taken) else taken
        if is_no_op(then_case):
            return NO_OP if else_case is None else IfThenElse(Not(stmt.condition), else_case)
        if then_case is stmt.then_case and else_case is stmt.else_case:
            return stmt
        return IfThenElse(stmt.condition, then_case, else_case)

    def visit_LetStmt(self, stmt):
        return self._scoped(stmt)

    def visit_Allocate(self, stmt):
        return self._scoped(stmt)

    def visit_DeclBuffer(self, stmt):
        return self._scoped(stmt)

    def _scoped(self, stmt):
        body = self.visit(stmt.body)
        if is_no_op(body):
            return NO_OP
        return stmt if body is stmt.body else stmt.replace(body=body)

    def visit_BufferStore(self, store):
        value = store.value
        if (isinstance(value, BufferLoad) and value.buffer is store.buffer
                and same_expr(value.indices, store.indices)):
            return NO_OP
        return store


def remove_no_op(stmt):
    """``stmt`` without statements that do nothing (``Evaluate(0)`` if nothing is left)."""
    return _NoOpRemover().visit(stmt)


@prim_func_pass(opt_level=0, name="tir.RemoveNoOp")
def _remove_no_op(func, mod, ctx):
    body = remove_no_op(func.body)
    return func if body is func.body else func.with_body(body)


def RemoveNoOp():
    """Pass: drop ``Evaluate(0)``, empty loops and other statements with no effect."""
    return _remove_no_op

