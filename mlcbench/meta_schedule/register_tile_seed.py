"""The register-tile point of a design space: the decisions the default schedule takes.

A space made by ``MultiLevelTiling`` contains the register-blocked micro-kernel of the
default (dlight) matmul and convolution schedules: its innermost tiles are the
``rows x cols`` register tile, every other spatial tile but the outermost is 1, and
the whole reduction runs inside the outer tiles. Random samples almost never land
there (a 1024^3 matmul has about 10^7 tilings), so the search measures this point of
every space in its first round; the evolutionary search then mutates from the best
measured programs, this one included::

    sch = register_tile_point(mod, space, Target("llvm"))
    # sample_perfect_tile(i) -> [256, 1, 1, 4], (j) -> [64, 1, 1, 16], (k) -> [16, 64]

Only ``sample_perfect_tile`` decisions of a tiled block (one carrying
``meta_schedule.tiling_structure``) and the unroll step change; every other decision
stays as the space drew it.
"""
from __future__ import annotations

from ..dlight.analysis import BlockInfo, multiply_accumulate
from ..dlight.cpu.tiling import choose_tiles
from ..ir.errors import MLCBenchError
from ..tir.functor import post_order_visit
from ..tir.schedule import Schedule
from ..tir.stmt import BlockRealize
from .schedule_rule.multi_level_tiling import TILING_STRUCTURE_ANNOTATION

__all__ = ["register_tile_point"]

# The unroll step of the seed: the register tile's rows written out, the loops around
# them left as loops.
SEED_UNROLL_STEP = 16


def register_tile_point(mod, space: Schedule, target) -> Schedule | None:
    """``space``'s trace replayed on ``mod`` with the register-tile decisions, before
    postprocessing; None when the space tiles no block the default rules recognise
    (nothing to seed) or the replay fails."""
    sch = Schedule(mod)
    changed = []

    def provide(inst, kwargs, decision):
        if inst.kind == "sample_perfect_tile":
            tiles = _tile_decision(sch, kwargs["loop"], int(kwargs["n"]),
                                   kwargs.get("max_innermost_factor"), target)
            if tiles is not None:
                changed.append(inst)
                return tiles
        # The unroll step changes only in a space whose tiles were seeded.
        elif inst.kind == "sample_categorical" and changed:
            candidates = [int(c) for c in kwargs["candidates"]]
            if SEED_UNROLL_STEP in candidates:
                return candidates.index(SEED_UNROLL_STEP)
        return decision

    try:
        space.trace.apply_to_schedule(sch, remove_postproc=True, decision_provider=provide)
    except MLCBenchError:
        return None
    return sch if changed else None


def _tile_decision(sch, loop_rv, n: int, max_innermost, target):
    """Factors for the loop ``loop_rv`` of a tiled block: the register tile innermost,
    the rest outermost; None for a loop that is not a plain iterator of such a block."""
    loop = sch.get(loop_rv)
    realize = _tiled_block_under(loop)
    if realize is None or n < 2:
        return None
    values = list(realize.iter_values)
    if loop.loop_var not in values:
        return None
    iv = realize.block.iter_vars[values.index(loop.loop_var)]
    info = BlockInfo(realize.block.name_hint, None, realize.block, realize)
    loads = multiply_accumulate(info)
    tiles = choose_tiles(info, loads, target) if loads is not None else None
    if tiles is None:
        return None
    row_iv, col_iv, rows, cols = tiles
    extent = int(iv.dom.extent.value)
    if iv.iter_type.name != "DATA_PAR":
        # The whole reduction in the innermost tile, inside the outer tiles as in dlight's.
        want = extent
    elif iv.var is col_iv.var:
        want = cols
    elif iv.var is row_iv.var:
        want = rows
    else:
        want = 1
    if max_innermost is not None and int(max_innermost) > 0:
        # The space's own cap on the innermost factor still holds.
        want = min(want, int(max_innermost))
    # A perfect tile: the largest divisor of the extent not above the wanted size.
    inner = max(d for d in range(1, want + 1) if extent % d == 0)
    return [extent // inner] + [1] * (n - 2) + [inner]


def _tiled_block_under(loop):
    found = []

    def visit(node):
        if isinstance(node, BlockRealize) and \
                TILING_STRUCTURE_ANNOTATION in node.block.annotations:
            found.append(node)
    post_order_visit(loop.body, visit)
    return found[0] if len(found) == 1 else None
