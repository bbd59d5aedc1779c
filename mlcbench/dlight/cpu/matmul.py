"""Matmul: a reduction ``C[.., i, j] += A[.., i, k] * B[.., k, j]`` (dense weights
``B[.., j, k]`` and batched forms too) gets the register-blocked micro-kernel.

Recognised from indices, not names: one reduce iterator ``k`` indexes both operands
as a plain variable, each operand uses one output axis the other does not. The operand
the vector axis ``j`` walks is packed into panels as wide as the vector tile (see
``packing``): always when ``j`` is not its last index (a dense weight ``W[j, k]``),
else when enough rows reuse each panel, or when there are at most ``GEMV_MAX_ROWS``
rows: a row of ``B[k, j]`` is then read 64 bytes at a time with a long stride, and a
constant ``B`` is packed once at build time (``PrepackWeights``). AlexNet's 9216 x
4096 layer on one row, one thread: 118 ms unpacked, 40 ms packed with the wide tile of
``widen_few_rows``, onnxruntime 35-43 ms in the same run (2-core Zen, busy machine).
Matrix-vector products on ``W[j, k]`` (both operands contiguous along ``k``) skip
packing and take the ``gemv`` schedule instead; so do products of up to
``GEMV_TILED_MAX_ROWS`` rows whose weight is not a constant (``CONSTANT_PARAMS``), in
tiles of rows, on targets of 8 lanes or more: a constant weight is packed once at build
time, and the register tile then wins. A transposed
operand, and a weight ``B[k, j]`` read by few row tiles, are packed inside the parallel
loop, a panel where its row tiles run (``pack_in_tasks``); others in a pass of their own
at the head of the kernel.

When both operands are transposed (``x[i, k] * W[j, k]``) one of them is packed per call
whichever axis the vectors run along. With few rows, a whole number of vector tiles,
and a weight passed on every call, the rows are the vector axis instead
(``swap_packed_operand``): ``x`` is the smaller operand to pack, and the weight's rows
are broadcast where they lie. 64x4096x4096 went from 66% to 91% of the peak (13.6 ->
10.0 ms, onnxruntime 13.6; 2-core Zen 4).
"""
from __future__ import annotations

from ...tir.schedule import Schedule
from ...tir.transform.inject_prefetch import PREFETCH_ANNOTATION
from ..analysis import block_infos, iter_vars_of, multiply_accumulate
from ..base import ScheduleRule
from .common import float_bits, inline_injective_producers, schedule_remaining_blocks
from .gemv import (CONSTANT_PARAMS, GEMV_MAX_ROWS, GEMV_TILED_MAX_ROWS,
                   GEMV_TILED_MIN_LANES, gemv_axes, schedule_gemv, weight_load)
from .packing import pack_in_tasks, pack_vector_operand
from .padding import pad_packed_tail, rounded_up
from .tiling import choose_rows, choose_tiles, output_axes, tile_contraction

