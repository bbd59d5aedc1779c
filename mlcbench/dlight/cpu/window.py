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

A max pool in two stages (``topi.nn.pool2d``'s ``pool_row_max`` then ``pool_max``,
two such window blocks, the second reading the first) computes each output row's row
of maxes inside the parallel row loop, into a buffer of one row; in both stages the
taps are unrolled inside the vectorized tile, so a tile's running max stays in a
register::

    for n_c_h in T.parallel(64 * 56):
        for w0, w1 in T.grid(14, T.vectorized(8)):     # pool_row_max, 112 columns
            row[w] = -inf
            for rv0 in T.unroll(3):
                row[w] = max(row[w], x[.., 2h + rv0 - 1, w])
        for w0, w1 in T.grid(7, T.vectorized(8)):      # pool_max, 56 outputs
            pool_max[.., w] = -inf
            for rv1 in T.unroll(3):
                pool_max[.., w] = max(pool_max[.., w], row[2w + rv1 - 1])

(1x64x112x112, 3x3/2: 0.37 ms on one thread against 0.63 for the one-stage schedule
above; taps outside the tile, as above, ran both stages at 0.45 ms).

The row stage fills the rows of maxes of a block of output rows (``ROW_BUFFER_BYTES``,
8 rows of 112 here) before the window stage reads them, and on 16 lanes the window
stage's row is one vector when it fits in ``WINDOW_ROW_REGISTERS`` registers::

    for n_c_h0 in T.parallel(64 * 7):
        for h1, w0, w1 in T.grid(8, 7, T.vectorized(16)):   # pool_row_max, 8 x 112
            ...
        for h1 in range(8):
            for w in T.vectorized(56):                      # pool_max, 8 x 56
                ...

