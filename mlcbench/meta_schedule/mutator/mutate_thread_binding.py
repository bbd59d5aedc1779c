"""MutateThreadBinding: draw another thread count for a block ``AutoBind`` bound.

``AutoBind`` splits a block's fused loop by a ``sample_categorical`` thread count and
binds the inner part to ``threadIdx.x``; this mutator changes that decision (TVM's
rule), so the search also tries other block sizes for elementwise kernels::

    v = sch.sample_categorical([32, 64, 128, 256, 512, 1024], [1/6] * 6)   # 128 -> 256
    i_0, i_1 = sch.split(i, [None, v])
    sch.bind(i_1, "threadIdx.x")
"""
from __future__ import annotations

from ...tir.schedule import Trace
from .mutator import Mutator, as_random, without_postproc


class MutateThreadBinding(Mutator):
    """Change the decision of a thread-count ``sample_categorical``.

    >>> MutateThreadBinding().apply(trace, rand_state=1)      # doctest: +SKIP
    """

    def apply(self, trace: Trace, rand_state=None) -> Trace | None:
        rng = as_random(rand_state)
        insts = without_postproc(trace)
        candidates = [inst for inst in insts if inst.kind == "sample_categorical"
                      and len(inst.kwargs()["candidates"]) > 1
                      and _splits_bound_loop(insts, inst.outputs[0])]
        if not candidates:
            return None
        inst = rng.choice(candidates)
        others = [n for n in range(len(inst.kwargs()["candidates"])) if n != inst.decision]
        return trace.with_decision(inst, rng.choice(others))


def _splits_bound_loop(insts, value) -> bool:
    """Whether ``value`` is a factor of a split whose last loop is bound to threadIdx."""
    bound = {id(inst.kwargs()["loop"]) for inst in insts if inst.kind == "bind"
             and str(inst.kwargs()["thread_axis"]).startswith("threadIdx")}
    for inst in insts:
        if inst.kind == "split" and any(f is value for f in inst.kwargs()["factors"]):
            if inst.outputs and id(inst.outputs[-1]) in bound:
                return True
    return False
