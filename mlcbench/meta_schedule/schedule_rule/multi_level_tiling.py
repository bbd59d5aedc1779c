"""MultiLevelTiling: tile a reduction block into a loop nest that reuses data.

With the CPU structure ``"SSRSRS"`` every spatial loop is split into four tiles and
every reduction loop into two (sizes drawn by ``sample_perfect_tile``), then reordered
level by level. For a matmul ``C[i, j] += A[i, k] * B[k, j]``::

    for i_0, j_0, i_1, j_1, k_0, i_2, j_2, k_1, i_3, j_3 in T.grid(...):
        C[...] += A[...] * B[...]

The two innermost spatial tiles (``i_3, j_3``) form the register tile; ``k_0`` walks the
reduction outside the second tile level. With ``reuse_write`` the block writes a cache
(``cache_write``) copied back under the last loop of tile level ``1`` or ``2`` (one
design space per level, plus one without the cache when ``req="may"``): with level 2
the accumulator of a tile stays local while ``k`` runs.

With ``pack_vector_operand="may"`` (the CPU default) every space comes twice, once
marked for packing (``"must"``: only marked): on a marked program the
``PackVectorOperand`` postprocessor copies ``B`` into panels as wide as the innermost
``j`` tiles once the search has fixed the tile sizes, as the default matmul schedule
does.

On a GPU (structure ``"SSSRRSRS"``, ``tile_binds=["blockIdx.x", "vthread.x",
"threadIdx.x"]``) the first three spatial levels are bound to threads, the inputs are
staged in shared memory at the first reduction level (``reuse_read``) and the output
accumulates in ``"local"`` registers (``reuse_write`` at level 3): see ``gpu_tiling``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.errors import InvalidValueError, ScheduleError
from ..block_analysis import (OTHER, PACK_ANNOTATION, REDUCE, SPATIAL, TILING_STRUCTURE_ANNOTATION,
                              has_block, locate_block, loop_iter_types, needs_multi_level_tiling,
                              vector_operand_reads)
from ..gpu_target import gpu_limits
from .gpu_tiling import add_read_reuse, bind_tiles
from .schedule_rule import ScheduleRule



@dataclass(frozen=True)
class ReuseType:
    """How a tile reuses a buffer: ``req`` is ``"no"``, ``"may"`` (try with and without)
    or ``"must"``; ``levels`` are the tile levels (1-based) the cache is placed under;
    ``scope`` is the cache's storage scope."""
    req: str = "no"
    levels: list = field(default_factory=list)
    scope: str = "global"

    def __post_init__(self):
        if self.req not in ("no", "may", "must"):
            raise InvalidValueError(
                f"ReuseType: req must be 'no', 'may' or 'must', found {self.req!r}")
        object.__setattr__(self, "levels", tuple(int(x) for x in self.levels))


THREAD_AXES = tuple(f"{kind}.{axis}" for kind in ("blockIdx", "vthread", "threadIdx")
                    for axis in "xyz")
CPU_WRITE_REUSE = ReuseType(req="may", levels=[1, 2], scope="global")


