"""RewriteUnboundBlock: bind the threads of every block still outside a GPU kernel.

A GPU program has no code outside its kernels: a block that reached the end of the
search without thread-bound loops (a design space written by hand, a block ``AutoBind``
did not see) gets its leading spatial loops fused and bound to ``blockIdx.x`` /
``threadIdx.x`` with a fixed thread count: ``max_threads_per_block``, or fewer when
the loops have fewer iterations (see ``AutoBind``).
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.function import PrimFunc
from ...tir.schedule.ir_utils import child_block_realizes
from ...tir.stmt import BlockRealize
from ..gpu_target import gpu_limits
from ..thread_binding import bind_block_threads
from .postproc import Postproc


class RewriteUnboundBlock(Postproc):
    """Bind every top-level block that has no thread binding yet.

    >>> RewriteUnboundBlock(max_threadblocks=256).apply(sch)     # doctest: +SKIP
    True
    """

    def __init__(self, max_threadblocks: int = 256):
        self.max_threadblocks = int(max_threadblocks)

    def apply(self, sch) -> bool:
        limit = gpu_limits(self.target).max_threads_per_block
        try:
            for func_name, name in _top_level_blocks(sch):
                block = sch.get_block(name, func_name=func_name)
                bind_block_threads(sch, block, self.max_threadblocks,
                                   lambda extent: max(1, min(extent, limit)))
        except ScheduleError:
            return False
        return True

    def __repr__(self) -> str:
        return f"RewriteUnboundBlock(max_threadblocks={self.max_threadblocks})"


def _top_level_blocks(sch) -> list:
    """``(function, block name)`` of the blocks directly under each root block."""
    out = []
    for gv, func in sch.mod.functions.items():
        if isinstance(func, PrimFunc) and isinstance(func.body, BlockRealize):
            out.extend((gv.name_hint, realize.block.name_hint)
                       for realize in child_block_realizes(func.body.block.body))
    return out
