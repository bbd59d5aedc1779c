"""Small helpers the tuner shares: floating-point work of a module, rank correlation.

>>> from mlcbench import te
>>> A = te.placeholder((64, 64), name="A"); B = te.placeholder((64, 64), name="B")
>>> k = te.reduce_axis((0, 64), name="k")
>>> C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
>>> estimate_flops(te.create_prim_func([A, B, C]))    # one multiply and one add per step
524288
"""
from __future__ import annotations

import numpy as np

from ..ir.module import IRModule
from ..tir import expr as E
from ..tir.function import PrimFunc
from ..tir.functor import StmtExprVisitor
from ..tir.stmt import BlockRealize, For

__all__ = ["estimate_flops", "spearman_correlation"]

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
    funcs = [mod] if isinstance(mod, PrimFunc) else [
        f for f in mod.functions.values() if isinstance(f, PrimFunc)] if isinstance(
        mod, IRModule) else []
    counter = _FlopCounter()
    for func in funcs:
        counter.visit(func.body)
    return counter.total


def spearman_correlation(xs, ys) -> float:
    """Spearman's rank correlation of two equally long sequences (nan below 2 points or
    when one of them is constant)."""
    x, y = np.asarray(xs, dtype="float64"), np.asarray(ys, dtype="float64")
    if len(x) < 2 or len(x) != len(y):
        return float("nan")
    rx, ry = _ranks(x), _ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks from 0, ties sharing their mean rank."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(len(values))
    for value in np.unique(values):
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks
