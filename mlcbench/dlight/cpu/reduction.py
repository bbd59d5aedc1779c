"""Reduction: row-wise kernels (softmax, layer_norm, sum/max over trailing axes, pools).

Every reduction block reduces its trailing loops for each "row" (its leading spatial
loops). The last block's row loops are fused, the earlier blocks are computed at that
row loop, the row loop runs in parallel when large (its elements, with an exp or a log
counted as ``TRANSCENDENTAL_WEIGHT`` elements: ``weighted_work``), and spatial loops
inside a row are vectorized::

    for row in T.parallel(rows):
        for k in range(n): maxelem[row] = max(maxelem[row], x[row, k])
        for k in range(n): expsum[row] += exp(x[row, k] - maxelem[row])
        for k0, k1 in ..vectorized(16): out[row, k] = exp(..) / expsum[row]

A row reduction long enough is factored into vector partial results (``rfactor``):
one vector accumulator walks the row, then its lanes are summed::

    for k0 in range(n // 16):
        for k1 in T.vectorized(16): expsum_rf[row, k1] += exp(x[row, k0 * 16 + k1] - ..)
    for k1 in range(16): expsum[row] += expsum_rf[row, k1]
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.expr import Call
from ...tir.functor import post_order_visit
from ...tir.schedule import Schedule
from ..analysis import block_infos, total_extent
from ..base import ScheduleRule
from .tuple_reduction import split_tuple_reductions
from .common import (PARALLEL_MIN_ELEMENTS, choose_vector_tile, inline_injective_producers,
                     leading_spatial_loops, loop_kinds)

TRANSCENDENTAL = frozenset(f"tir.{name}" for name in ("exp", "log", "tanh", "sigmoid", "erf"))
TRANSCENDENTAL_WEIGHT = 8


def row_count(sch) -> int | None:
    """How many leading loops are rows: the spatial loops of the reduction blocks, the
    same number for each; None when some reduction block has reduce loops first."""
    counts = set()
    for info in block_infos(sch):
        if info.is_reduction:
            kinds = loop_kinds(sch, info)
            spatial = len(leading_spatial_loops(sch, info))
            if "S" in kinds[spatial:]:
                return None
            counts.add(spatial)
    return counts.pop() if len(counts) == 1 else None


class Reduction(ScheduleRule):
    """Rows in parallel, reductions inside a row, vectorized spatial inner loops."""

    name = "Reduction"

    def apply(self, func, target, tunable=False):
        sch = Schedule(split_tuple_reductions(func))
        if not any(info.is_reduction for info in block_infos(sch)):
            return None
        # A producer read by several blocks (softmax's exp) is computed once per row.
        inline_injective_producers(sch, keep=lambda info: len(sch.get_consumers(info.rv)) > 1)
        rows = row_count(sch)
        infos = block_infos(sch)
        # The row loop is fused from the last block's loops, so it needs them all spatial.
        if not rows or len(leading_spatial_loops(sch, infos[-1])) < rows:
            return None
        lanes = target.vector_lanes(32)
        work = weighted_work(sch, infos)
        # rfactor before compute_at, so the partial-result blocks move into the row with the rest.
        partials = [rf for info in infos if info.is_reduction
                    for rf in [_factor_row_reduction(sch, info, rows, lanes)] if rf]
        infos = block_infos(sch)
        last = infos[-1]
        row_loops = sch.get_loops(last.rv)[:rows]
        row = sch.fuse(*row_loops) if rows > 1 else row_loops[0]
        # Consumers first: compute_at places a producer from where its readers already are.
        for info in reversed(infos[:-1]):
            sch.compute_at(info.rv, row)
        if work >= PARALLEL_MIN_ELEMENTS and (total_extent(sch, [row]) or 0) >= 2:
            sch.parallel(row)
        for name in partials:
            _vectorize_partials(sch, name)
        for info in block_infos(sch):
            _vectorize_row_body(sch, info, lanes)
        return sch


def weighted_work(sch, infos) -> int:
    """The last block's elements plus ``TRANSCENDENTAL_WEIGHT`` elements for each exp,
    log, tanh, sigmoid or erf that a block computes per element, to compare with
    ``PARALLEL_MIN_ELEMENTS`` (about 100 us on one thread). An inline exp costs about
    as much as ten plain passes over its elements: softmax 128x1000 takes 0.27 ms on
    one Zen 1 thread, layer_norm 128x768 (no exp) 0.06 ms."""
    work = total_extent(sch, sch.get_loops(infos[-1].rv)) or 0
    for info in infos:
        calls = []
        post_order_visit(info.block.body, lambda n: calls.append(n) if (
            isinstance(n, Call) and n.op in TRANSCENDENTAL) else None)
        work += TRANSCENDENTAL_WEIGHT * len(calls) * (total_extent(sch, sch.get_loops(info.rv))
                                                      or 0)
    return work


def _factor_row_reduction(sch, info, rows, lanes):
    """rfactor a block's single reduce loop (after its ``rows`` row loops) into ``tile``
    vector partial results, ``tile`` = ``lanes`` or half of it, whichever divides the
    extent, when the row holds at least two such vectors. Returns the name of the
    partial-result block, or None when the block stays a scalar reduction."""
    loops = sch.get_loops(info.rv)
    if info.store is None:          # several outputs (layer_norm's sum and sum of squares)
        return None
    if len(loops) != rows + 1 or loop_kinds(sch, info) != ["S"] * rows + ["R"]:
        return None
    extent = total_extent(sch, loops[-1:]) or 0
    tile = next((t for t in (lanes, lanes // 2) if t > 1 and extent % t == 0), None)
    if tile is None or extent < 2 * tile:
        return None
    _, inner = sch.split(loops[-1], [None, tile])
    try:
        rf_block = sch.rfactor(inner, rows)
    except ScheduleError:
        return None
    sch.set_scope(rf_block, 0, "local")     # one accumulator vector per row when lowered
    return sch.get(rf_block).name_hint


def _vectorize_partials(sch, name: str) -> None:
    """Inside its row, the partial-result block runs ``k0`` (reduce) then ``k1`` (its
    vector lanes): initialise the accumulator vector before ``k0``, vectorize ``k1``."""
    info = next(i for i in block_infos(sch) if i.name == name)
    loops, kinds = sch.get_loops(info.rv)[-2:], loop_kinds(sch, info)[-2:]
    # compute_at may leave the lane loop outside the reduce loop; the reorder puts it inside.
    reduce_loop, lane_loop = (loops if kinds == ["R", "S"] else loops[::-1])
    sch.reorder(reduce_loop, lane_loop)
    init = sch.decompose_reduction(info.rv, reduce_loop)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.vectorize(lane_loop)


def _vectorize_row_body(sch, info, lanes) -> None:
    """Vectorize the spatial loops a block has inside its row (none for reductions)."""
    loops = sch.get_loops(info.rv)[1:]
    kinds = loop_kinds(sch, info)[1:]
    if not loops or "R" in kinds:
        return
    inner = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    extent = total_extent(sch, [inner]) or 0
    if extent > 1:
        sch.vectorize(sch.split(inner, [None, choose_vector_tile(extent, lanes)])[1])
