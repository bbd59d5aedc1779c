"""MutateUnroll: draw another unroll step for ``meta_schedule.unroll_explicit``.

The step is the ``sample_categorical`` decision whose value the root block's
``meta_schedule.unroll_explicit`` (or ``_implicit``) annotation takes.
"""
from __future__ import annotations

from ...tir.schedule import Trace
from ..schedule_rule.parallel_vectorize_unroll import UNROLL_EXPLICIT, UNROLL_IMPLICIT
from .mutator import Mutator, as_random, without_postproc


class MutateUnroll(Mutator):
    """Change the decision of an unroll-step ``sample_categorical``.

    >>> MutateUnroll().apply(trace, rand_state=1)      # doctest: +SKIP
    """

    def apply(self, trace: Trace, rand_state=None) -> Trace | None:
        rng = as_random(rand_state)
        insts = without_postproc(trace)
        unroll_values = {id(inst.kwargs()["ann_val"]) for inst in insts
                         if inst.kind == "annotate"
                         and inst.kwargs()["ann_key"] in (UNROLL_EXPLICIT, UNROLL_IMPLICIT)}
        candidates = [inst for inst in insts if inst.kind == "sample_categorical"
                      and inst.outputs and id(inst.outputs[0]) in unroll_values
                      and len(inst.kwargs()["candidates"]) > 1]
        if not candidates:
            return None
        inst = rng.choice(candidates)
        probs = inst.kwargs()["probs"]
        others = [n for n in range(len(probs)) if n != inst.decision]
        weights = [probs[n] for n in others]
        choice = rng.choices(others, weights=weights)[0] if sum(weights) > 0 else \
            rng.choice(others)
        return trace.with_decision(inst, choice)
