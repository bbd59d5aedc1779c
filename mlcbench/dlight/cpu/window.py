"""WindowReduction: pooling-like kernels, each output reducing a small window of taps.

The Reduction rule treats every output of max pooling as a "row" of nine taps: all
spatial loops fused into one parallel loop, the taps reduced one scalar at a time, a
division and a modulo per element to recover the indices (a 3x3/2 max pool of
1x64x112x112: 10 ms against onnxruntime's 0.8). Here the taps move outside the output
row and the row is vectorized, so each tap is one vector ``max`` (or ``add``) over
neighbouring outputs::

    for n_c_h in T.parallel(64 * 56):
        for w0, w1 in T.grid(7, T.vectorized(8)):      # init
            pool_max[.., w] = -inf
        for rv0, rv1, w0 in T.grid(3, 3, 7):
            for w1 in T.vectorized(8):
                pool_max[.., w] = max(pool_max[.., w], x[.., 2h + rv0 - 1, 2w + rv1 - 1])
        for w0, w1 in T.grid(7, T.vectorized(8)):      # pool_avg, when averaging
            ...

Applies to a function with one reduction block (after inlining pads and casts) whose
spatial loops all come before its reduce loops, whose window (the product of the
reduce extents) is at most ``MAX_WINDOW_TAPS`` and whose innermost spatial loop is at
least two long. Multiply-accumulate blocks (convolutions) are left to other rules.
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.schedule import Schedule
from ..analysis import block_infos, multiply_accumulate, total_extent
from ..base import ScheduleRule
from .common import PARALLEL_MIN_ELEMENTS, choose_vector_tile, inline_injective_producers, \
    loop_kinds

MAX_WINDOW_TAPS = 64     # above this the window is a row: the Reduction rule's vectors win


class WindowReduction(ScheduleRule):
    """Window taps outside the output row, the output row vectorized."""

    name = "WindowReduction"

    def apply(self, func, target, tunable=False):
        sch = Schedule(func)
        reductions = [i for i in block_infos(sch) if i.is_reduction]
        # Multiply-accumulates (convolutions) are the Conv2D and Matmul rules' to schedule.
        if len(reductions) != 1 or multiply_accumulate(reductions[0]) is not None:
            return None
        inline_injective_producers(sch)
        info = _window_block(sch)
        if info is None:
            return None
        lanes = target.vector_lanes(32)
        loops, kinds = sch.get_loops(info.rv), loop_kinds(sch, info)
        spatial = kinds.count("S")
        work = total_extent(sch, loops) or 0
        *outer, width = loops[:spatial]
        # Taps outside the output row: each tap is then one vector operation across the row.
        sch.reorder(*loops[spatial:], width)
        init = sch.decompose_reduction(info.rv, loops[spatial])
        row = (sch.fuse(*outer) if len(outer) > 1 else outer[0]) if outer else None
        if row is not None and work >= PARALLEL_MIN_ELEMENTS and \
                (total_extent(sch, [row]) or 0) >= 2:
            sch.parallel(row)
        _vectorize_innermost(sch, init, lanes)
        _vectorize_innermost(sch, info.rv, lanes)
        _schedule_consumers(sch, sch.get(info.rv).name_hint, row, lanes)
        return sch


def _window_block(sch):
    """The reduction block when it is a small window after its output loops, else None."""
    info = next(i for i in block_infos(sch) if i.is_reduction)
    if info.store is None:
        return None
    loops, kinds = sch.get_loops(info.rv), loop_kinds(sch, info)
    spatial = kinds.count("S")
    if spatial == 0 or kinds != ["S"] * spatial + ["R"] * (len(kinds) - spatial):
        return None
    window = total_extent(sch, loops[spatial:])
    width = total_extent(sch, loops[spatial - 1:spatial])
    if window is None or window > MAX_WINDOW_TAPS or not width or width < 2:
        return None
    return info


def _vectorize_innermost(sch, block, lanes: int) -> None:
    inner = sch.get_loops(block)[-1]
    extent = total_extent(sch, [inner]) or 0
    if extent > 1:
        sch.vectorize(sch.split(inner, [None, choose_vector_tile(extent, lanes)])[1])


def _schedule_consumers(sch, reduction: str, row, lanes: int) -> None:
    """Blocks after the reduction (the average's division, a fused activation) run
    inside the same row loop when they can, vectorized along the row like the reduction."""
    names = [i.name for i in block_infos(sch)]
    for name in names[names.index(reduction) + 1:]:
        block = sch.get_block(name)
        if row is not None:
            try:
                sch.reverse_compute_at(block, row)
            # A consumer that cannot follow into the row is vectorized under its own loops.
            except ScheduleError:
                pass
        loops = sch.get_loops(block)
        start = 1 if row is not None and sch.get(loops[0]).loop_var is sch.get(row).loop_var \
            else 0
        inner = loops[start:]
        if not inner:
            continue
        fused = sch.fuse(*inner) if len(inner) > 1 else inner[0]
        extent = total_extent(sch, [fused]) or 0
        if extent > 1:
            sch.vectorize(sch.split(fused, [None, choose_vector_tile(extent, lanes)])[1])
