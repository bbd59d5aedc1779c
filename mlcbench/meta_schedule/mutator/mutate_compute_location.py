"""MutateComputeLocation: move a block to another legal compute location.

The candidate loops depend on the IR at the moment of sampling, so the mutator replays
the trace up to the ``sample_compute_location`` it changes, takes the candidates then
(the loops around the block's consumers, root and inline) in random order, and keeps
the first whose whole trace replays (an illegal location fails the replay).
"""
from __future__ import annotations

from ...ir.errors import MLCBenchError
from ...tir.schedule import Trace
from ...tir.schedule.facade_location import INLINE, ROOT, location_loops
from ..block_analysis import locate_block
from .mutator import Mutator, as_random, without_postproc


class MutateComputeLocation(Mutator):
    """Change one ``sample_compute_location`` decision to another legal location.

    >>> MutateComputeLocation(mod=module).apply(trace, rand_state=1)   # doctest: +SKIP
    """

    def __init__(self, mod=None):
        self.mod = mod

    def apply(self, trace: Trace, rand_state=None) -> Trace | None:
        self._module()      # checked here: the replays below read a failure as "illegal"
        rng = as_random(rand_state)
        insts = without_postproc(trace)
        candidates = [n for n, inst in enumerate(insts)
                      if inst.kind == "sample_compute_location"]
        rng.shuffle(candidates)
        for position in candidates:
            inst = insts[position]
            others = [c for c in self._choices(insts, position) if c != inst.decision]
            rng.shuffle(others)
            for decision in others:
                new = trace.with_decision(inst, decision)
                if self._replays(new):
                    return new
        return None

    def _choices(self, insts, position) -> list:
        """The candidate decisions of the ``position``-th instruction, given the ones before."""
        try:
            sch = self._replay(insts[:position + 1])
        except MLCBenchError:
            return []
        sampled = sch.trace.insts[-1]
        func_name, hit = locate_block(sch, sampled.kwargs()["block"])
        loops = location_loops(sch.mod[func_name], hit.node.block.name_hint)
        return list(range(len(loops))) + [ROOT, INLINE]
