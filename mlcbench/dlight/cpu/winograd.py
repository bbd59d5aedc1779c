"""Winograd: the stages of ``topi.nn.conv2d_winograd_nchw``, as its AutoTVM template
(``conv2d_nchw_winograd.x86``) schedules them.

Recognised by the stage names the TOPI compute gives (``bgemm``, ``data_pack``, ...):
the Conv2D rule does not fit the batched product, and the fallback's schedule of these
stages compiled for minutes and ran 140x slower than the direct convolution.

* ``kernel_pack`` (the weight's transform, the rows stage inlined) is one loop nest
  reading only the weight, positions innermost and unrolled: PrepackWeights runs it
  once at build time when the weight is a constant.
* Each transform stage has its position loop (the matrix column it computes) innermost
  and unrolled, so only the non-zero matrix entries are computed.
* ``bgemm[eps, nu]``: ``for b (eps, nu fused), coo, po, rco, rci, coi (unrolled),
  pi (vector)``, the tile count in the vector lanes (rounded up to whole vectors by
  the compute's ``tile_multiple``).
* Injective consumers (bias, relu, a residual add) are inlined into the output's store.
"""
from __future__ import annotations

from ...tir.schedule import Schedule
from ..analysis import block_infos
from ..base import ScheduleRule
from .common import inline_injective_consumers

STAGES = ("data_pack_rows", "data_pack", "kernel_pack_rows", "kernel_pack", "bgemm",
          "inverse_rows", "inverse", "conv2d_winograd")
# (stage, index of its position loop)
TRANSFORMS = (("data_pack_rows", 0), ("data_pack", 1), ("inverse_rows", 0), ("inverse", 3))
TILE_CO, TILE_RC = 8, 16


def _stage_blocks(sch) -> dict | None:
    """Block handles by stage name, or None when a stage is missing."""
    found = {}
    for info in block_infos(sch):
        if info.name in STAGES:
            found[info.name] = info.rv
    return found if len(found) == len(STAGES) else None


def _largest_divisor(extent: int, limit: int) -> int:
    return max(d for d in range(1, min(extent, limit) + 1) if extent % d == 0)


def _position_innermost(sch, block, position: int) -> None:
    loops = sch.get_loops(block)
    rest = loops[:position] + loops[position + 1:]
    sch.reorder(*rest, loops[position])
    sch.unroll(loops[position])


def _schedule_bgemm(sch, block, lanes: int) -> None:
    eps, nu, co, p, rc = sch.get_loops(block)
    extents = [int(sch.get(loop).extent.value) for loop in (co, p, rc)]
    b = sch.fuse(eps, nu)
    coo, coi = sch.split(co, [None, _largest_divisor(extents[0], TILE_CO)])
    po, pi = sch.split(p, [None, _largest_divisor(extents[1], lanes)])
    rco, rci = sch.split(rc, [None, _largest_divisor(extents[2], TILE_RC)])
    sch.reorder(b, coo, po, rco, rci, coi, pi)
    sch.decompose_reduction(block, rco)
    sch.unroll(coi)
    sch.vectorize(pi)
    sch.parallel(b)


class Winograd(ScheduleRule):
    """Schedule a Winograd convolution's stages (see module docstring)."""

    name = "Winograd"

    def apply(self, func, target, tunable=False):
        sch = Schedule(func)
        stages = _stage_blocks(sch)
        if stages is None:
            return None
        sch.compute_inline(stages["kernel_pack_rows"])
        eps, nu, co, ci = sch.get_loops(stages["kernel_pack"])
        sch.reorder(co, ci, eps, nu)
        sch.unroll(eps)
        sch.unroll(nu)
        for name, position in TRANSFORMS:
            _position_innermost(sch, stages[name], position)
        _schedule_bgemm(sch, stages["bgemm"], target.vector_lanes(32))
        inline_injective_consumers(sch, stages["conv2d_winograd"])
        n, co, _, _ = sch.get_loops(stages["conv2d_winograd"])
        sch.parallel(sch.fuse(n, co))
        return sch
