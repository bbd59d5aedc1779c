"""ParallelizeVectorizeUnroll: say how much parallelism, vector width and unrolling
the function may use, as annotations on its root block.

The rule changes no loop: loops are split and moved by later rules, so which ones end up
outermost or innermost is only known at the end. The postprocessor
``RewriteParallelVectorizeUnroll`` reads the annotations and rewrites the final loops::

    with T.block("root"):
        T.block_attr({"meta_schedule.parallel": 32,          # max_jobs_per_core * cores
                      "meta_schedule.vectorize": 64,         # lanes
                      "meta_schedule.unroll_explicit": v1})  # drawn from unroll_max_steps

The unroll step is a ``sample_categorical`` decision, so tuning (and ``MutateUnroll``)
can change it; functions without a reduction are not unrolled.
"""
from __future__ import annotations

from ...tir.functor import post_order_visit
from ...tir.stmt import BlockRealize
from ..block_analysis import has_block, is_root_block, is_spatial_block, locate_block
from .schedule_rule import ScheduleRule

PARALLEL = "meta_schedule.parallel"
VECTORIZE = "meta_schedule.vectorize"
UNROLL_EXPLICIT = "meta_schedule.unroll_explicit"
UNROLL_IMPLICIT = "meta_schedule.unroll_implicit"


class ParallelizeVectorizeUnroll(ScheduleRule):
    """Annotate the root block with parallel / vectorize limits and a sampled unroll step.

    ``max_jobs_per_core=-1`` or ``max_vectorize_extent=-1`` turns that part off; so does
    an empty ``unroll_max_steps``.

    Examples
    --------
    >>> rule = ParallelizeVectorizeUnroll(max_jobs_per_core=16, max_vectorize_extent=64,
    ...                                   unroll_max_steps=[0, 16, 64, 512])
    >>> rule.apply(sch, sch.get_block("root"))          # doctest: +SKIP
    """

    def __init__(self, max_jobs_per_core: int = 16, max_vectorize_extent: int = 64,
                 unroll_max_steps=(0, 16, 64, 512), unroll_explicit: bool = True):
        self.max_jobs_per_core = max_jobs_per_core
        self.max_vectorize_extent = max_vectorize_extent
        self.unroll_max_steps = [int(s) for s in (unroll_max_steps or [])]
        self.unroll_explicit = unroll_explicit

    @property
    def max_parallel_extent(self) -> int:
        return self.max_jobs_per_core * self.target.num_cores

    def apply(self, sch, block) -> list:
        if not has_block(sch, block) or not is_root_block(sch, block):
            return [sch]
        if self.max_jobs_per_core != -1:
            sch.annotate(block, PARALLEL, self.max_parallel_extent)
        if self.max_vectorize_extent != -1:
            sch.annotate(block, VECTORIZE, self.max_vectorize_extent)
        if self.unroll_max_steps and not _spatial_only(sch, block):
            n = len(self.unroll_max_steps)
            step = sch.sample_categorical(self.unroll_max_steps, [1.0 / n] * n)
            sch.annotate(block, UNROLL_EXPLICIT if self.unroll_explicit else UNROLL_IMPLICIT,
                         step)
        return [sch]

    def __repr__(self) -> str:
        return (f"ParallelizeVectorizeUnroll(max_jobs_per_core={self.max_jobs_per_core}, "
                f"max_vectorize_extent={self.max_vectorize_extent}, "
                f"unroll_max_steps={self.unroll_max_steps}, "
                f"unroll_explicit={self.unroll_explicit})")


def _spatial_only(sch, root) -> bool:
    """Whether every block under the root is spatial (nothing worth unrolling)."""
    _, hit = locate_block(sch, root)
    blocks = []
    post_order_visit(hit.node.block.body, lambda n: blocks.append(n.block)
                     if isinstance(n, BlockRealize) else None)
    return all(is_spatial_block(b) for b in blocks)
