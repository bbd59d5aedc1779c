"""sample_compute_location: draw where a block is computed, recorded with its decision.

The candidate loops are those around the block's first consumer, from the outermost
down to the innermost loop that still encloses every consumer (as TVM collects them);
``-1`` leaves the block where it is ("compute root") and ``-2`` inlines it. The
decision is an index into the candidate loops, or -1 / -2::

    loc = sch.sample_compute_location(block)      # decision recorded in the trace
    sch.compute_at(block, loc)                    # root: no change; inline: inlined

Legality is checked for the location drawn or given only: a draw takes the candidates in
random order and keeps the first where ``compute_at`` (or ``compute_inline``) is legal,
which is a uniform draw among the legal ones, and a replayed decision costs one check.
"""
from __future__ import annotations

from itertools import takewhile

from ...ir.errors import ScheduleError
from ..stmt import BlockRealize
from .ir_utils import find_all, find_block
from .primitives import compute_location, inline
from .trace import LoopRV

ROOT, INLINE = -1, -2


def location_loops(func, block_name: str) -> list:
    """Loop vars of the candidate locations of ``block_name`` (legal or not), outer first."""
    hit = find_block(func, block_name, "sample_compute_location")
    scope = hit.scope_block()
    written = {id(r.buffer) for r in hit.node.block.writes}
    consumers = find_all(func, lambda n: isinstance(n, BlockRealize) and n is not hit.node
                         and any(id(r.buffer) in written for r in n.block.reads))
    consumers = [c for c in consumers if c.scope_block() is scope]
    if not consumers:
        return []
    common = consumers[0].loops()
    for other in consumers[1:]:
        common = [a for a, _ in takewhile(lambda pair: pair[0] is pair[1],
                                          zip(common, other.loops()))]
    own = {id(p) for p in hit.parents}
    return [loop.loop_var for loop in common if id(loop) not in own]


def _legal(func, block_name: str, decision: int, loops: list) -> bool:
    if decision == ROOT:
        return True
    try:
        if decision == INLINE:
            inline.compute_inline(func, block_name)
        else:
            compute_location.compute_at(func, block_name, loops[decision], False)
    except ScheduleError:
        return False
    return True


def location_candidates(func, block_name: str) -> tuple[list, bool]:
    """``(loop vars where compute_at is legal, whether compute_inline is legal)``."""
    loops = location_loops(func, block_name)
    legal = [v for n, v in enumerate(loops) if _legal(func, block_name, n, loops)]
    return legal, _legal(func, block_name, INLINE, loops)


class LocationSamplingMixin:
    def sample_compute_location(self, block, decision=None) -> LoopRV:
        """A LoopRV for ``compute_at``: a legal loop, the root (-1) or inline (-2)."""
        block = self._as_block_rv(block)
        func_name, hit = self.state.block(block, "sample_compute_location")
        func, name = self.state.func(func_name), hit.node.block.name_hint
        loops = location_loops(func, name)
        choices = list(range(len(loops))) + [ROOT, INLINE]
        if decision is None:
            order = choices[:]
            self.state.shuffle(order)
            decision = next(d for d in order if _legal(func, name, d, loops))
        elif decision not in choices or not _legal(func, name, decision, loops):
            legal = [d for d in choices if _legal(func, name, d, loops)]
            raise ScheduleError(
                f"sample_compute_location: decision {decision!r} is not a location of block "
                f"{name!r}; the choices are {legal} (indices into the loops "
                f"{[v.name for v in loops]} around its consumers where compute_at is legal, "
                f"-1 for root, -2 for inline)")
        if decision >= 0:
            out = self.state.new_loop_rv(func_name, loops[decision])
        else:
            out = self.state.new_location_rv(func_name,
                                              "root" if decision == ROOT else "inline")
        self.state.commit(func_name, None, "sample_compute_location", inputs=(("block", block),),
                          outputs=(out,), decision=int(decision))
        return out
