"""Tile sizes of GPU-tiled blocks drawn together, so that random candidates can launch.

``MultiLevelTiling`` with ``"SSSRRSRS"`` draws the five tiles of every spatial loop
independently; the launch limits depend on all of them at once (threads per block is
the product of the third tiles, virtual threads of the second, a thread's accumulator
of the second, fourth and fifth). For a 1024^3 matmul fewer than one random draw in
fifty respects them, and each rejected draw costs a full replay of the trace. When the
search samples a space anew, :class:`GPUTileSampler` draws the tiles of a block's loops
jointly and keeps a draw only when it fits the target (up to ``MAX_TRIES`` draws, which
cost microseconds; each level is drawn below a cap: at most ``max_vthread`` virtual
threads, ``max_threads_per_block`` threads, a register tile of 16 per axis and level); ``VerifyGPUCode`` still checks every finished candidate.

:func:`gpu_seed_point` gives the decisions of the course's hand schedule instead (8 x 8
threads, each computing an 8 x 8 tile, the reduction in steps of 8, inputs fetched with
4-wide vectors, no unrolling), a point every search measures first.
"""
from __future__ import annotations

import math
import random
from functools import lru_cache

from ..ir.errors import MLCBenchError
from ..tir.functor import post_order_visit
from ..tir.schedule import Schedule
from ..tir.stmt import BlockRealize
from .block_analysis import (REDUCE, SPATIAL, TILING_STRUCTURE_ANNOTATION, locate_block,
                             loop_iter_types)
from .gpu_target import gpu_limits, register_estimate

__all__ = ["GPUTileSampler", "gpu_seed_point"]

GPU_STRUCTURE = "SSSRRSRS"      # spatial levels: blockIdx, vthread, threadIdx, inner, inner
MAX_TRIES = 400
REGISTER_TILE = 16       # the most a thread's tile may span per axis at one level
REDUCTION_STEP = 64      # the most a shared-memory stage may span of a reduction axis
SEED_THREADS, SEED_INNER, SEED_K = 8, 8, 8      # per spatial axis; reduction step
SEED_VECTOR, SEED_UNROLL = 4, 0        # the hand schedule unrolls nothing


class GPUTileSampler:
    """A ``decision_provider`` for ``Trace.apply_to_schedule``: the tile decisions of
    every ``"SSSRRSRS"`` block drawn jointly within the target's limits; other
    decisions left to the schedule's own sampling (None)."""

    def __init__(self, sch: Schedule, target, rng: random.Random):
        self.sch, self.limits, self.rng = sch, gpu_limits(target), rng
        self.decisions: dict = {}        # id(loop var) -> factors

    def __call__(self, inst, kwargs, decision):
        # Other decisions are left to the schedule's own sampling.
        if inst.kind != "sample_perfect_tile":
            return None
        loop = self.sch.get(kwargs["loop"])
        if id(loop.loop_var) not in self.decisions:
            # The first loop of a block draws every loop's tiles; the later ones take theirs.
            self._draw_block(loop, kwargs.get("max_innermost_factor"))
        return self.decisions.pop(id(loop.loop_var), None)

    def _draw_block(self, loop, max_innermost) -> None:
        found = _tiled_loops(self.sch, loop)
        if found is None:
            return
        loops, kinds, spatial_product = found
        inner = int(max_innermost) if max_innermost and int(max_innermost) > 0 else 0
        inner = min(inner or REGISTER_TILE, REGISTER_TILE)
        caps = {SPATIAL: [0, self.limits.max_vthread, self.limits.max_threads_per_block,
                          REGISTER_TILE, inner],
                REDUCE: [0, REDUCTION_STEP, inner]}
        for _ in range(MAX_TRIES):
            tiles = [_random_factors(ext, caps[kind], self.rng)
                     for ext, kind in zip(loops.values(), kinds)]
            if fits(tiles, kinds, spatial_product, self.limits):
                self.decisions.update(zip(loops, tiles))
                return


