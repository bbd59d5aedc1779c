"""InjectPrefetch: software prefetch of a loop's vector loads some iterations ahead.

A loop annotated ``{"pragma_prefetch_ahead": d}`` gets, at the head of its body, one
``tir.prefetch`` per cache line of each vector load whose address moves with the loop
variable, at the address that load reads ``d`` iterations later::

    for k in range(1024, annotations={"pragma_prefetch_ahead": 4}):
        ... B_global[n0 + k * 32:n0 + k * 32 + 32] ...

becomes, after vectorizing::

    for k in range(1024):
        T.evaluate(T.prefetch(B_global[n0 + (k + 4) * 32]))         # its two lines
        T.evaluate(T.prefetch(B_global[n0 + (k + 4) * 32 + 16]))
        ... B_global[n0 + k * 32:n0 + k * 32 + 32] ...

It runs after ``VectorizeLoop``, on flat buffers: a vector load is a ``Ramp`` index of
stride 1. Scalar loads (a broadcast operand), loads of local buffers and of buffers
allocated inside the loop, and loads whose address uses a variable bound inside the
loop are left to the hardware. Unrolled copies of one load are
prefetched once. A prefetch past the end of a buffer is harmless: it never faults
and the code generator marks it as a hint only.

Why: the matmul micro-kernel's packed panel of B lives in L2 when the panel is deep
(1024 rows of 128 bytes); on a Cascade Lake core the tile then ran at 61% of the FMA
peak against 99% with the panel in L1, and prefetching the panel 4 rows ahead gave 79%
(``benchmarks/matmul_schedule.py``'s register-tile probe).
"""
from __future__ import annotations

from ...ir.transform import prim_func_pass
from ...arith.linear_form import expr_key
from ..expr import Add, BufferLoad, IntImm, Let, Ramp
from ..functor import StmtExprMutator, post_order_visit, substitute, uses_var
from ..op import prefetch, tvm_access_ptr, type_annotation
from ..stmt import Allocate, DeclBuffer, Evaluate, For, LetStmt, seq

PREFETCH_ANNOTATION = "pragma_prefetch_ahead"
CACHE_LINE_BYTES = 64


def _bound_inside(body) -> set:
    """Ids of the variables a loop body binds: inner loops, lets, and the data of the
    buffers it allocates (a prefetch at the loop's head could not name them)."""
    bound = set()

    def visit(node):
        if isinstance(node, For):
            bound.add(id(node.loop_var))
        elif isinstance(node, (LetStmt, Let)):
            bound.add(id(node.var))
        elif isinstance(node, (Allocate, DeclBuffer)):
            bound.add(id(node.buffer.data))
    post_order_visit(body, visit)
    return bound


def prefetches(loop: For, ahead: int) -> list:
    """The ``Evaluate(tir.prefetch(...))`` statements for ``loop``'s vector loads."""
    inner = _bound_inside(loop.body)
    loads = []
    post_order_visit(loop.body, lambda n: loads.append(n) if isinstance(n, BufferLoad) else None)
    later = {loop.loop_var: Add(loop.loop_var, IntImm(loop.loop_var.dtype, ahead),
                                loop.loop_var.dtype)}
    out, seen = [], set()
    for load in loads:
        index = load.indices[-1] if load.indices else None
        if not (isinstance(index, Ramp) and isinstance(index.stride, IntImm)
                and index.stride.value == 1):
            continue
        base = index.base
        if id(load.buffer.data) in inner or (load.buffer.scope or "").startswith("local") or \
                not uses_var(base, lambda v: v is loop.loop_var) or \
                uses_var(base, lambda v: id(v) in inner):
            continue
        dtype = load.buffer.dtype
        per_line = max(1, CACHE_LINE_BYTES // max(1, dtype.bits // 8))
        for first in range(0, index.lanes, per_line):
            key = (id(load.buffer.data), expr_key(base), first)
            if key in seen:
                continue
            seen.add(key)
            offset = substitute(base, later)
            if first:
                offset = Add(offset, IntImm(offset.dtype, first), offset.dtype)
            address = tvm_access_ptr(type_annotation(dtype.element), load.buffer.data,
                                     offset, 1, 1)
            out.append(Evaluate(prefetch(address)))
    return out


class _Inject(StmtExprMutator):
    def visit_For(self, op: For):
        body = self.visit(op.body)
        ahead = op.annotations.get(PREFETCH_ANNOTATION) if op.annotations else None
        if ahead is None:
            return op if body is op.body else op.replace(body=body)
        ahead = int(ahead.value if isinstance(ahead, IntImm) else ahead)
        annotations = {k: v for k, v in op.annotations.items() if k != PREFETCH_ANNOTATION}
        loop = op.replace(body=body, annotations=annotations)
        hints = prefetches(loop, ahead) if ahead > 0 else []
        return loop.replace(body=seq(*hints, body)) if hints else loop


@prim_func_pass(opt_level=0, name="tir.InjectPrefetch")
class InjectPrefetch:
    """``mod = InjectPrefetch()(mod)``: loops annotated ``pragma_prefetch_ahead`` get
    software prefetches of their vector loads (module docstring)."""

    def transform_function(self, func, mod, ctx):
        body = _Inject().visit(func.body)
        return func if body is func.body else func.with_body(body)


__all__ = ["InjectPrefetch", "PREFETCH_ANNOTATION", "prefetches"]
