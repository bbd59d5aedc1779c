"""Change the layout of an intermediate buffer everywhere it is used.

The matmul rule packs the operand its vector loop walks into panels as wide as the
vector tile, so each ``k`` step reads one contiguous run: ``cache_read`` makes a copy
``B_global[k, j]``, then ``pack_vector_axis(func, "B_global", dim=1, width=32)``
rewrites every access::

    B_global[v_k, v_j]   ->   B_global[v_j // 32, v_k, v_j % 32]

(a dense weight ``W[j, k]`` packs the same way with ``dim=0``). The buffer grows to
whole panels; the padding is written by no one and read by no one.
"""
from __future__ import annotations

from dataclasses import replace

from ...ir.errors import ScheduleError
from ...tir.buffer import Buffer, BufferRegion
from ...tir.expr import Range, const
from ...tir.functor import StmtExprMutator


class _Relayout(StmtExprMutator):
    def __init__(self, old: Buffer, new: Buffer, index_map):
        self.old, self.new, self.index_map = old, new, index_map

    def visit_BufferLoad(self, op):
        op = self.generic_visit(op)
        if op.buffer is not self.old:
            return op
        return replace(op, buffer=self.new, indices=self.index_map(op.indices))

    def visit_BufferStore(self, op):
        op = self.generic_visit(op)
        if op.buffer is not self.old:
            return op
        return replace(op, buffer=self.new, indices=self.index_map(op.indices))

    def visit_BufferRegion(self, op):
        if op.buffer is not self.old:
            return op
        # A single-point region maps exactly; any wider one is widened to the whole new buffer.
        if all(getattr(r.extent, "value", None) == 1 for r in op.region):
            points = self.index_map(tuple(r.min for r in op.region))
            return BufferRegion(self.new, tuple(Range(p, const(1, p.dtype)) for p in points))
        return BufferRegion.full_region(self.new)

    def visit_Block(self, op):
        op = self.generic_visit(op)
        if self.old in op.alloc_buffers:
            allocs = tuple(self.new if b is self.old else b for b in op.alloc_buffers)
            op = replace(op, alloc_buffers=allocs)
        return op


def allocated_buffer(func, buffer_name: str) -> Buffer:
    """The one buffer named ``buffer_name`` that a block of ``func`` allocates (a
    ScheduleError for a parameter, none or several)."""
    if buffer_name in {b.name for b in func.buffer_map.values()}:
        raise ScheduleError(f"allocated_buffer: {buffer_name!r} is a parameter; expected "
                            "an intermediate buffer")
    found = []

    class _Find(StmtExprMutator):
        def visit_Block(self, op):
            found.extend(b for b in op.alloc_buffers if b.name == buffer_name)
            return self.generic_visit(op)

    _Find().visit(func.body)
    if len(found) != 1:
        raise ScheduleError(f"allocated_buffer: expected one allocated buffer named "
                            f"{buffer_name!r}, found {len(found)}")
    return found[0]


def pack_vector_axis(func, buffer_name: str, dim: int, width: int):
    """``func`` with buffer ``buffer_name`` stored as ``[x[dim] // width, <the other
    indices in order>, x[dim] % width]`` (panels of ``width`` along ``dim``)."""
    old = allocated_buffer(func, buffer_name)
    extent = int(old.shape[dim].value)
    others = [d for d in range(len(old.shape)) if d != dim]
    # Rounded up: the last panel may be partly empty (written and read by no one).
    panels = const(-(-extent // width), old.shape[dim].dtype)
    shape = (panels, *[old.shape[d] for d in others], const(width, old.shape[dim].dtype))

    def index_map(indices):
        x = indices[dim]
        return (x // width, *[indices[d] for d in others], x % width)

    new = replace(old, shape=shape, data=None)
    return func.with_body(_Relayout(old, new, index_map).visit(func.body))
