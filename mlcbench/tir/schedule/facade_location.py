"""sample_compute_location: draw where a block is computed, recorded with its decision.

The candidates are every loop under which ``compute_at(block, loop)`` is legal, in
program order, plus two special places: ``-1`` leaves the block where it is ("compute
root") and ``-2`` inlines it (offered when ``compute_inline`` is legal). The decision is
an index into the loop candidates, or -1 / -2::

    loc = sch.sample_compute_location(block)      # decision recorded in the trace
    sch.compute_at(block, loc)                    # root: no change; inline: inlined
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ..stmt import For
from .ir_utils import find_all
from .primitives import compute_location, inline
from .trace import LoopRV

ROOT, INLINE = -1, -2


def location_candidates(func, block_name: str) -> tuple[list, bool]:
    """``(loop vars where compute_at is legal, whether compute_inline is legal)``."""
    loops = []
    for hit in find_all(func, lambda n: isinstance(n, For)):
        try:
            compute_location.compute_at(func, block_name, hit.node.loop_var, False)
        except ScheduleError:
            continue
        loops.append(hit.node.loop_var)
    try:
        inline.compute_inline(func, block_name)
        can_inline = True
    except ScheduleError:
        can_inline = False
    return loops, can_inline


class LocationSamplingMixin:
    def sample_compute_location(self, block, decision=None) -> LoopRV:
        """A LoopRV for ``compute_at``: a legal loop, the root (-1) or inline (-2)."""
        block = self._as_block_rv(block)
        func_name, hit = self._block(block, "sample_compute_location")
        name = hit.node.block.name_hint
        loops, can_inline = location_candidates(self._mod[func_name], name)
        choices = list(range(len(loops))) + [ROOT] + ([INLINE] if can_inline else [])
        if decision is None:
            decision = self._rand.choice(choices)
        if decision not in choices:
            raise ScheduleError(
                f"sample_compute_location: decision {decision!r} is not a location of block "
                f"{name!r}; the choices are {choices} (indices into the legal loops "
                f"{[v.name for v in loops]}, -1 for root, -2 for inline)")
        out = LoopRV()
        if decision >= 0:
            self._rvs[out] = ("loop", func_name, loops[decision])
        else:
            self._rvs[out] = ("location", func_name, "root" if decision == ROOT else "inline")
        self._commit(func_name, None, "sample_compute_location", inputs=(("block", block),),
                     outputs=(out,), decision=int(decision))
        return out

    def _special_location(self, loop):
        entry = self._rvs.get(loop) if isinstance(loop, LoopRV) else None
        return entry[2] if entry is not None and entry[0] == "location" else None

    def compute_at(self, block, loop, preserve_unit_loops: bool = False, index: int = -1):
        """As ComputeLocationMixin.compute_at; a sampled root location leaves the block
        in place and a sampled inline location inlines it."""
        where = self._special_location(loop)
        if where is None:
            return super().compute_at(block, loop, preserve_unit_loops, index)
        block = self._as_block_rv(block)
        func_name, hit = self._block(block, "compute_at")
        new_func = None
        if where == "inline":
            new_func = inline.compute_inline(self._mod[func_name], hit.node.block.name_hint)
        self._commit(func_name, new_func, "compute_at", inputs=(("block", block), ("loop", loop)),
                     attrs=(("preserve_unit_loops", preserve_unit_loops), ("index", index)))
