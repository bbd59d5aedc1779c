"""AutoBind: give a block that no other rule bound its GPU threads.

On a GPU every statement runs inside a thread: an elementwise block the tiling rule
left alone (``C[i] = A[i] + B[i]``) gets its leading spatial loops fused, split by a
sampled thread count and bound, as in the course's vector add::

    for i_0 in T.thread_binding(8, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):     # sampled: 32 .. 1024
            C[i_0 * 128 + i_1] = A[...] + B[...]

With more than ``max_threadblocks`` blocks of threads the rest becomes a serial loop
inside each thread (a grid-stride loop), TVM's rule. ``RewriteUnboundBlock`` applies
the same binding after sampling, with a fixed thread count, to blocks still unbound.
"""
from __future__ import annotations

from ..block_analysis import has_block, is_root_block
from ..gpu_target import gpu_limits
from ..thread_binding import bind_block_threads
from .schedule_rule import ScheduleRule

DEFAULT_THREAD_EXTENTS = (32, 64, 128, 256, 512, 1024)


class AutoBind(ScheduleRule):
    """Bind the leading spatial loops of unbound blocks to blockIdx.x / threadIdx.x.

    Examples
    --------
    >>> AutoBind(max_threadblocks=256).apply(sch, sch.get_block("C"))   # doctest: +SKIP
    """

    def __init__(self, max_threadblocks: int = 256, thread_extents=DEFAULT_THREAD_EXTENTS):
        self.max_threadblocks = int(max_threadblocks)
        self.thread_extents = [int(t) for t in thread_extents]

    def apply(self, sch, block) -> list:
        if not has_block(sch, block) or is_root_block(sch, block):
            return [sch]
        limit = gpu_limits(self.target).max_threads_per_block
        choices = [t for t in self.thread_extents if t <= limit] or [limit]

        def sample(max_extent):
            fitting = [t for t in choices if t <= max_extent] or [min(choices)]
            return sch.sample_categorical(fitting, [1.0 / len(fitting)] * len(fitting))
        bind_block_threads(sch, block, self.max_threadblocks, sample)
        return [sch]

    def __repr__(self) -> str:
        return (f"AutoBind(max_threadblocks={self.max_threadblocks}, "
                f"thread_extents={self.thread_extents})")