The window's border lanes (``2w + rv1 - 1 < 0``) are read with masked loads
(VectorizeLoop's border version), not a serial loop. Both stages' taps count toward
``PARALLEL_MIN_ELEMENTS``.
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.expr import Call
from ...tir.functor import post_order_visit
from ...tir.schedule import Schedule
from ..analysis import block_infos, multiply_accumulate, total_extent
from ..base import ScheduleRule
from .common import PARALLEL_MIN_ELEMENTS, choose_vector_tile, inline_injective_producers, \
    loop_kinds, short_row
from .tiling import _largest_divisor

PAD_PLANE_MIN_REUSE = 4
MAX_WINDOW_TAPS = 64     # above this the window is a row: the Reduction rule's vectors win
# The window stage of a two-stage max pool reads its row of maxes at a stride: on
# targets of 16 lanes or more, a row of up to this many registers is one vector (a
# 3x3/2 pool of 1x64x112x112 on a Zen 4: 75 us with its 56 outputs in one vector, 91
# in seven of 8; 1x256x55x55 in ceil mode: 98 against 114). Unmeasured on 8 lanes.
WINDOW_ROW_REGISTERS = 4
# The row stage runs for a block of output rows (the largest divisor of their count
# whose rows of maxes fit in this many bytes) before the window stage reads them: read
# right after they were written, a row's maxes waited on store-to-load forwarding, which
# fails for a load that spans several stores (a 14-lane row is stored in three pieces).
# On a Zen 4 with onnxruntime in the same run, us, one output row a block -> blocks:
# 3x3/1 of 1x480x14x14 68 -> 27 (onnxruntime 31); 3x3/2 ceil of 1x512x27x27 79 -> 48
# (49); of 1x832x14x14 42 -> 21 (27); 3x3/2 of 1x64x112x112 74 -> 60-66 (108).
# 2048 and 8192 bytes measured the same as 4096 to within noise.
ROW_BUFFER_BYTES = 4096
MAX_UNROLLED_TAPS = 8    # taps of one stage of a two-stage window, unrolled in the tile


class WindowReduction(ScheduleRule):
    """Window taps outside the output row, the output row vectorized."""

    name = "WindowReduction"

    def apply(self, func, target, tunable=False):
        sch = Schedule(func)
        reductions = [i for i in block_infos(sch) if i.is_reduction]
        # Multiply-accumulates (convolutions) are the Conv2D and Matmul rules' to schedule.
        if any(multiply_accumulate(info) is not None for info in reductions):
            return None
        if len(reductions) == 2:
            return _rows_then_columns(sch, target)
        if len(reductions) != 1:
            return None
        inline_injective_producers(sch, keep=lambda i: _is_padding(i) and _reused(sch, i))
        info = _window_block(sch)
        if info is None:
            return None
        lanes = target.vector_lanes(32)
        loops, kinds = sch.get_loops(info.rv), loop_kinds(sch, info)
        spatial = kinds.count("S")
        work = total_extent(sch, loops) or 0
        *outer, width = loops[:spatial]
        pads = [i for i in block_infos(sch) if i.name != info.name and _is_padding(i)]
        # With a padding the output plane's last outer loop (the rows) stays out of the
        # fused loop, so the padded plane is computed once for all its rows.
        fused = outer[:-1] if pads and len(outer) > 1 else outer
        # Taps outside the output row: each tap is then one vector operation across the row.
        sch.reorder(*loops[spatial:], width)
        init = sch.decompose_reduction(info.rv, loops[spatial])
        row = (sch.fuse(*fused) if len(fused) > 1 else fused[0]) if fused else None
        if row is not None and work >= PARALLEL_MIN_ELEMENTS and \
                (total_extent(sch, [row]) or 0) >= 2:
            sch.parallel(row)
        if pads and row is not None:
            _pad_per_plane(sch, pads, row)
        _vectorize_innermost(sch, init, lanes)
        _vectorize_innermost(sch, info.rv, lanes)
        _schedule_consumers(sch, sch.get(info.rv).name_hint, row, lanes)
        return sch


def _is_padding(info) -> bool:
    """An injective block that guards its read (``pad_temp``'s ``T.if_then_else``)."""
    calls = []
    post_order_visit(info.block.body, lambda n: calls.append(n) if (
        isinstance(n, Call) and n.op == "tir.if_then_else") else None)
    return info.is_injective and bool(calls)


def _reused(sch, pad) -> bool:
    """True when the window reads each padded element ``PAD_PLANE_MIN_REUSE`` times or
    more: a plane copied at a scalar guarded load per element then pays (a 3x3/1 window
    reads each about 8 times; a 3x3/2 max pool of 1x64x112x112 reads each about 2 times
    and ran at 2.2 ms with the plane, 0.77 without)."""
    window = next(i for i in block_infos(sch) if i.is_reduction)
    taps = total_extent(sch, sch.get_loops(window.rv)) or 0
    return taps >= PAD_PLANE_MIN_REUSE * (total_extent(sch, sch.get_loops(pad.rv)) or 1)


def _pad_per_plane(sch, pads, row) -> None:
    """Compute each padding inside ``row``, into a plane the taps then read unguarded.
    Inlined, the guard on every tap (its lanes differ at the borders) kept the row
    scalar: a 3x3/1 average pool of 1x192x28x28 ran at 0.52 ms, 0.21 with the plane."""
    for pad in pads:
        try:
            sch.compute_at(pad.rv, row)
        except ScheduleError:
            sch.compute_inline(pad.rv)


def _rows_then_columns(sch, target):
    """Schedule a row stage feeding a window stage (see the module docstring), or None."""
    inline_injective_producers(sch)
    rows, window = [i for i in block_infos(sch) if i.is_reduction]
    if _window_block(sch, rows) is None or _window_block(sch, window) is None or \
            rows.store.buffer not in {r.buffer for r in window.block.reads}:
        return None
    lanes = target.vector_lanes(32)
    loops, kinds = sch.get_loops(window.rv), loop_kinds(sch, window)
    spatial = kinds.count("S")
    row_loops = sch.get_loops(rows.rv)
    # Both stages' taps count: a 3x3/2 max pool of 1x832x14x14 reads 245K row taps and
    # 122K column taps, and ran serially at 65 us when only the second stage counted.
    work = (total_extent(sch, loops) or 0) + (total_extent(sch, row_loops) or 0)
    outer = loops[:spatial - 1]
    if not outer:
        return None
    width = total_extent(sch, [row_loops[loop_kinds(sch, rows).count("S") - 1]]) or 0
    row_bytes = width * rows.store.buffer.dtype.bits // 8
    chunk = _rows_per_buffer(total_extent(sch, outer[-1:]) or 1, row_bytes)
    if chunk > 1:
        outer = outer[:-1] + [sch.split(outer[-1], [None, chunk])[0]]
    row = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    if work >= PARALLEL_MIN_ELEMENTS and (total_extent(sch, [row]) or 0) >= 2:
        sch.parallel(row)
    _taps_inside_tile(sch, window.rv, lanes,
                      whole_row=WINDOW_ROW_REGISTERS * lanes if lanes >= 16 else 0)
    try:
        sch.compute_at(rows.rv, row)
    except ScheduleError:
        return None
    _taps_inside_tile(sch, rows.rv, lanes)
    _schedule_consumers(sch, sch.get(window.rv).name_hint, row, lanes)
    return sch


def _rows_per_buffer(height: int, row_bytes: int) -> int:
    """Output rows whose rows of maxes one pass of the row stage computes: the largest
    divisor of ``height`` whose rows (``row_bytes`` each) fit in ``ROW_BUFFER_BYTES``."""
    return _largest_divisor(height, 1, max(1, ROW_BUFFER_BYTES // max(1, row_bytes)))


def _taps_inside_tile(sch, block, lanes: int, whole_row: int = 0) -> None:
    """``for w0, w1 in T.grid(.., T.vectorized(tile))``, the init then the unrolled taps
    inside ``w1``: the running max of a tile is a register, never stored between taps.
    A row of ``whole_row`` elements or fewer is one tile."""
    name = sch.get(block).name_hint
    info = next(i for i in block_infos(sch) if i.name == name)
    loops, kinds = sch.get_loops(block), loop_kinds(sch, info)
    spatial = kinds.count("S")
    width, taps = loops[spatial - 1], loops[spatial:]
    extent = total_extent(sch, [width]) or 0
    # One register a tile: two (16 lanes of AVX2) ran the 3x3/2 pool's row stage at
    # 0.47-0.54 ms against 0.37.
    if extent <= whole_row:
        tile = extent
    else:
        tile = lanes if extent % lanes == 0 else choose_vector_tile(extent, lanes)
    tile = sch.split(width, [None, tile])[1] if extent > 1 else width
    sch.decompose_reduction(block, taps[0])
    if extent > 1:
        sch.vectorize(tile)
    for tap in taps:
        if (total_extent(sch, [tap]) or 0) <= MAX_UNROLLED_TAPS:
            sch.unroll(tap)


def _window_block(sch, info=None):
    """The reduction block (``info``, else the only one) when it is a small window after
    its output loops, else None."""
    info = info or next(i for i in block_infos(sch) if i.is_reduction)
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
        sch.vectorize(sch.split(inner, [None, stored_row_tile(extent, lanes)])[1])


def stored_row_tile(extent: int, lanes: int) -> int:
    """The vector tile of a row whose partial results go through memory between taps (the
    one-stage window, the average's division): the whole row up to two registers, where
    :func:`choose_vector_tile` halves a 28-wide row for 16 lanes. On a 2-core Zen 4
    (16 lanes) Inception v2's 3x3/1 average pools of 28x28 maps took 101 and 129 us in
    14-lane pieces and 29 and 39 us whole; with the taps inside a register tile (the
    two-stage max pool) 14 lanes stay faster (99 against 226 us)."""
    return extent if extent <= 2 * lanes else choose_vector_tile(extent, lanes)


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
        # Rows of half a vector or more are vectorized each by itself: a vector spanning
        # rows divides its counter per lane, and an average's divisor is a function of
        # the row. (Fused, 1x192x28x28 3x3/1 ran at 0.48x onnxruntime's speed on an
        # AVX-512 Xeon; by rows it is unchanged on Zen 1, 0.115 against 0.118 ms.)
        row_start = short_row(sch, inner, lanes) if len(inner) > 1 else None
        inner = inner[row_start:] if row_start is not None else inner
        fused = sch.fuse(*inner) if len(inner) > 1 else inner[0]
        extent = total_extent(sch, [fused]) or 0
        if extent > 1:
            sch.vectorize(sch.split(fused, [None, stored_row_tile(extent, lanes)])[1])
