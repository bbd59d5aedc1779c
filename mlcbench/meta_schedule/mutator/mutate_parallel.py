"""MutateParallel: change how many outer loops ``RewriteParallelVectorizeUnroll`` fuses
into the parallel loop.

The limit is the value of the root block's ``meta_schedule.parallel`` annotation. The
mutator replays the trace (without postprocessing), lists for each block the extent
products of its parallelizable leading loops, and picks a limit among those products
that gives a different plan (number of fused loops per block) than the current one.
"""
from __future__ import annotations

from ...ir.errors import MLCBenchError
from ...tir.schedule import Trace
from ...tir.stmt import BlockRealize
from ..postproc.rewrite_parallel_vectorize_unroll import parallel_extents, parallel_loop_count
from ..schedule_rule.parallel_vectorize_unroll import PARALLEL
from .mutator import Mutator, as_random, replace_inst, without_postproc


class MutateParallel(Mutator):
    """Change the parallel limit so that a different set of loops runs in parallel.

    >>> MutateParallel(max_jobs_per_core=16, mod=module).apply(trace, 1)  # doctest: +SKIP
    """

    def __init__(self, max_jobs_per_core: int = 16, mod=None):
        self.max_jobs_per_core = max_jobs_per_core
        self.mod = mod

    def apply(self, trace: Trace, rand_state=None) -> Trace | None:
        rng = as_random(rand_state)
        insts = without_postproc(trace)
        annotations = [inst for inst in insts if inst.kind == "annotate"
                       and inst.kwargs()["ann_key"] == PARALLEL]
        if not annotations:
            return None
        inst = rng.choice(annotations)
        self._module()      # checked here: a failed replay below means "leave it"
        try:
            extents = self._extents(insts)
        except MLCBenchError:
            return None
        max_limit = self.max_jobs_per_core * self.target.num_cores
        current = _plan(extents, int(inst.kwargs()["ann_val"]))
        plans = {}
        for limit in sorted({p for products in extents for p in products if p <= max_limit}):
            plans.setdefault(_plan(extents, limit), limit)
        plans.pop(current, None)
        if not plans:
            return None
        limit = plans[rng.choice(sorted(plans))]
        attrs = tuple((k, limit if k == "ann_val" else v) for k, v in inst.attrs)
        return replace_inst(trace, inst, attrs=attrs)

    def _extents(self, insts) -> list:
        sch = self._replay(insts)
        out = []
        for gv, func in sch.mod.functions.items():
            if not isinstance(getattr(func, "body", None), BlockRealize):
                continue
            root = sch.get_block(func.body.block.name_hint, func_name=gv.name_hint)
            out.extend(parallel_extents(sch, block) for block in sch.get_child_blocks(root))
        return out

    def __repr__(self) -> str:
        return f"MutateParallel(max_jobs_per_core={self.max_jobs_per_core})"


def _plan(extents, limit: int) -> tuple:
    return tuple(parallel_loop_count(products, limit) for products in extents)
