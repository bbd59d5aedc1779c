"""RewriteCooperativeFetch: spread the copy into shared memory over a block's threads.

``MultiLevelTiling`` (GPU) leaves each shared-memory cache as one fused copy loop with
``meta_schedule.cooperative_fetch = v`` (a sampled vector length). Once the tile sizes
are drawn the thread count ``t`` of the enclosing ``threadIdx.x`` loop is known, and the
copy loop is split so that every thread copies ``v`` consecutive elements per step, as
the course's ``cache_read_and_coop_fetch`` does by hand (``v`` is lowered to the widest
length that splits the copy evenly, so that no thread or vector is partial)::

    for ax0_ax1_fused_0 in range(2):
        for ax0_ax1_fused_1 in T.thread_binding(64, thread="threadIdx.x"):   # t
            for ax0_ax1_fused_2 in T.vectorized(4):                           # v
                A_shared[...] = A[...]
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.function import PrimFunc
from ...tir.functor import post_order_visit
from ...tir.stmt import BlockRealize, For
from ..block_analysis import locate_block
from ..gpu_target import thread_extents
from ..schedule_rule.gpu_tiling import COOPERATIVE_FETCH
from .postproc import Postproc


class RewriteCooperativeFetch(Postproc):
    """Split, bind and vectorize every cache block annotated for cooperative fetching;
    False when a cache has no ``threadIdx`` loop above it to share the work with.

    >>> RewriteCooperativeFetch().apply(sch)       # doctest: +SKIP
    True
    """

    def apply(self, sch) -> bool:
        try:
            for func_name, name in _annotated_blocks(sch):
                _rewrite(sch, sch.get_block(name, func_name=func_name))
        except ScheduleError:
            return False
        return True


def _annotated_blocks(sch) -> list:
    out = []
    for gv, func in sch.mod.functions.items():
        if not isinstance(func, PrimFunc):
            continue
        post_order_visit(func.body, lambda n: out.append((gv.name_hint, n.block.name_hint))
                         if isinstance(n, BlockRealize)
                         and COOPERATIVE_FETCH in n.block.annotations else None)
    return out


def _rewrite(sch, block) -> None:
    vector_len = int(sch.get(block).annotations[COOPERATIVE_FETCH])
    sch.unannotate(block, COOPERATIVE_FETCH)
    _, hit = locate_block(sch, block)
    extents = thread_extents(p for p in hit.parents if isinstance(p, For))
    threads_x = extents.get("threadIdx.x")
    if not threads_x:
        raise ScheduleError(f"cooperative fetch of {sch.get(block).name_hint!r}: no "
                            "threadIdx.x loop with a constant extent above it")
    fused = sch.get_loops(block)[-1]
    extent = sch.get(fused).extent
    # a copy that does not split evenly is guarded (T.where), and lowering cannot bound
    # the footprint of a guarded copy (it keeps the whole buffer): the widest length up
    # to the drawn one that splits the copy evenly over the threads, else that divides it
    total = extent.value if hasattr(extent, "value") else 1
    even = [d for d in range(1, vector_len + 1) if total % (d * threads_x) == 0]
    vector_len = max(even or [d for d in range(1, vector_len + 1) if total % d == 0])
    if vector_len > 1:
        _, thread_loop, vector_loop = sch.split(fused, [None, threads_x, vector_len])
        sch.vectorize(vector_loop)
    else:
        _, thread_loop = sch.split(fused, [None, threads_x])
    sch.bind(thread_loop, "threadIdx.x")
