"""Conv2D: a direct convolution (NCHW or NHWC) gets the register-blocked micro-kernel.

Recognised from indices, not names: the one non-injective block is a multiply-accumulate
with at least two reduce iterators (input channels and the kernel window) and an output
of rank >= 3; the padded input is the operand read through a window (``yy + ry``).
For ResNet-50's ``conv2d_nchw(x[1, 64, 56, 56], w[64, 64, 3, 3])`` on an AVX2 host::

    pad_temp[1, 64, 58, 58]          # kept: inlined, the kernel would test bounds per tap
    w_global[4, 64, 3, 3, 16]        # weights packed into panels of 16 output channels
    for y in T.parallel(56):         # batch and output rows, fused
        for f0, x0 in T.grid(4, 14): # channel tiles, then width tiles
            acc[4, 16] = 0           # 4 output pixels x 16 channels = 8 ymm accumulators
            for rc, ry, rx in T.grid(64, 3, 3):
                for px in T.unroll(4):
                    for f in T.vectorized(16):     # x = 4 * x0 + px
                        acc[px, f] += pad_temp[0, rc, y + ry, x + rx] * w_global[f0, rc, ry, rx, f]
            out[0, 16 * f0 + f, y, x] = acc[px, f]   # unrolled: the transpose is shuffles

* Vector axis: the last output axis one operand indexes plainly (output channels in
  both layouts); that operand is packed into panels as wide as the vector tile.
* Rows: an output axis the packed operand does not use (width), so each row is one
  broadcast input pixel. ``tiling.choose_tiles`` sizes the tile from the target: two
  vector registers of channels and as many rows as fill half the register file
  (4 x 16 with AVX2's 16 ymm, 8 x 32 with AVX-512's 32 zmm); ``tiling.choose_conv_tile``
  then prefers rows that divide the output row, with one vector of channels if need be
  (a 14-pixel row: 7 x 8 rather than 2 x 16; a 7-pixel one: 7 x 8 rather than 4 x 16
  with a partial tile, whose bound test sits on every multiply-add).
* Loop order: threads take whole output rows (fused with the batch; with the channel
  tiles too when there are fewer than 16 rows); inside a row the channel tile is outer
  and the width tiles inner, so the row's input pixels stay in L1 across the channel
  tiles and each packed weight panel across the width tiles, and the tile indices are
  loop counters. All reduction loops run inside a tile in the function's order.
  Where the packed weights outgrow ``tiling.PANEL_GROUP_BYTES`` (ResNet's 3x3 512->512
  layer at 7x7: 9.4 MB), the channel tiles go outermost in groups of panels that fit,
  so each output row finds its panel in L2 instead of streaming every weight from L3
  (that layer on 2 Zen 1 cores: 33 -> 45 GFLOPS, 3x3 256->256 at 14x14 55 -> 61,
  ``benchmarks/panel_groups.py``; layers whose weights fit keep their nest).
* Epilogue: injective consumers (bias, relu) are inlined into the accumulator's
  write-back; the padding and packing blocks are vectorized like elementwise ones.
* Padding: computed inside each task where the tasks pad disjoint parts of the input
  (a depthwise convolution's channel planes, see :func:`pad_in_tasks`), else in a pass
  of its own before them.
* Channel counts that are no multiple of a 16-lane vector (ShuffleNet's 136, SqueezeNet's
  1000) keep whole vectors: the last column tile runs past the end over zero-padded
  weight panels and only the write-back tests the bound (:mod:`.padding`); with half a
  vector instead, a full-width AVX-512 core runs every multiply-add at half width
  (SqueezeNet's 512 -> 1000 1x1 layer at 13x13 on an AVX-512 Xeon: 1.92 -> 0.93 ms,
  2.2x -> 1.2x onnxruntime's time; 136 -> 136 at 28x28: 0.53 -> 0.37 ms; on a Zen 4,
  which splits 512-bit operations in two, 0.94 -> 0.80 and 0.32 -> 0.21 ms).
* A 1x1 NCHW convolution of stride 1 whose rows of pixels the lanes of a 16-lane target
  divide (56x56, 28x28) puts the pixels in the lanes instead (:mod:`.pointwise`).
* A vector axis read with a stride (a depthwise convolution at stride 2, whose only
  vector axis is the output width) gets no register tile on 8-lane targets (see
  :func:`plain_loops`); with 16 lanes it keeps the tile (``STRIDED_TILE_MIN_LANES``).

Measured on a 2-core Zen 3 (AVX2) for the layer above and its 1x1 64->256 sibling,
against onnxruntime in the same process: on one thread the 3x3 layer takes 0.85-1.0x
onnxruntime's time (up to 85% of the core's FMA peak) and the 1x1 1.15-1.25x; on both
cores (``benchmarks/ops.py``, idle machine) 1.1-1.2x and about 0.95x. Alternatives
that measured slower or no faster there: width in the vector lanes with channels as
broadcast rows (the matmul layout; 1.2-2x slower, also with two output rows per tile),
tiles 7 x 8, 8 x 8, 7 x 16 and 14 x 8, unrolling the 3x3 window (about 10% slower on
one thread), and channel tiles outermost in the parallel loop (no faster on one
thread). Replacing one fused loop over all tiles (channel tile fastest) by the nest
above made the 1x1 layer 2-11% faster on one thread and the 3x3 one about 3%.
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.expr import Call, Mul, Select, Var
from ...tir.functor import post_order_visit
from ...tir.schedule import Schedule
from ..analysis import block_infos, iter_vars_of, multiply_accumulate, total_extent
from ..base import ScheduleRule
from .common import (choose_vector_tile, float_bits, inline_injective_producers, loop_kinds,
                     schedule_remaining_blocks)
from .packing import pack_vector_operand
from .padding import pad_packed_tail, padded_extent
from .pointwise import pixel_lanes
from .tiling import (PARALLEL_MIN_MACS, choose_conv_tile, choose_tiles, output_axes,
                     tile_contraction)


def conv_block(sch):
    """``(info, loads)`` of the one convolution-shaped block, else None."""
    reductions = [i for i in block_infos(sch) if not i.is_injective]
    if len(reductions) != 1:
        return None
    info = reductions[0]
    loads = multiply_accumulate(info)
    if loads is None or output_axes(info) is None or len(info.store.indices) < 3:
        return None
    if info.kinds.count("R") < 2:
        return None
    return info, loads


def windowed_buffers(sch) -> set:
    """Buffers the convolution reads through a window (``yy + ry``): candidates to keep
    materialized (see :func:`keeps_window`)."""
    found = conv_block(sch)
    if found is None:
        return set()
    return {ld.buffer for ld in found[1]
            if not all(isinstance(i, Var) or hasattr(i, "value") for i in ld.indices)}


def keeps_window(info, windowed: set) -> bool:
    """Keep a producer the convolution reads through a window when it pads: inlined, the
    kernel would test bounds on every tap. Others (a copy of a channel slice) are
    inlined: materialized, their fused copy loop computes each element's indices by
    division, and a slice of one group's channels cost ten times that group's
    convolution."""
    return info.store.buffer in windowed and _guards_its_read(info)


class Conv2D(ScheduleRule):
    """Register-blocked direct convolution."""

    name = "Conv2D"

    def apply(self, func, target, tunable=False):
        pointwise = pixel_lanes(func, target)
        return pointwise if pointwise is not None else self._apply(func, target, pad=True)

    def _apply(self, func, target, pad: bool):
        sch = Schedule(func)
        windowed = windowed_buffers(sch)
        inline_injective_producers(sch, keep=lambda info: keeps_window(info, windowed))
        found = conv_block(sch)
        if found is None:
            return None
        tiles = conv_tiles(*found, target)
        if tiles is None:
            return None
        lanes = target.vector_lanes(float_bits(found[0]))
        if lanes < STRIDED_TILE_MIN_LANES and _strided(found[1], tiles[1].var):
            # From the unscheduled function, so the padding kept for the tile is inlined there.
            return plain_loops(func)
        channels = int(tiles[1].dom.extent.value)
        # Half a vector, or a whole one whose last tile would test its bound on every lane.
        partial = tiles[3] < lanes or channels % tiles[3] != 0
        padded = padded_extent(channels, lanes) if pad and partial else None
        if padded:
            tiles = conv_tiles(*found, target, cols=lanes)
        # Every output pixel reuses a weight panel, so the weight is packed even when contiguous.
        sch = pack_vector_operand(sch, *found, tiles, min_row_tiles=1)
        info, _ = conv_block(sch)
        if not tile_contraction(sch, info, tiles, row_tiles_inner=True):
            return None
        sch = pad_in_tasks(sch, info.name, lanes)
        schedule_remaining_blocks(sch, target.vector_lanes(32))
        if padded:
            # Without the padding when its rewrite does not find the blocks it expects.
            return pad_packed_tail(sch, info.name, tiles[1].var.name, channels, padded) or \
                self._apply(func, target, pad=False)
        return sch


def pad_in_tasks(sch, name: str, lanes: int):
    """``sch`` with each kept padding computed inside the convolution's outermost loop
    where that splits it into disjoint parts, one per task: a depthwise convolution's
    task pads its own channel's plane, which its taps then read from L1, where a pass of
    its own over the whole input wrote every plane out to memory first (ShuffleNet's
    depthwise layers on a Zen 4: 272x14x14 24 -> 15 us, 136x28x28 63 -> 30, 112x56x56 at
    stride 2 86 -> 55). A padding each task would share with its neighbours (a dense 3x3
    convolution's rows read three padded rows) stays a pass of its own."""
    for pad in [i for i in block_infos(sch) if i.is_injective and _guards_its_read(i)]:
        trial = sch.copy()
        block = trial.get_block(pad.name)
        before = total_extent(trial, trial.get_loops(block))
        try:
            trial.compute_at(block, trial.get_loops(trial.get_block(f"{name}_init"))[0])
        except ScheduleError:
            continue
        outer, *inner = trial.get_loops(block)
        counts = (before, total_extent(trial, [outer]), total_extent(trial, inner))
        if None in counts or counts[1] * counts[2] > before:
            continue
        tile = choose_vector_tile(total_extent(trial, inner[-1:]), lanes)
        trial.vectorize(trial.split(inner[-1], [None, tile])[1])
        sch = trial
    return sch


def _guards_its_read(info) -> bool:
    """True for a padding: an injective block whose value is chosen by a condition."""
    conditional = []
    post_order_visit(info.store.value, lambda node: conditional.append(
        isinstance(node, Select) or (isinstance(node, Call) and node.op == "tir.if_then_else")))
    return any(conditional)


def conv_tiles(info, loads, target, cols=None):
    """``choose_tiles``' axes with the rows and columns of :func:`choose_conv_tile`
    (rows that divide the output row where they can), or None; ``cols`` replaces
    ``choose_tiles``' vector tile (a whole vector over padded channels)."""
    tiles = choose_tiles(info, loads, target)
    if tiles is None:
        return None
    row_iv, col_iv, _, chosen = tiles
    cols = cols or chosen
    window = [iv for iv in info.block.iter_vars
              if iv.iter_type.name != "DATA_PAR" and int(iv.dom.extent.value) > 1]
    rows, cols = choose_conv_tile(int(row_iv.dom.extent.value), cols,
                                  target.vector_lanes(float_bits(info)),
                                  target.vector_registers, pointwise=len(window) <= 1)
    return row_iv, col_iv, rows, cols


# Vector lanes from which a convolution whose vector axis is read with a stride keeps the
# register tile (its strided rows load as contiguous vectors and shuffles): on a Zen 4
# host ShuffleNet's stride-2 depthwise layers took 70, 182 and 22 us with it against 181,
# 212 and 88 as plain loops built for AVX-512 (136x28x28, 112x56x56, 272x14x14); built
# for AVX2 both took 41-44, 82 and 21-22 us, and those keep the plain loops.
STRIDED_TILE_MIN_LANES = 16


def _strided(loads, col_var) -> bool:
    """True when an operand reads the vector axis with a stride (``xx * 2 + rx``): a
    depthwise convolution of stride 2, whose only vector axis is the output width."""
    strided = []

    def visit(node):
        strided.append(isinstance(node, Mul) and col_var in iter_vars_of(node))
    for load in loads:
        for index in load.indices:
            post_order_visit(index, visit)
    return any(strided)


def plain_loops(func):
    """The convolution as its loop nest with the padding inlined, left to LLVM (rows in
    parallel when large). A vector of 14 output pixels read at stride 2 is gathered
    element by element: ShuffleNet's 136-channel depthwise layer at stride 2 took
    0.34 ms with the register tile and 0.08 ms as plain loops (one thread)."""
    sch = Schedule(func)
    inline_injective_producers(sch)
    info = next(i for i in block_infos(sch) if not i.is_injective)
    loops = sch.get_loops(info.rv)
    spatial = [lp for lp, kind in zip(loops, loop_kinds(sch, info)) if kind == "S"]
    if (total_extent(sch, loops) or 0) >= PARALLEL_MIN_MACS and len(spatial) >= 2:
        # The innermost two spatial loops stay serial in each thread, left to LLVM as they are.
        sch.parallel(sch.fuse(*spatial[:-2]) if len(spatial) > 2 else spatial[0])
    return sch
