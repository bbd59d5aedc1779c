"""RandomComputeLocation: compute a producer block at a sampled loop of its consumers.

``sample_compute_location`` draws among the loops where ``compute_at`` is legal, the root
(leave it) and inlining; ``compute_at`` follows the draw. For softmax, the row maximum may
end up inside the loop over rows of the block that uses it::

    for i0 in range(4):
        for k in range(16):                      # T_softmax_maxelem, moved here
            ...
        for i1 in range(16):                     # T_softmax_exp
            ...

Blocks that ``MultiLevelTiling`` tiled stay where they are. A block annotated
``meta_schedule.random_compute_producer`` (``AddRFactor`` marks the block it factored)
also gets its producers moved, after itself.
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.schedule.ir_utils import child_block_realizes
from ...tir.stmt import Block
from ..block_analysis import has_block, locate_block, sibling_consumers
from .multi_level_tiling import TILING_STRUCTURE_ANNOTATION
from .schedule_rule import ScheduleRule

RANDOM_COMPUTE_PRODUCER = "meta_schedule.random_compute_producer"


class RandomComputeLocation(ScheduleRule):
    """Move producer blocks to a sampled compute location.

    Examples
    --------
    >>> RandomComputeLocation().apply(sch, sch.get_block("T_softmax_exp"))  # doctest: +SKIP
    """

    def apply(self, sch, block) -> list:
        if not has_block(sch, block):
            return [sch]
        _, hit = locate_block(sch, block)
        producers = []
        if hit.node.block.annotations.get(RANDOM_COMPUTE_PRODUCER):
            producers = sch.get_producers(block)
            sch.unannotate(block, RANDOM_COMPUTE_PRODUCER)
        if self._movable(sch, block):
            sch = _randomly_compute_at(sch, block)
        for producer in producers:
            if has_block(sch, producer) and self._movable(sch, producer):
                sch = _randomly_compute_at(sch, producer)
        return [sch]

    @staticmethod
    def _movable(sch, block) -> bool:
        """TVM's conditions: a direct child of the root, under at least one loop whose
        outermost holds only this block, not tiled, and read by another block."""
        _, hit = locate_block(sch, block)
        blocks_above = [p for p in hit.parents if isinstance(p, Block)]
        if len(blocks_above) != 1:          # the root itself, or nested in another block
            return False
        loops = hit.loops()
        if not loops or len(child_block_realizes(loops[0])) > 1:
            return False
        if TILING_STRUCTURE_ANNOTATION in hit.node.block.annotations:
            return False
        return bool(sibling_consumers(sch, block))


def _randomly_compute_at(sch, block):
    """``compute_at`` at a sampled location, on a copy: a refused move keeps ``sch``
    (and its trace) as it was."""
    trial = sch.copy()
    try:
        location = trial.sample_compute_location(block)
        trial.compute_at(block, location, preserve_unit_loops=True)
    except ScheduleError:
        return sch
    return trial
