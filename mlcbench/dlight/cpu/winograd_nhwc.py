"""WinogradNHWC: the two transform kernels of ``topi.nn.conv2d_winograd_nhwc``.

Recognised by their stage names (``winograd_data_pack``, ``winograd_inverse``); the
batched product between them is a plain batched matmul and gets the Matmul rule. Both
transforms keep channels in the vector lanes and compute each tile's stages, one vector
of channels at a time, next to their consumer, with the position loops unrolled so each
position's ``if_then_else`` choice folds to its non-zero terms. For ResNet-50's
``x[1, 28, 28, 128]`` and F(4x4, 3x3) (49 tiles, 36 positions), AVX-512::

    data_pad[1, 30, 30, 128]                  # materialized: no bound test per tap
    for p in T.parallel(49):                  # tiles across the threads
        for c0 in range(8):
            patch[6, 6, 16]     = data_pad[<the tile's 6x6 patch>, 16 * c0 : +16]
            rows[6, 6, 16]      = B^T patch   # unrolled: 22 non-zero terms per column
            for e in T.unroll(36):
                for c1 in T.vectorized(16):
                    data_pack[e, p, 16 * c0 + c1] = (rows B)[e // 6, e % 6]

    for p in T.parallel(49):                  # (batch, tile row, tile column) fused
        for c0 in range(8):
            rows[4, 6, 16], tile[4, 4, 16] = A^T m, (A^T m) A    # unrolled
            for vh, vw in T.grid(4, 4):       # unrolled; a bound test at the image edge
                for c1 in T.vectorized(16):
                    out[0, 4 * ty + vh, 4 * tx + vw, 16 * c0 + c1] = relu(tile + residual)

The per-tile buffers become registers (LLVM's SROA). Written first as one stage of 36
two-dimensional sums over the padded input, the input transform took 4.2 s to lower and
compile (128 channels at 28x28); as a gathered patch and two 1-D passes it takes 0.3 s
and runs 264 multiply-adds per tile and channel vector instead of 484. Injective producers of the input are inlined into the padding,
consumers of the output (bias, residual add, relu) into the output transform's store.
"""
from __future__ import annotations

from ...tir.schedule import Schedule
from ..analysis import block_infos
from ..base import ScheduleRule
from .common import (choose_vector_tile, inline_injective_consumers,
                     inline_injective_producers, schedule_remaining_blocks)

DATA_PAD = "data_pad"
DATA_PACK, PATCH, PATCH_ROWS = "winograd_data_pack", "winograd_patch", "winograd_patch_rows"
INVERSE, INVERSE_TILE, INVERSE_ROWS = ("winograd_inverse", "winograd_inverse_tile",
                                       "winograd_inverse_rows")


def _block(sch, name: str):
    found = [info for info in block_infos(sch) if info.name == name]
    return found[0] if len(found) == 1 else None


def _extent(sch, loop) -> int:
    return int(sch.get(loop).extent.value)


def _vector_split(sch, loop, lanes: int):
    """``(outer, inner)``: the channel loop split into single vectors where the lanes
    divide it (a tile's alpha^2 vectors then stay in registers), else as
    ``choose_vector_tile`` splits it."""
    extent = _extent(sch, loop)
    return sch.split(loop, [None, lanes if extent % lanes == 0 else
                            choose_vector_tile(extent, lanes)])


class WinogradNHWC(ScheduleRule):
    """Schedule an NHWC Winograd transform kernel (see module docstring)."""

    name = "WinogradNHWC"

    def apply(self, func, target, tunable=False):
        sch = Schedule(func)
        names = {info.name for info in block_infos(sch)}
        lanes = target.vector_lanes(32)
        if DATA_PACK in names:
            return self._data_pack(sch, lanes)
        if INVERSE in names:
            return self._inverse(sch, lanes)
        return None

    @staticmethod
    def _data_pack(sch, lanes: int):
        stages = (PATCH, PATCH_ROWS, DATA_PACK)
        inline_injective_producers(sch, keep=lambda info: info.name in (DATA_PAD,) + stages)
        blocks = [_block(sch, name) for name in stages]
        if any(b is None for b in blocks):
            return None
        patch, rows, pack = blocks
        e, p, c = sch.get_loops(pack.rv)
        c0, c1 = _vector_split(sch, c, lanes)
        sch.reorder(p, c0, e, c1)
        # One vector of channels of the tile's patch and of its column pass: alpha^2
        # vectors each, which the unrolled positions share.
        _compute_at_tile(sch, (rows.rv, patch.rv), c0, depth=2)
        sch.unroll(e)
        sch.vectorize(c1)
        sch.parallel(p)
        # The padding (and whatever was inlined into it): rows across the threads.
        schedule_remaining_blocks(sch, lanes, skip=stages)
        return sch

    @staticmethod
    def _inverse(sch, lanes: int):
        stages = (INVERSE_ROWS, INVERSE_TILE, INVERSE)
        blocks = [_block(sch, name) for name in stages]
        if any(b is None for b in blocks):
            return None
        rows, tile, inverse = blocks
        inline_injective_producers(sch, keep=lambda info: info.name in stages)
        inline_injective_consumers(sch, inverse.rv)
        m = int(sch.get(sch.get_loops(tile.rv)[1]).extent.value)
        n, h, w, c = sch.get_loops(inverse.rv)
        ho, hi = sch.split(h, [None, m])
        wo, wi = sch.split(w, [None, m])
        c0, c1 = _vector_split(sch, c, lanes)
        sch.reorder(n, ho, wo, c0, hi, wi, c1)
        # The tile's two passes, one vector of channels, next to their gather.
        _compute_at_tile(sch, (tile.rv, rows.rv), c0, depth=4)
        sch.unroll(hi)
        sch.unroll(wi)
        sch.vectorize(c1)
        sch.parallel(sch.fuse(n, ho, wo))
        schedule_remaining_blocks(sch, lanes, skip=stages)
        return sch


def _compute_at_tile(sch, blocks, loop, depth: int) -> None:
    """compute_at each of ``blocks`` (consumers first) under ``loop``, the ``depth``-th
    loop of the nest; the loops each gets below it (positions, then channels) are
    unrolled but the last, which is vectorized."""
    for block in blocks:
        sch.compute_at(block, loop)
    for block in blocks:
        _unroll_vectorize(sch, sch.get_loops(block)[depth:])


def _unroll_vectorize(sch, loops) -> None:
    """Unroll every loop but the last (the channels), which is vectorized."""
    for loop in loops[:-1]:
        sch.unroll(loop)
    sch.vectorize(loops[-1])
