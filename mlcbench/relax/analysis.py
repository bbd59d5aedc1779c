"""Questions about Relax functions: which variables are free, bound, used.

>>> relax.analysis.remove_all_unused(func)     # drop bindings nobody reads
"""
from __future__ import annotations

from .expr import Call, ExternFunc, Function, SeqExpr, Var
from .expr_functor import ExprVisitor


class _PostOrder(ExprVisitor):
    def __init__(self, fn):
        self.fn = fn
        self.seen: set = set()

    def visit_expr(self, expr):
        if id(expr) in self.seen:
            return
        self.seen.add(id(expr))
        super().visit_expr(expr)
        self.fn(expr)


def post_order_visit(expr, fn) -> None:
    """Call ``fn(node)`` on every expression below ``expr`` (children first, once each)."""
    _PostOrder(fn).visit_expr(expr)


class _VarCollector(ExprVisitor):
    def __init__(self):
        self.used: list = []
        self.bound: list = []

    def visit_var_(self, var):
        if var not in self.used:
            self.used.append(var)

    visit_dataflow_var_ = visit_var_

    def visit_var_def(self, var):
        if var not in self.bound:
            self.bound.append(var)


def _collect(expr) -> _VarCollector:
    collector = _VarCollector()
    collector.visit_expr(expr)
    return collector


def free_vars(expr) -> list:
    """Variables used in ``expr`` but bound outside it (in order of first use)."""
    collector = _collect(expr)
    return [v for v in collector.used if v not in collector.bound]


def bound_vars(expr) -> list:
    """Variables bound inside ``expr``: parameters and binding variables."""
    return _collect(expr).bound


def all_vars(expr) -> list:
    """Every variable of ``expr``, bound or used."""
    collector = _collect(expr)
    return collector.bound + [v for v in collector.used if v not in collector.bound]


def _has_side_effect(value) -> bool:
    """Calls of packed functions by name (``R.call_packed``) may act; everything else is pure."""
    return isinstance(value, Call) and isinstance(value.op, ExternFunc)


def _used_in(expr) -> set:
    return set(free_vars(expr)) | ({expr} if isinstance(expr, Var) else set())


def remove_all_unused(func):
    """Drop bindings whose variables are never used (repeatedly, back to front).

    Works on a Function or a SeqExpr; bindings with side effects are kept.
    """
    if isinstance(func, Function):
        body = remove_all_unused(func.body)
        return func if body is func.body else func.replace(body=body)
    if not isinstance(func, SeqExpr):
        return func
    used = _used_in(func.body)
    new_blocks = []
    for block in reversed(func.blocks):
        kept = []
        for binding in reversed(block.bindings):
            if binding.var in used or _has_side_effect(binding.value):
                kept.append(binding)
                used |= _used_in(binding.value)
        if kept:
            new_blocks.append(type(block)(list(reversed(kept))))
    new_blocks.reverse()
    if sum(len(b.bindings) for b in new_blocks) == sum(len(b.bindings) for b in func.blocks):
        return func
    return SeqExpr(new_blocks, func.body)


def estimate_memory_usage(mod):
    """Bytes each Relax function allocates with and without the memory plan (TVM's
    analysis; ``print()`` the result). See :mod:`mlcbench.relax.memory_usage`."""
    from .memory_usage import estimate_memory_usage as estimate
    return estimate(mod)


__all__ = ["all_vars", "bound_vars", "estimate_memory_usage", "free_vars", "post_order_visit",
           "remove_all_unused"]
