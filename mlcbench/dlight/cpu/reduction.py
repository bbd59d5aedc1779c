"""Reduction: row-wise kernels (softmax, layer_norm, sum/max over trailing axes, pools).

Every reduction block reduces its trailing loops for each "row" (its leading spatial
loops). The last block's row loops are fused, the earlier blocks are computed at that
row loop, the row loop runs in parallel when large, and spatial loops inside a row
are vectorized::

    for row in T.parallel(rows):
        for k in range(n): maxelem[row] = max(maxelem[row], x[row, k])
        for k in range(n): expsum[row] += exp(x[row, k] - maxelem[row])
        for k0, k1 in ..vectorized(16): out[row, k] = exp(..) / expsum[row]
"""
from __future__ import annotations

from ...tir.schedule import Schedule
from ..analysis import block_infos, total_extent
from ..base import ScheduleRule
from .common import (PARALLEL_MIN_ELEMENTS, choose_vector_tile, inline_injective_producers,
                     leading_spatial_loops, loop_kinds)


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
        sch = Schedule(func)
        if not any(info.is_reduction for info in block_infos(sch)):
            return None
        # A producer read by several blocks (softmax's exp) is computed once per row.
        inline_injective_producers(sch, keep=lambda info: len(sch.get_consumers(info.rv)) > 1)
        rows = row_count(sch)
        infos = block_infos(sch)
        if not rows or len(leading_spatial_loops(sch, infos[-1])) < rows:
            return None
        last = infos[-1]
        row_loops = sch.get_loops(last.rv)[:rows]
        work = total_extent(sch, sch.get_loops(last.rv)) or 0
        row = sch.fuse(*row_loops) if rows > 1 else row_loops[0]
        for info in reversed(infos[:-1]):
            sch.compute_at(info.rv, row)
        if work >= PARALLEL_MIN_ELEMENTS // 4 and (total_extent(sch, [row]) or 0) >= 2:
            sch.parallel(row)
        lanes = target.vector_lanes(32)
        for info in block_infos(sch):
            _vectorize_row_body(sch, info, lanes)
        return sch


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
