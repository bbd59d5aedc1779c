"""UnrollLoop: replace ``T.unroll`` loops by copies of their body.

Before::

    for k in T.unroll(3):
        B[k] = A[k] * 2.0

After::

    B[0] = A[0] * 2.0
    B[1] = A[1] * 2.0
    B[2] = A[2] * 2.0

Rules:

* an ``UNROLLED`` loop with a constant extent is always unrolled; each copy gets fresh
  loop and let variables, so every variable is still defined exactly once;
* an ``UNROLLED`` loop whose extent is symbolic stays a ``SERIAL`` loop annotated with
  ``{"pragma_unroll": 1}``, which the code generator turns into LLVM unroll metadata;
* with ``auto_max_step > 0`` (argument, or ``PassContext(config={"tir.UnrollLoop":
  {"auto_max_step": n}})``), a ``SERIAL`` loop with a constant extent is unrolled too
  when ``extent * steps(body) <= auto_max_step`` (``steps`` counts leaf statements,
  multiplied through inner loops). A loop annotation ``pragma_auto_unroll_max_step``
  sets that limit for the loop and the loops inside it (what tuning records use).
"""
from __future__ import annotations

from ...ir.transform import prim_func_pass
from ..expr import IntImm, Let, Var
from ..functor import StmtExprMutator, uses_var
from ..stmt import Evaluate, For, ForKind, LetStmt, SeqStmt, seq
from ._common import const_int, simplify_expr, simplify_stmt

AUTO_STEP_ANNOTATION = "pragma_auto_unroll_max_step"
UNROLL_HINT_ANNOTATION = "pragma_unroll"


def loop_steps(stmt) -> float:
    """Leaf statements executed by ``stmt`` (loops multiply; symbolic extents count as infinite)."""
    if isinstance(stmt, SeqStmt):
        return sum(loop_steps(s) for s in stmt.seq)
    if isinstance(stmt, For):
        extent = const_int(stmt.extent)
        # Infinite steps never fit auto_max_step, so a symbolic loop is never auto-unrolled.
        return float("inf") if extent is None else extent * loop_steps(stmt.body)
    inner = [getattr(stmt, name, None) for name in ("body", "then_case", "else_case")]
    inner = [s for s in inner if s is not None]
    return sum(loop_steps(s) for s in inner) if inner else 1


class _FreshBinders(StmtExprMutator):
    """Copy a statement with new loop and let variables (one definition per variable)."""

    def __init__(self, var_map):
        self.var_map = dict(var_map)

    def visit_Var(self, var):
        return self.var_map.get(var, var)

    def visit_Select(self, op):
        chosen = self._known_branch(op.condition, op.true_value, op.false_value)
        return self.visit(chosen) if chosen is not None else self.generic_visit(op)

    def visit_Call(self, op):
        chosen = self._known_branch(*op.args) if op.op == "tir.if_then_else" else None
        return self.visit(chosen) if chosen is not None else self.generic_visit(op)

    def _known_branch(self, condition, true_value, false_value):
        """The branch taken when the loop variable's value decides the condition: the
        other is not copied (a body that picks its iteration's expression by the loop
        variable, as a Winograd transform does, is copied once per iteration, not once
        per iteration and choice). Only a condition left without variables is folded
        here: one that still reads another loop's variable (a padding's bound test) is
        decided, if at all, when the copies are simplified with those loops' ranges."""
        condition = self.visit(condition)
        if uses_var(condition, lambda var: True):
            return None
        decided = simplify_expr(condition)
        if not isinstance(decided, IntImm):
            return None
        return true_value if decided.value else false_value

    def _fresh(self, var):
        new = Var(var.name, var.dtype, var.type_annotation)
        self.var_map[var] = new
        return new

    def visit_For(self, loop):
        loop_min, extent = self.visit(loop.min), self.visit(loop.extent)
        var = self._fresh(loop.loop_var)
        return loop.replace(loop_var=var, min=loop_min, extent=extent, body=self.visit(loop.body))

    def visit_LetStmt(self, let):
        value = self.visit(let.value)
        return LetStmt(self._fresh(let.var), value, self.visit(let.body))

    def visit_Let(self, let):
        value = self.visit(let.value)
        return Let(self._fresh(let.var), value, self.visit(let.body))


def unroll(loop: For, body=None, simplify: bool = True):
    """The statements of ``loop`` written out once per iteration (each copy simplified,
    unless ``simplify`` is false because an enclosing unrolled loop will do it)."""
    body = loop.body if body is None else body
    copies = []
    for k in range(const_int(loop.extent)):
        # Fresh binders per copy: a variable may be defined only once in the function.
        copy = _FreshBinders({loop.loop_var: loop.min + k}).visit(body)
        copies.append(simplify_stmt(copy) if simplify else copy)
    return seq(*copies) if copies else Evaluate(0)


class _Unroller(StmtExprMutator):
    """Unrolls inner loops first; only the outermost unrolled loop of a nest simplifies
    its copies, so each statement is simplified once, not once per enclosing unrolled
    loop (a nest of three unrolled loops simplified the innermost body three times)."""

    def __init__(self, auto_max_step: int):
        self.auto_max_step = auto_max_step
        self.inside_unrolled = False

    def visit_For(self, loop: For):
        saved, saved_inside = self.auto_max_step, self.inside_unrolled
        if AUTO_STEP_ANNOTATION in loop.annotations:
            self.auto_max_step = int(loop.annotations[AUTO_STEP_ANNOTATION])
        extent = const_int(loop.extent)
        # Unrolling keeps the count of leaf statements, so the decision can be taken
        # before the body is (and its inner loops are) unrolled.
        unrolls = extent is not None and (loop.kind == ForKind.UNROLLED or (
            loop.kind == ForKind.SERIAL and self.auto_max_step > 0
            and extent * loop_steps(loop.body) <= self.auto_max_step))
        self.inside_unrolled = saved_inside or unrolls
        body = self.visit(loop.body)
        self.auto_max_step, self.inside_unrolled = saved, saved_inside
        if unrolls:
            return unroll(loop, body, simplify=not saved_inside)
        if loop.kind == ForKind.UNROLLED:
            annotations = {**loop.annotations, UNROLL_HINT_ANNOTATION: 1}
            return loop.replace(kind=ForKind.SERIAL, body=body, annotations=annotations)
        return loop if body is loop.body else loop.replace(body=body)


def _configured_max_step(ctx, auto_max_step):
    if auto_max_step is not None:
        return int(auto_max_step)
    config = ctx.config.get("tir.UnrollLoop", {}) if ctx is not None else {}
    return int(config.get("auto_max_step", 0))


def UnrollLoop(auto_max_step: int | None = None):
    """Pass: unroll ``T.unroll`` loops (and small serial loops when ``auto_max_step > 0``).

    ``auto_max_step`` defaults to the PassContext config ``{"tir.UnrollLoop":
    {"auto_max_step": n}}``, else 0 (only explicit unrolling).
    """
    @prim_func_pass(opt_level=0, name="tir.UnrollLoop")
    def unroll_loop(func, mod, ctx):
        body = _Unroller(_configured_max_step(ctx, auto_max_step)).visit(func.body)
        return func if body is func.body else func.with_body(body)
    return unroll_loop