# A contiguous operand is packed only when at least this many row tiles reuse it.
PACK_MIN_ROW_TILES = 4
# Rows up to which a product packing an operand either way packs the rows' operand
# instead of the columns' (``swap_packed_operand``). Dense with the weight an argument,
# 2-core Zen 4, one process, ms: 64x4096x4096 13.6 -> 10.0, 128x1024x1024 1.38 -> 1.30,
# 256x4096x4096 41.7 -> 39.4, while 256x1024x1024 (2.54 -> 2.59) and 512x1024x4096
# (19.8 both ways) gain nothing.
SWAP_MAX_ROWS = 256
# Fewer rows go in tiles of rows instead (``gemv``) when the weight is not a constant:
# built for AVX2 (``haswell``) 16x1024x1024 ran 0.366 ms with its rows packed and 0.198 in
# tiles of rows, 32x1024x1024 0.322 and 0.378.
SWAP_MIN_ROWS = 32
# Rows that fill no whole vector tile are padded with zero rows of x, computed and never
# stored, up to this share of them. Built for ``haswell`` (run on a Zen 4), the weight
# packed -> x padded, ms: 40x1024x1024 0.970 -> 0.471, 56x1024x1024 1.249 -> 0.629,
# 100x1024x1024 1.552 -> 1.092, 120x1024x1024 1.796 -> 1.250, 200x1024x4096 10.77 ->
# 8.62, 40x4096x4096 12.21 -> 8.16. With AVX-512's 32-row tiles, up to
# SWAP_MAX_PADDED_ROWS_512 padded rows: 56x1024x1024 0.724 -> 0.649 and 120x1024x1024
# 1.308 -> 1.301, but 180x1024x4096 7.59 -> 7.85, 200x1024x1024 2.05 -> 2.25 and
# 200x1024x4096 8.32 -> 8.86, where the packed weight already ran at 86% of the peak.
SWAP_MAX_PADDING = 1 / 4
SWAP_MAX_PADDED_ROWS_512 = 128
# Rows of k ahead that the tile's k loop prefetches its vector operand (B's panel) on the
# CPUs of ``PREFETCH_CPUS`` (``tir.InjectPrefetch``). A panel deeper than L1 is fed from L2,
# and on a Cascade Lake core the tile alone then ran at 61% of the FMA peak, against 99%
# with the panel in L1 (``benchmarks/matmul_schedule.py --tile-only``). With the panel
# prefetched 4 rows ahead: 79% (2, 8 and 16 rows: 76%); 1024^3 on 2 cores 63% -> 69% of
# the peak of the same rounds (median speed-up of 14 rounds 1.10x). Medians of the rounds'
# speed-ups on 2 cores, the same kernels with and without: matmul 512^3 1.21x, 1024^3
# 1.07x, 2048^3 1.04x; with the panel packed in the tasks, dense 128x768x3072 1.14x,
# 128x1024x1024 1.07x, 64x4096x4096 1.07x, matmul 128x3072x768 1.04x, dense 1024^3 1.00x.
# Skylake-SP's core; not measured on other CPUs, which keep the hardware prefetchers alone.
PREFETCH_AHEAD = 4
PREFETCH_CPUS = ("skylake-avx512", "cascadelake", "cooperlake")


def _prefetch_panel(sch) -> None:
    """Annotate the k loop that feeds the register tile (the tile's loops end k, rows,
    columns) with ``PREFETCH_ANNOTATION``; nothing when the nest ends otherwise."""
    info, _ = matmul_block(sch)
    loops = sch.get_loops(info.rv)
    if len(loops) < 3:
        return
    k_loop = sch.get(loops[-3])
    bound = [value for iv, value in zip(info.block.iter_vars, info.realize.iter_values)
             if iv.iter_type.name != "DATA_PAR"]
    if bound == [k_loop.loop_var]:
        sch.annotate(loops[-3], PREFETCH_ANNOTATION, PREFETCH_AHEAD)


def matmul_block(sch):
    """``(info, (A_load, B_load))`` of the one matmul-shaped block, else None."""
    reductions = [i for i in block_infos(sch) if not i.is_injective]
    # The tile and packing are sized for one contraction; two reductions go to other rules.
    if len(reductions) != 1:
        return None
    info = reductions[0]
    loads = multiply_accumulate(info)
    if loads is None or output_axes(info) is None:
        return None
    reduce_vars = [iv.var for iv in info.block.iter_vars if iv.iter_type.name != "DATA_PAR"]
    if len(reduce_vars) != 1:
        return None
    k = reduce_vars[0]
    if not all(k in ld.indices for ld in loads):
        return None
    a_vars, b_vars = (iter_vars_of(ld) for ld in loads)
    # Each operand must own an output axis, else this is a reduction of a product, not a matmul.
    if not (a_vars - b_vars) - {k} or not (b_vars - a_vars) - {k}:
        return None
    return info, loads


