"""Conv2D: a direct convolution (NCHW or NHWC) gets the register-blocked micro-kernel.

Recognised from indices: a multiply-accumulate reduction with several reduce
iterators (channels, kernel rows, kernel columns) and an output of rank >= 3. The
output's last axis (width for NCHW, channels for NHWC) is vectorized, an axis the
vector operand does not use (output channels for NCHW, width for NHWC) forms the
unrolled rows, and all reduction loops run inside the parallel outer tiles. The
padded input stays materialized: inlining it would put a bounds test in the kernel.
"""
from __future__ import annotations

from ...tir.expr import Var
from ...tir.schedule import Schedule
from ..analysis import block_infos, multiply_accumulate
from ..base import ScheduleRule
from .common import inline_injective_producers, schedule_remaining_blocks
from .packing import pack_vector_operand
from .tiling import choose_tiles, output_axes, tile_contraction


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
    """Buffers the convolution reads through a window (``yy + ry``): kept materialized."""
    found = conv_block(sch)
    if found is None:
        return set()
    return {ld.buffer for ld in found[1]
            if not all(isinstance(i, Var) or hasattr(i, "value") for i in ld.indices)}


class Conv2D(ScheduleRule):
    """Register-blocked direct convolution."""

    name = "Conv2D"

    def apply(self, func, target, tunable=False):
        sch = Schedule(func)
        keep = windowed_buffers(sch)
        inline_injective_producers(sch, keep=lambda info: info.store.buffer in keep)
        found = conv_block(sch)
        if found is None:
            return None
        tiles = choose_tiles(*found, target)
        if tiles is None:
            return None
        sch = pack_vector_operand(sch, *found, tiles, min_row_tiles=1)
        info, _ = conv_block(sch)
        if not tile_contraction(sch, info, tiles):
            return None
        schedule_remaining_blocks(sch, target.vector_lanes(32))
        return sch