class MultiLevelTiling(ScheduleRule):
    """Tile blocks that reuse data (matmul, conv2d) with the given structure.

    Examples
    --------
    >>> rule = MultiLevelTiling(structure="SSRSRS")
    >>> spaces = rule.apply(sch, sch.get_block("C"))        # doctest: +SKIP
    >>> len(spaces)          # no cache, cache at level 1, cache at level 2
    3
    """

    def __init__(self, structure: str = "SSRSRS", tile_binds=None,
                 max_innermost_factor: int | None = 64, vector_load_lens=None,
                 reuse_read: ReuseType | None = None,
                 reuse_write: ReuseType | None = CPU_WRITE_REUSE, filter_fn=None,
                 pack_vector_operand: str = "no"):
        if not structure or set(structure) - {"S", "R"} or "S" not in structure:
            raise InvalidValueError(
                f"MultiLevelTiling: structure must be made of 'S' and 'R' with "
                f"at least one 'S', found {structure!r}")
        bad_tags = [t for t in tile_binds or () if t not in THREAD_AXES]
        if bad_tags:
            raise InvalidValueError(f"MultiLevelTiling: tile_binds must name thread axes "
                                    f"such as 'blockIdx.x', 'vthread.x', 'threadIdx.x'; "
                                    f"found {bad_tags[0]!r}")
        if reuse_read is not None and not isinstance(reuse_read, ReuseType):
            reuse_read = ReuseType(**reuse_read)
        if reuse_write is not None and not isinstance(reuse_write, ReuseType):
            reuse_write = ReuseType(**reuse_write)
        if pack_vector_operand not in ("no", "may", "must"):
            raise InvalidValueError(
                f"MultiLevelTiling: pack_vector_operand must be 'no', 'may' or "
                f"'must', found {pack_vector_operand!r}")
        self.structure = structure
        self.pack_vector_operand = pack_vector_operand
        self.tile_binds = list(tile_binds or [])
        self.max_innermost_factor = max_innermost_factor
        self.vector_load_lens = vector_load_lens
        self.reuse_read = reuse_read
        self.reuse_write = reuse_write
        self.filter_fn = filter_fn

    def apply(self, sch, block) -> list:
        if not has_block(sch, block) or not self._wants(sch, block):
            return [sch]
        # Marked: the seed and tile samplers find the tiled block by it, and no rule tiles it twice.
        sch.annotate(block, TILING_STRUCTURE_ANNOTATION, self.structure)
        tiles = self.tile_loop_nest(sch, block)
        if self.tile_binds:
            tiles = bind_tiles(sch, block, tiles, self.tile_binds, gpu_limits(self.target))
        spaces = self._add_write_reuse(sch, block, tiles)
        if self.reuse_read is not None and self.reuse_read.req != "no":
            spaces = add_read_reuse(spaces, block, tiles, self.reuse_read,
                                    self.vector_load_lens,
                                    gpu_limits(self.target).max_vector_bytes)
        return self._add_packing(spaces, block)

    def _wants(self, sch, block) -> bool:
        if self.filter_fn is not None:
            return bool(self.filter_fn(sch, block))
        _, hit = locate_block(sch, block)
        # Already tiled by a tiling rule: leave it.
        if TILING_STRUCTURE_ANNOTATION in hit.node.block.annotations:
            return False
        return needs_multi_level_tiling(sch, block)

    def tile_loop_nest(self, sch, block) -> list:
        """Split and reorder the block's loops; returns the LoopRVs of each tile level."""
        levels = {kind: [n for n, c in enumerate(self.structure) if c == kind]
                  for kind in (SPATIAL, REDUCE)}
        tiles = [[] for _ in self.structure]
        kinds = loop_iter_types(sch, block)
        # -1 is the sampler's "no limit".
        inner = -1 if self.max_innermost_factor is None else self.max_innermost_factor
        for loop, kind in zip(sch.get_loops(block), kinds):
            # Loops neither spatial nor reduction (or with no level of their kind) stay put.
            if kind == OTHER or not levels[kind]:
                continue
            positions = levels[kind]
            # A single level takes the loop whole: there is nothing to sample.
            if len(positions) == 1:
                tiles[positions[0]].append(loop)
                continue
            factors = sch.sample_perfect_tile(loop, n=len(positions),
                                              max_innermost_factor=inner)
            for level, part in zip(positions, sch.split(loop, factors)):
                tiles[level].append(part)
        order = [loop for level in tiles for loop in level]
        if len(order) > 1:
            sch.reorder(*order)
        return tiles

    def _add_write_reuse(self, sch, block, tiles) -> list:
        config = self.reuse_write
        if config is None or config.req == "no":
            return [sch]
        results = []
        if config.req == "may":
            # "may": the untouched schedule is a space of its own, without the cache.
            results.append(_branch(sch))
        try:
            # A block whose output cannot be cached keeps the spaces made so far.
            cache = sch.cache_write(block, 0, config.scope)
        except ScheduleError:
            return results or [sch]
        for level in config.levels:
            if not 1 <= level <= len(tiles) or not tiles[level - 1]:
                continue
            # One branch per level: the same cache placed under different tile loops.
            branch = _branch(sch)
            try:
                branch.reverse_compute_at(cache, tiles[level - 1][-1], preserve_unit_loops=True)
            except ScheduleError:
                continue
            results.append(branch)
        return results or [sch]

    def _add_packing(self, spaces, block) -> list:
        """Each space as it is and/or marked for ``PackVectorOperand``."""
        if self.pack_vector_operand == "no" or not spaces:
            return spaces
        _, hit = locate_block(spaces[0], block)
        if not vector_operand_reads(hit.node.block):
            return spaces
        # "may" keeps the unmarked spaces and adds marked copies; "must" marks them in place.
        marked = [_branch(s) if self.pack_vector_operand == "may" else s for s in spaces]
        for space in marked:
            space.annotate(block, PACK_ANNOTATION, 1)
        return (spaces if self.pack_vector_operand == "may" else []) + marked

    def __repr__(self) -> str:
        return (f"MultiLevelTiling(structure={self.structure!r}, tile_binds="
                f"{self.tile_binds}, max_innermost_factor={self.max_innermost_factor}, "
                f"reuse_read={self.reuse_read}, reuse_write={self.reuse_write}, "
                f"pack_vector_operand={self.pack_vector_operand!r})")


def _branch(sch):
    """A copy of ``sch`` with its own random stream."""
    other = sch.copy()
    # Its own stream, so branches sample different decisions, reproducibly.
    other.seed(sch.fork_seed())
    return other