class Matmul(ScheduleRule):
    """Register-blocked micro-kernel for matmul, dense and batch matmul."""

    name = "Matmul"

    def apply(self, func, target, tunable=False):
        sch = Schedule(func)
        inline_injective_producers(sch)
        found = matmul_block(sch)
        if found is None:
            return None
        tiles = choose_tiles(*found, target)
        swapped = tiles and swap_packed_operand(sch, *found, tiles, target)
        # GEMV before tiling: on few rows packing W[j, k] costs as much as the product.
        tiled = gemv_axes(*found, max_rows=GEMV_TILED_MAX_ROWS)
        if gemv_axes(*found) is not None:
            gemv = _try_gemv(sch, target)
            if gemv is not None:
                return gemv
        elif not swapped and tiled is not None and \
                target.vector_lanes(32) >= GEMV_TILED_MIN_LANES and \
                weight_load(found[1], tiled).buffer not in constant_buffers(sch):
            gemv = _try_gemv(sch, target, max_rows=GEMV_TILED_MAX_ROWS)
            if gemv is not None:
                return gemv
        tiles = swapped or tiles
        if tiles is None:
            return None
        tiles = fit_columns_to_registers(widen_few_rows(tiles, target), target)
        few_rows = int(tiles[0].dom.extent.value) <= GEMV_MAX_ROWS
        # A transposed operand (attention's k, a dense weight W[j, k]): one panel per task.
        in_tasks = None if few_rows else pack_in_tasks(sch, *found, tiles, matmul_block,
                                                        PACK_MIN_ROW_TILES)
        if in_tasks is not None:
            sch = in_tasks
        else:
            # Few rows read an unpacked B[k, j] 64 bytes per long stride: pack them
            # whatever the reuse.
            sch = pack_vector_operand(sch, *found, tiles, 0 if few_rows else PACK_MIN_ROW_TILES,
                                      short_rows_in_place=not few_rows)
            # Packing may return a new schedule, so the block is looked up again.
            info, _ = matmul_block(sch)
            if not tile_contraction(sch, info, tiles, column_tiles_outer=bool(swapped)):
                return None
        if target.mcpu in PREFETCH_CPUS:
            _prefetch_panel(sch)
        schedule_remaining_blocks(sch, target.vector_lanes(32))
        rows = int(tiles[1].dom.extent.value) if swapped else 0
        if rows % tiles[3]:
            # Where the rewrite does not find its blocks, the last tile keeps its bound test.
            sch = pad_packed_tail(sch, found[0].name, tiles[1].var.name, rows,
                                  padded_rows(rows, tiles[3])) or sch
        return sch


def swap_packed_operand(sch, info, loads, tiles, target):
    """The tiles with rows and vectors swapped when the product packs an operand
    whichever axis is the vector one (``x[i, k] * W[j, k]``: neither is contiguous
    along its output axis), the operand packed by default is the larger one and not a
    constant (``CONSTANT_PARAMS``: one packed at build time costs nothing per call),
    and the rows, from ``SWAP_MIN_ROWS`` to ``SWAP_MAX_ROWS``, fill whole vector tiles
    of two registers each, or do once padded (``padded_rows``; the padding rewrite is
    ``padding.pad_packed_tail``). ``x`` is then packed once (at the head, or a panel per
    task where its panels are enough tasks), the weight is read where it lies (each row
    broadcast along ``k``), and the accumulators are transposed into the output when a
    tile is written. The tiles of ``x`` run outermost, each panel in L2 while the
    weight streams past: built for ``haswell`` (run on a Zen 4), 96x1024x1024 took
    2.07 ms with the panels in groups of three inside the weight's tiles and 1.01 with
    the panels outside (the packed tile before: 1.55); other shapes moved by under 8%
    either way. Else None."""
    row_iv, col_iv, _, _ = tiles
    rows, cols = int(row_iv.dom.extent.value), int(col_iv.dom.extent.value)
    tile = 2 * target.vector_lanes(float_bits(info))
    padded = padded_rows(rows, tile)
    if not (rows < cols and SWAP_MIN_ROWS <= rows <= SWAP_MAX_ROWS and padded) or \
            (padded != rows and tile >= 32 and padded > SWAP_MAX_PADDED_ROWS_512):
        return None
    packed, other = _transposed_operand(col_iv, loads), _transposed_operand(row_iv, loads)
    if packed is None or other is None or packed is other or \
            packed.buffer in constant_buffers(sch):
        return None
    return choose_tiles(info, loads, target, axes=(col_iv, row_iv), cols=tile)


