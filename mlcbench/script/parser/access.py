"""``T.reads``/``T.writes`` for blocks that leave them out.

The real detector is :func:`mlcbench.tir.analysis.get_block_read_write_region` (it
relaxes loops inside the block to their ranges). While that module is absent, a small
fallback here takes the point region of every load and store, merges the accesses to
one buffer into their hull, and -- for a reduction block with ``T.init()`` -- drops
reads of the buffers it writes, so ``Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]``
reads ``A[vi, vk], B[vk, vj]`` and writes ``Y[vi, vj]``.
"""
from __future__ import annotations

from ...ir.structural import structural_equal
from ...tir.buffer import BufferRegion
from ...tir.expr import BufferLoad, IntImm, Range, const
from ...tir.functor import StmtExprVisitor, substitute
from ...tir.stmt import Block, BufferStore
from .regions import as_region


def detect_block_access(block: Block, buffer_var_map: dict) -> tuple[tuple, tuple]:
    """(reads, writes) of ``block``, each a tuple of BufferRegion."""
    try:
        from ...tir.analysis import get_block_read_write_region
    except ImportError:
        return fallback_block_access(block)
    reads, writes = get_block_read_write_region(block, buffer_var_map)
    return tuple(reads), tuple(writes)


class _AccessCollector(StmtExprVisitor):
    def __init__(self, local_buffers: set, matched: dict):
        self.reads: list[BufferRegion] = []
        self.writes: list[BufferRegion] = []
        self.local_buffers, self.matched = local_buffers, matched

    def _add(self, target: list, region: BufferRegion) -> None:
        if region.buffer in self.matched:
            region = self.matched[region.buffer]
        if region.buffer not in self.local_buffers:
            target.append(region)

    def visit_BufferLoad(self, op):
        self._add(self.reads, as_region(op))
        self.generic_visit(op)

    def visit_BufferStore(self, op: BufferStore):
        self._add(self.writes, as_region(BufferLoad(op.buffer, op.indices)))
        self.visit(op.value)
        self.visit(op.indices)

    def visit_BlockRealize(self, op):
        bindings = {iv.var: value for iv, value in zip(op.block.iter_vars, op.iter_values)}
        for region in op.block.reads:
            self._add(self.reads, substitute(region, bindings))
        for region in op.block.writes:
            self._add(self.writes, substitute(region, bindings))
        self.visit(op.iter_values)
        self.visit(op.predicate)


def fallback_block_access(block: Block) -> tuple[tuple, tuple]:
    matched = {m.buffer: m.source for m in block.match_buffers}
    collector = _AccessCollector(set(block.alloc_buffers), matched)
    if block.init is not None:
        collector.visit(block.init)
    collector.visit(block.body)
    writes = _merge(collector.writes)
    reads = collector.reads
    if block.init is not None:
        written = {region.buffer for region in writes}
        reads = [r for r in reads if r.buffer not in written]
    return tuple(_merge(reads)), tuple(writes)


def _merge(regions: list[BufferRegion]) -> list[BufferRegion]:
    """One region per buffer (first-use order): the hull of all its accesses."""
    by_buffer: dict = {}
    for region in regions:
        by_buffer.setdefault(region.buffer, []).append(region)
    return [_hull(buffer, group) for buffer, group in by_buffer.items()]


def _hull(buffer, group: list[BufferRegion]) -> BufferRegion:
    ranges = []
    for dim, extent in enumerate(buffer.shape):
        dims = [region.region[dim] for region in group]
        first = dims[0]
        if all(structural_equal(r, first, map_free_vars=False) for r in dims[1:]):
            ranges.append(first)
        elif all(isinstance(r.min, IntImm) and isinstance(r.extent, IntImm) for r in dims):
            low = min(r.min.value for r in dims)
            high = max(r.min.value + r.extent.value for r in dims)
            ranges.append(Range(const(low, first.min.dtype), const(high - low, first.min.dtype)))
        else:
            ranges.append(Range(const(0, extent.dtype), extent))
    return BufferRegion(buffer, tuple(ranges))
