"""Winograd: the stages of ``topi.nn.conv2d_winograd_nchw``, as its AutoTVM template
(``conv2d_nchw_winograd.x86``) schedules them.

Recognised by the stage names the TOPI compute gives (``bgemm``, ``data_pack``, ...):
the Conv2D rule does not fit the batched product, and the fallback's schedule of these
stages compiled for minutes and ran 140x slower than the direct convolution.

* ``kernel_pack`` (the weight's transform, the rows stage inlined) is one loop nest
  reading only the weight, positions innermost and unrolled: PrepackWeights runs it
  once at build time when the weight is a constant.
* Each transform stage has its position loop (the matrix column it computes) unrolled,
  so only the non-zero matrix entries are computed, and its channels across the
  threads (``TRANSFORMS``); where the tile index ``p`` is the stage's contiguous last
  axis (``data_pack``, ``inverse_rows``) the tiles go in the vector lanes under the
  position loop. The padding runs channels in parallel and rows in the lanes. In
  ResNet-50 (onnx wheel, ``relax.conv2d.winograd`` on, 2-core Zen 4) the 64x56x56 layer
  went from 1.77 to 1.32 ms a call and the 128x28x28 from 1.28 to 0.96 (its direct
  convolution: 1.08), with the transforms serial and scalar before; 256x14x14 stayed at
  1.1 ms, where the transformed weight (4x the weight) streams from memory.
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
# stage -> (its iterators in order: the channel, the tile index ``p`` when p is the
# stage's contiguous last axis and vectorized, else None, and its position iterator)
TRANSFORMS = {"data_pack_rows": (2, None, 0), "data_pack": (2, 3, 1),
              "inverse_rows": (2, 3, 0), "inverse": (0, None, 3)}
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


def _schedule_transform(sch, block, channel: int, tiles, position: int,
                        lanes: int) -> None:
    """``for c in T.parallel(..): for .., p0: for pos in T.unroll(..): for p1 in
    T.vectorized(..)``: the channels across the threads, the position loop unrolled (its
    if_then_else choices fold away) and, where the tile index ``p`` is the stage's
    contiguous last axis, the tiles in the vector lanes under it."""
    loops = sch.get_loops(block)
    pos, chan = loops[position], loops[channel]
    rest = [lp for k, lp in enumerate(loops) if k not in (channel, position, tiles)]
    if tiles is None:
        sch.reorder(chan, *rest, pos)
    else:
        extent = int(sch.get(loops[tiles]).extent.value)
        p0, p1 = sch.split(loops[tiles], [None, _largest_divisor(extent, lanes)])
        sch.reorder(chan, *rest, p0, pos, p1)
        sch.vectorize(p1)
    sch.unroll(pos)
    sch.parallel(chan)


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
        lanes = target.vector_lanes(32)
        for name, (channel, tiles, position) in TRANSFORMS.items():
            _schedule_transform(sch, stages[name], channel, tiles, position, lanes)
        _schedule_padding(sch, lanes)
        _schedule_bgemm(sch, stages["bgemm"], lanes)
        inline_injective_consumers(sch, stages["conv2d_winograd"])
        n, co, _, _ = sch.get_loops(stages["conv2d_winograd"])
        sch.parallel(sch.fuse(n, co))
        return sch


def _schedule_padding(sch, lanes: int) -> None:
    """``data_pad``, when the convolution pads: channels across the threads, rows in
    the vector lanes."""
    pads = [i for i in block_infos(sch) if i.name == "data_pad"]
    if not pads:
        return
    n, c, _, w = sch.get_loops(pads[0].rv)
    sch.parallel(sch.fuse(n, c))
    extent = int(sch.get(w).extent.value)
    sch.vectorize(sch.split(w, [None, min(lanes, extent)])[1])
