"""Binding a block's loops to GPU threads: shared by ``AutoBind`` and ``RewriteUnboundBlock``.

The leading spatial loops of an unbound block are fused, split by a thread count and
bound (``blockIdx.x`` outside, ``threadIdx.x`` inside); past ``max_threadblocks`` blocks
the rest of the iterations run as a serial loop inside each thread::

    for i_1 in T.thread_binding(256, thread="blockIdx.x"):
        for i_2 in T.thread_binding(1024, thread="threadIdx.x"):
            for i_0 in range(4):          # grid-stride: 4 * 256 * 1024 elements
                ...
"""
from __future__ import annotations

from ..tir.stmt import For, ForKind, SeqStmt
from .block_analysis import (SPATIAL, TILING_STRUCTURE_ANNOTATION, const_extent,
                             locate_block, loop_iter_types)
from .gpu_target import thread_tag

__all__ = ["bind_block_threads"]


def bind_block_threads(sch, block, max_threadblocks: int, thread_count) -> bool:
    """Bind ``block``'s leading spatial loops unless it is tiled or already bound;
    ``thread_count(max_extent)`` gives the threads per block (an int or a sampled
    ExprRV). Returns whether it bound anything."""
    _, hit = locate_block(sch, block)
    if TILING_STRUCTURE_ANNOTATION in hit.node.block.annotations:
        return False
    loops = hit.loops()
    if any(thread_tag(loop) is not None for loop in _all_loops_above(hit)):
        return False
    n_spatial = _leading_spatial_loops(sch, block, loops)
    loop_rvs = sch.get_loops(block)
    if n_spatial == 0:
        loop_rvs = [sch.add_unit_loop(loop_rvs[0] if loop_rvs else block)] + loop_rvs
        n_spatial = 1
    fused = sch.fuse(*loop_rvs[:n_spatial]) if n_spatial > 1 else loop_rvs[0]
    extent = const_extent(sch.get(fused))
    if extent is None:
        return False
    threads = thread_count(extent)
    if extent <= max_threadblocks * _value(sch, threads):
        block_loop, thread_loop = sch.split(fused, [None, threads])
    else:
        serial, block_loop, thread_loop = sch.split(fused, [None, max_threadblocks, threads])
        sch.reorder(block_loop, thread_loop, serial)
    sch.bind(block_loop, "blockIdx.x")
    sch.bind(thread_loop, "threadIdx.x")
    return True


def _value(sch, threads) -> int:
    return threads if isinstance(threads, int) else int(sch.get(threads))


def _all_loops_above(hit) -> list:
    return [p for p in hit.parents if isinstance(p, For)]


def _leading_spatial_loops(sch, block, loops) -> int:
    """How many outer loops are serial, spatial, constant and hold only the next one
    (TVM's rule: stop before a loop with several statements in its body)."""
    kinds = loop_iter_types(sch, block)
    count = 0
    for loop, kind in zip(loops, kinds):
        if kind != SPATIAL or loop.kind != ForKind.SERIAL or const_extent(loop) is None:
            break
        count += 1
        if isinstance(loop.body, SeqStmt):
            break
    return count