def padded_rows(rows: int, tile: int):
    """``rows`` rounded up to whole vector tiles of ``tile`` lanes when that adds at most
    ``SWAP_MAX_PADDING`` of them (``padded_rows(40, 16) == 48``), else None."""
    return rounded_up(rows, tile, SWAP_MAX_PADDING)


def _transposed_operand(iv, loads):
    """The one operand that uses ``iv``, when it indexes it plainly but not as its last,
    contiguous index; else None."""
    users = [ld for ld in loads if iv.var in iter_vars_of(ld)]
    if len(users) != 1 or iv.var not in users[0].indices or users[0].indices[-1] is iv.var:
        return None
    return users[0]


def widen_few_rows(tiles, target):
    """A product with fewer rows than the register tile holds (a dense layer on one row
    whose weight is stored ``B[k, j]``, as ONNX's Gemm with transB is imported) gets a
    wider vector tile instead, up to the same number of accumulators: each step of
    ``k`` then reads a longer contiguous run of B's row. With 16 columns a tile read
    64 bytes every 16 KB of AlexNet's 9216 x 4096 weight and ran at 1 GB/s."""
    row_iv, col_iv, rows, cols = tiles
    lanes = target.vector_lanes(32)
    budget = (target.vector_registers // 2) // max(1, rows) * lanes
    extent = int(col_iv.dom.extent.value)
    while 2 * cols <= budget and extent % (2 * cols) == 0:
        cols *= 2
    return row_iv, col_iv, rows, cols


def fit_columns_to_registers(tiles, target):
    """A vector tile wider than one register but not a whole number of them (all 10
    columns of a 64x128x10 product on AVX2's 8 lanes) becomes the largest divisor of
    its width that fills more than half of one register (5), with rows re-chosen for
    one vector per row. LLVM splits a ``<10 x float>`` accumulator into lanes and
    shuffles them back on every step of ``k``: 108 us against 17 us for two tiles of
    ``<5 x float>`` (numpy 10 us; one thread, znver1). Widths with no such divisor
    (9, 13) stay: one lane at a time measured slower still."""
    row_iv, col_iv, rows, cols = tiles
    lanes = target.vector_lanes(32)
    if cols <= lanes or cols % lanes == 0:
        return tiles
    narrower = next((d for d in range(lanes, lanes // 2, -1) if cols % d == 0), None)
    if narrower is None:
        return tiles
    rows = choose_rows(int(row_iv.dom.extent.value), 1, target.vector_registers)
    return row_iv, col_iv, rows, narrower


def constant_buffers(sch) -> set:
    """The parameter buffers the function's ``CONSTANT_PARAMS`` attribute names."""
    func = sch.mod["main"]
    indices = (func.attrs or {}).get(CONSTANT_PARAMS) or ()
    return {func.buffer_map[func.params[int(i)]] for i in indices
            if int(i) < len(func.params) and func.params[int(i)] in func.buffer_map}


def _try_gemv(sch, target, max_rows: int = GEMV_MAX_ROWS):
    """The matrix-vector schedule on a copy of ``sch``, or None where it does not fit."""
    trial = sch.copy()
    if not schedule_gemv(trial, *matmul_block(trial), target, max_rows):
        return None
    schedule_remaining_blocks(trial, target.vector_lanes(32))
    return trial
