"""Floating-point work of a module, for the GFLOPS tuning reports.

>>> from mlcbench import te
>>> A = te.placeholder((64, 64), name="A"); B = te.placeholder((64, 64), name="B")
>>> k = te.reduce_axis((0, 64), name="k")
>>> C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
>>> estimate_flops(te.create_prim_func([A, B, C]))    # one multiply and one add per step
524288
"""
from __future__ import annotations

from ..tir import expr as E
from ..tir.function import PrimFunc
from ..tir.functor import StmtExprVisitor
from ..tir.stmt import BlockRealize, For

__all__ = ["estimate_flops"]

_FLOAT_OPS = (E.Add, E.Sub, E.Mul, E.Div, E.Min, E.Max, E.FloorDiv)


class _FlopCounter(StmtExprVisitor):
    """Sum, over every store of a floating-point value, the arithmetic operations of the
    stored expression times the iterations of the loops around it."""

    def __init__(self):
        self.total = 0
        self._iterations = 1

    def visit_For(self, op: For):
        extent = op.extent.value if isinstance(op.extent, E.IntImm) else 1
        self._iterations *= max(extent, 1)
        self.visit(op.body)
        self._iterations //= max(extent, 1)

    def visit_BlockRealize(self, op: BlockRealize):
        self.visit(op.block.body)          # the init statement stores constants only

    def visit_BufferStore(self, op):
        self.total += self._iterations * _count_float_ops(op.value)


def _count_float_ops(expr) -> int:
    count = 0

    class _Ops(StmtExprVisitor):
        def generic_visit(self, node):
            nonlocal count
            dtype = getattr(node, "dtype", None)
            if dtype is not None and getattr(dtype, "is_float", False):
                if isinstance(node, _FLOAT_OPS):
                    count += getattr(dtype, "lanes", 1)
                elif isinstance(node, E.Call) and node.op.startswith("tir."):
                    count += 1
            return super().generic_visit(node)

    _Ops().visit(expr)
    return count


def estimate_flops(mod) -> int:
    """Floating-point operations one call of ``mod`` (a PrimFunc or an IRModule) does."""
    if isinstance(mod, PrimFunc):
        funcs = [mod]
    else:
        funcs = [f for f in mod.functions.values() if isinstance(f, PrimFunc)]
    counter = _FlopCounter()
    for func in funcs:
        counter.visit(func.body)
    return counter.total
