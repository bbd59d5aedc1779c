"""AddRFactor: split a long reduction with little spatial work into partial sums.

A row maximum over ``(4, 4096)`` has only 4 independent outputs: not enough to keep the
cores busy or to fill vector lanes. The rule moves the reduction loops innermost, fuses
them, splits the result in two (``sample_perfect_tile``) and tries ``rfactor`` on each
half, so the partial results along that half are independent::

    for i, k_0, k_1 in T.grid(4, 64, 64):
        with T.block("max_rf"):                 # spatial in k_1: parallel / vector
            ...
    for i, k_1 in T.grid(4, 64):
        with T.block("max"):                    # combines the 64 partial maxima
            ...

Each successful ``rfactor`` is one design space, the untouched schedule another. The
factored block is annotated so that ``RandomComputeLocation`` places its new producer.
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ..block_analysis import (REDUCE, SPATIAL, has_block, has_trivial_binding, is_reduction_block,
                              is_root_block, locate_block, loop_iter_types,
                              needs_multi_level_tiling, spatial_and_reduce_lengths)
from .multi_level_tiling import _branch
from .random_compute_location import RANDOM_COMPUTE_PRODUCER
from .schedule_rule import ScheduleRule


class AddRFactor(ScheduleRule):
    """Add ``rfactor`` design spaces for reductions whose spatial extent is small.

    Examples
    --------
    >>> spaces = AddRFactor(max_jobs_per_core=16).apply(sch, sch.get_block("max"))  # doctest: +SKIP
    >>> len(spaces)          # rfactor on k_0, rfactor on k_1, unchanged
    3
    """

    def __init__(self, max_jobs_per_core: int = 16, max_innermost_factor: int | None = None):
        self.max_jobs_per_core = max_jobs_per_core
        self.max_innermost_factor = max_innermost_factor

    def apply(self, sch, block) -> list:
        if not has_block(sch, block) or not self._needs_rfactor(sch, block):
            return [sch]
        original = _branch(sch)
        try:
            fused, n_spatial = _reorder_and_fuse_reduction_loops(sch, block)
            inner = -1 if self.max_innermost_factor is None else self.max_innermost_factor
            factors = sch.sample_perfect_tile(fused, n=2, max_innermost_factor=inner)
            halves = sch.split(fused, factors)
        except ScheduleError:
            return [original]
        results = []
        for loop in halves:
            branch = _branch(sch)
            try:
                branch.rfactor(loop, n_spatial)
                branch.annotate(block, RANDOM_COMPUTE_PRODUCER, 1)
            except ScheduleError:
                continue
            results.append(branch)
        return results + [original]

    def _needs_rfactor(self, sch, block) -> bool:
        """TVM's test: a reduction with trivial bindings whose reduction is longer than
        its spatial part (tiled blocks), or longer than the core count (others)."""
        _, hit = locate_block(sch, block)
        if is_root_block(sch, block) or not is_reduction_block(hit.node.block) or \
                not has_trivial_binding(sch, block):
            return False
        lengths = spatial_and_reduce_lengths(sch, block)
        if lengths is None:
            return False
        space, reduce = lengths
        cores = self.target.num_cores
        if needs_multi_level_tiling(sch, block):
            return not (space >= reduce or space > self.max_jobs_per_core * cores)
        return reduce > 1 and reduce > cores

    def __repr__(self) -> str:
        return (f"AddRFactor(max_jobs_per_core={self.max_jobs_per_core}, "
                f"max_innermost_factor={self.max_innermost_factor})")


def _reorder_and_fuse_reduction_loops(sch, block):
    """Spatial loops first, then the reduction loops fused into one. Returns the fused
    loop and the number of spatial loops (the rfactor axis)."""
    loops = sch.get_loops(block)
    kinds = loop_iter_types(sch, block)
    spatial = [lp for lp, k in zip(loops, kinds) if k == SPATIAL]
    reduce = [lp for lp, k in zip(loops, kinds) if k == REDUCE]
    if len(spatial) + len(reduce) != len(loops) or not reduce:
        raise ScheduleError("AddRFactor: every loop must be spatial or reduction")
    if kinds != sorted(kinds, key=lambda k: k == REDUCE):
        sch.reorder(*(spatial + reduce))
    fused = sch.fuse(*reduce) if len(reduce) > 1 else reduce[0]
    return fused, len(spatial)