def fits(tiles, kinds, spatial_product: int, limits) -> bool:
    """Whether spatial tiles ``[block, vthread, thread, inner, inner]`` and reduction
    tiles ``[outer, middle, inner]`` respect the launch limits, estimating the copies
    into shared memory as a matmul's (each spatial tile times the reduction step, in
    floats), which must also split evenly over the threads."""
    spatial = [t for t, k in zip(tiles, kinds) if k == SPATIAL]
    reduce = [t for t, k in zip(tiles, kinds) if k == REDUCE]
    threads = math.prod(t[2] for t in spatial)
    # At least a warp of threads, unless the whole output is too small to occupy one.
    low = limits.thread_warp_size if spatial_product > 2 * limits.thread_warp_size else 1
    if not low <= threads <= limits.max_threads_per_block:
        return False
    if math.prod(t[1] for t in spatial) > limits.max_vthread:
        return False
    words = math.prod(t[1] * t[3] * t[4] for t in spatial)
    allowed = min(limits.max_registers_per_thread, limits.registers_per_block // threads)
    if register_estimate(words) > allowed:
        return False
    step = math.prod(t[1] * t[2] for t in reduce)
    copies = [math.prod(t[1:]) * step for t in spatial]
    if any(copy % threads for copy in copies):       # a guarded cooperative fetch
        return False
    # Four bytes per element: the estimate assumes float32 inputs.
    return sum(copies) * 4 <= limits.max_shared_memory_per_block


def _random_factors(extent: int, caps: list, rng) -> list:
    """Factors of ``extent``, one per level: level ``n`` (``n >= 1``) is a divisor of
    what is left drawn uniformly among those at most ``caps[n]``, innermost first; level
    0 takes the rest. Caps near the limits make most draws fit."""
    factors = [1] * len(caps)
    rest = extent
    # Innermost first: the caps bind the inner levels, the outermost takes what is left.
    for level in range(len(caps) - 1, 0, -1):
        factors[level] = rng.choice([d for d in _divisors(rest) if d <= caps[level]])
        rest //= factors[level]
    factors[0] = rest
    return factors


# Every draw asks again for the divisors of the same few extents.
@lru_cache(maxsize=1024)
def _divisors(n: int) -> tuple:
    return tuple(d for d in range(1, n + 1) if n % d == 0)


def _tiled_loops(sch, loop):
    """``({loop var id: extent}, kinds, spatial product)`` of the loops of the GPU-tiled
    block under ``loop``, or None when there is no such block (or a loop is symbolic)."""
    realize = _tiled_block_under(loop)
    if realize is None:
        return None
    block = sch.get_block(realize.block.name_hint)
    _, hit = locate_block(sch, block)
    loops, kinds = {}, []
    for node, kind in zip(hit.loops(), loop_iter_types(sch, block)):
        if kind not in (SPATIAL, REDUCE):
            continue
        if not hasattr(node.extent, "value"):
            return None
        loops[id(node.loop_var)] = int(node.extent.value)
        kinds.append(kind)
    spatial = math.prod(e for e, k in zip(loops.values(), kinds) if k == SPATIAL)
    return loops, kinds, spatial


def _tiled_block_under(loop):
    found = []
    post_order_visit(loop.body, lambda n: found.append(n) if isinstance(n, BlockRealize)
                     and n.block.annotations.get(TILING_STRUCTURE_ANNOTATION) == GPU_STRUCTURE
                     else None)
    return found[0] if len(found) == 1 else None


def gpu_seed_point(mod, space: Schedule, target) -> Schedule | None:
    """``space``'s trace replayed on ``mod`` with the hand schedule's decisions (module
    docstring), before postprocessing; None when the space tiles no block for the GPU
    or the replay fails."""
    sch = Schedule(mod)
    seeded = []

    def provide(inst, kwargs, decision):
        if inst.kind == "sample_perfect_tile":
            tiles = _seed_tiles(sch, sch.get(kwargs["loop"]), int(kwargs["n"]))
            if tiles is not None:
                seeded.append(inst)
                return tiles
        elif inst.kind == "sample_categorical":
            candidates = [int(c) for c in kwargs["candidates"]]
            for wanted in (SEED_VECTOR, SEED_UNROLL):     # vector lengths, unroll steps
                # The hand schedule's vector length and unroll step, where the space offers them.
                if wanted in candidates:
                    return candidates.index(wanted)
        return decision

    try:
        space.trace.apply_to_schedule(sch, remove_postproc=True, decision_provider=provide)
    except MLCBenchError:
        return None
    return sch if seeded else None


def _seed_tiles(sch, loop, n: int):
    """The last reduction loop in steps of ``SEED_K``, the last two spatial loops over
    ``SEED_THREADS`` threads of ``SEED_INNER`` elements; other loops outermost."""
    found = _tiled_loops(sch, loop)
    if found is None or id(loop.loop_var) not in found[0]:
        return None
    loops, kinds, _ = found
    extent = loops[id(loop.loop_var)]
    same_kind = [key for key, kind in zip(loops, kinds) if kind == (REDUCE if n == 3 else SPATIAL)]
    # Only the last reduction loop and the last two spatial loops are tiled; others stay outer.
    if id(loop.loop_var) not in same_kind[-1 if n == 3 else -2:]:
        return [extent] + [1] * (n - 1)
    if n == 3:
        step = _largest_divisor(extent, SEED_K)
        return [extent // step, step, 1]
    threads = _largest_divisor(extent, SEED_THREADS)
    inner = _largest_divisor(extent // threads, SEED_INNER)
    return [extent // threads // inner, 1, threads, 1, inner]


def _largest_divisor(n: int, at_most: int) -> int:
    return max(d for d in range(1, min(n, at_most) + 1) if n % d == 0)
