"""Which parts of which buffers a block reads and writes.

A block's regions are written in terms of its iteration variables. Loops *inside*
the block body are relaxed over their ranges: in ::

    with T.block("B"):
        vi = T.axis.spatial(16, i)
        for k in range(4):
            B[vi] = B[vi] + A[vi * 4 + k]

the read of ``A`` is ``A[vi * 4 : vi * 4 + 4]``. Accesses to one buffer are merged
into their bounding box, in order of first appearance. As in TVM, a reduction block
(one with ``init``) does not list the buffers it writes among its reads, and buffers
the block allocates itself are not listed at all.

``relax_region`` answers the schedule's question "which part of the buffer does this
block touch while these outer loops run?" (``compute_at`` needs it).
"""
from __future__ import annotations

from ...arith import Analyzer
from ...arith.int_set import IntSet, eval_set, union
from .. import expr as E
from .. import stmt as S
from ..buffer import BufferRegion
from ..functor import StmtExprVisitor, substitute


class _AccessCollector(StmtExprVisitor):
    """Walks a block body, recording relaxed access regions per buffer."""

    def __init__(self, buffer_var_map: dict, analyzer: Analyzer):
        self.buffer_var_map = buffer_var_map
        self.analyzer = analyzer
        self.dom_map: dict = {}
        self.let_values: dict = {}
        self.match_sources: dict = {}                # matched buffer -> source BufferRegion
        self.reads: dict = {}                        # buffer -> [IntSet per dim]
        self.writes: dict = {}
        self.opaque: dict = {}

    # -- recording --------------------------------------------------------------------
    def _relax(self, indices) -> list:
        indices = [substitute(i, self.let_values) for i in indices]
        return [eval_set(i, self.dom_map, self.analyzer) for i in indices]

    def _record(self, table: dict, buffer, sets: list) -> None:
        source = self.match_sources.get(buffer)
        if source is not None:                       # an access to a view is to its source
            buffer, sets = source.buffer, [IntSet.from_range(r, self.analyzer)
                                           for r in source.region]
        if buffer not in table:
            table[buffer] = sets
            return
        table[buffer] = [union([old, new], self.analyzer) for old, new in zip(table[buffer], sets)]

    def _record_region(self, table: dict, region: BufferRegion, bindings: dict) -> None:
        sets = []
        for rng in region.region:
            lo = substitute(rng.min, bindings)
            hi = substitute(E.binary(E.Sub, E.binary(E.Add, rng.min, rng.extent), 1), bindings)
            lo_set, hi_set = self._relax([lo, hi])
            sets.append(IntSet(lo_set.min_value, hi_set.max_value))
        self._record(table, region.buffer, sets)

    # -- visiting ---------------------------------------------------------------------
    def visit_For(self, op: S.For):
        self.visit(op.min)
        self.visit(op.extent)
        self.dom_map[op.loop_var] = E.Range(op.min, op.extent)
        self.visit(op.body)
        del self.dom_map[op.loop_var]

    def visit_LetStmt(self, op: S.LetStmt):
        self.visit(op.value)
        self.let_values[op.var] = substitute(op.value, self.let_values)
        self.visit(op.body)
        del self.let_values[op.var]

    def visit_BufferLoad(self, op: E.BufferLoad):
        self._record(self.reads, op.buffer, self._relax(op.indices))
        self.visit(op.indices)

    def visit_BufferStore(self, op: S.BufferStore):
        self._record(self.writes, op.buffer, self._relax(op.indices))
        self.visit(op.value)
        self.visit(op.indices)

    def visit_Var(self, var: E.Var):
        buffer = self.buffer_var_map.get(var)
        if buffer is not None:                       # the data pointer escapes: opaque
            self._record(self.opaque, buffer, [IntSet.from_range(r, self.analyzer)
                                               for r in BufferRegion.full_region(buffer).region])

    def visit_BlockRealize(self, op: S.BlockRealize):
        """A nested block: use its declared regions, seen through its bindings."""
        self.visit(op.iter_values)
        self.visit(op.predicate)
        block = op.block
        bindings = {iv.var: value for iv, value in zip(block.iter_vars, op.iter_values)}
        inner_allocs = set(block.alloc_buffers)
        for region in block.reads:
            if region.buffer not in inner_allocs:
                self._record_region(self.reads, region, bindings)
        for region in block.writes:
            if region.buffer not in inner_allocs:
                self._record_region(self.writes, region, bindings)


def _to_regions(table: dict, excluded, analyzer: Analyzer) -> tuple:
    regions = []
    for buffer, sets in table.items():
        if buffer in excluded:
            continue
        ranges = []
        for dim, s in enumerate(sets):
            full = E.Range(E.const(0, buffer.shape[dim].dtype), buffer.shape[dim])
            ranges.append(s.cover_range(full, analyzer))
        regions.append(BufferRegion(buffer, tuple(ranges)))
    return tuple(regions)


def _collect(block: S.Block, buffer_var_map, analyzer):
    if buffer_var_map is None:
        buffer_var_map = {}
    collector = _AccessCollector(buffer_var_map, analyzer)
    for match in block.match_buffers:
        collector.match_sources[match.buffer] = match.source
    if block.init is not None:
        collector.visit(block.init)
    collector.visit(block.body)
    return collector


def get_block_access_region(block: S.Block, buffer_var_map: dict | None = None,
                            analyzer: Analyzer | None = None):
    """``(reads, writes, opaque)`` regions of ``block`` in terms of its iteration vars.

    ``buffer_var_map`` maps data pointers (``buffer.data``) to buffers, so that a
    pointer passed to a call counts as an opaque access of the whole buffer.
    """
    analyzer = analyzer or Analyzer()
    collector = _collect(block, buffer_var_map, analyzer)
    allocated = set(block.alloc_buffers)
    excluded_reads = set(allocated)
    if block.init is not None:
        excluded_reads |= set(collector.writes)
    return (_to_regions(collector.reads, excluded_reads, analyzer),
            _to_regions(collector.writes, allocated, analyzer),
            _to_regions(collector.opaque, allocated, analyzer))


def get_block_read_write_region(block: S.Block, buffer_var_map: dict | None = None,
                                analyzer: Analyzer | None = None):
    """``(reads, writes)``: TVM's auto-completed ``T.reads`` / ``T.writes`` of a block.

    Opaque accesses count as both read and write.
    """
    reads, writes, opaque = get_block_access_region(block, buffer_var_map, analyzer)
    read_buffers = {r.buffer for r in reads}
    write_buffers = {w.buffer for w in writes}
    reads = reads + tuple(o for o in opaque if o.buffer not in read_buffers)
    writes = writes + tuple(o for o in opaque if o.buffer not in write_buffers)
    return reads, writes


def relax_region(region, loop_doms: dict, bindings: dict | None = None,
                 analyzer: Analyzer | None = None) -> BufferRegion:
    """The part of the buffer ``region`` covers while the loops of ``loop_doms`` run.

    ``bindings`` first replaces block iteration variables by their bound values, e.g.
    ``{vi: i0 * 32 + i1}``; then each loop of ``loop_doms`` (``{i1: Range(0, 32)}``)
    is relaxed: ``A[vi]`` becomes ``A[i0 * 32 : i0 * 32 + 32]``.
    """
    analyzer = analyzer or Analyzer()
    bindings = bindings or {}
    ranges = []
    for rng in region.region:
        lo = substitute(rng.min, bindings)
        hi = substitute(E.binary(E.Sub, E.binary(E.Add, rng.min, rng.extent), 1), bindings)
        lo_set, hi_set = eval_set(lo, loop_doms, analyzer), eval_set(hi, loop_doms, analyzer)
        ranges.append(IntSet(lo_set.min_value, hi_set.max_value).cover_range(
            E.Range(E.const(0, rng.min.dtype), region.buffer.shape[len(ranges)]), analyzer))
    return BufferRegion(region.buffer, tuple(ranges))


def relax_block_regions(realize: S.BlockRealize, loop_doms: dict,
                        analyzer: Analyzer | None = None):
    """``(reads, writes)`` of a block realize as seen from outside the loops ``loop_doms``."""
    bindings = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    relax = [relax_region(r, loop_doms, bindings, analyzer) for r in realize.block.reads]
    relax_w = [relax_region(w, loop_doms, bindings, analyzer) for w in realize.block.writes]
    return tuple(relax), tuple(relax_w)
