"""The GPU half of ``MultiLevelTiling``: thread binding of tile levels, shared-memory reuse.

With the GPU structure ``"SSSRRSRS"`` and ``tile_binds=["blockIdx.x", "vthread.x",
"threadIdx.x"]`` the first three spatial levels of a matmul are fused and bound, one
thread axis per level; the reduction walks ``k_0`` inside each thread, and every input
is staged in shared memory once per ``k_0`` step::

    for i0_j0 in T.thread_binding(..., thread="blockIdx.x"):     # level 1: thread blocks
      for i1_j1 in T.thread_binding(..., thread="vthread.x"):    # level 2: virtual threads
        for i2_j2 in T.thread_binding(..., thread="threadIdx.x"):  # level 3: threads
          for k_0 in range(...):                                 # level 4
            A_shared <- A[...]      # cooperative fetch (annotated, rewritten later)
            B_shared <- B[...]
            for k_1, i_3, j_3, k_2, i_4, j_4 in T.grid(...):    # levels 5..8
              C_local[...] += A_shared[...] * B_shared[...]
          C[...] = C_local[...]                                  # write cache at level 3

Each shared cache keeps its copy loops fused into one and is annotated with
``meta_schedule.cooperative_fetch`` = a sampled vector length; the postprocessor
``RewriteCooperativeFetch`` splits that loop over the block's threads once the tile
sizes, hence the thread count, are known.
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ..block_analysis import locate_block, spatial_and_reduce_lengths

COOPERATIVE_FETCH = "meta_schedule.cooperative_fetch"
THREAD_EXTENT_LOW = "meta_schedule.thread_extent_low_inclusive"
THREAD_EXTENT_HIGH = "meta_schedule.thread_extent_high_inclusive"


def bind_tiles(sch, block, tiles, tile_binds, limits) -> list:
    """Fuse the loops of tile level ``n`` and bind them to ``tile_binds[n]``; annotate
    ``block`` with the thread counts a candidate may use (at least a warp when the
    block has work for two warps, at most ``max_threads_per_block``)."""
    lengths = spatial_and_reduce_lengths(sch, block)
    spatial = lengths[0] if lengths is not None else -1
    tiles = [list(level) for level in tiles]
    for n, tag in enumerate(tile_binds[:len(tiles)]):
        if not tiles[n]:
            continue
        fused = sch.fuse(*tiles[n]) if len(tiles[n]) > 1 else tiles[n][0]
        sch.bind(fused, tag)
        tiles[n] = [fused]
    low = limits.thread_warp_size if spatial > 2 * limits.thread_warp_size else 1
    sch.annotate(block, THREAD_EXTENT_LOW, low)
    sch.annotate(block, THREAD_EXTENT_HIGH, limits.max_threads_per_block)
    return tiles


def add_read_reuse(spaces, block, tiles, config, vector_load_lens,
                   max_vector_bytes: int = 16) -> list:
    """Each space with its read buffers cached in ``config.scope`` at each level of
    ``config.levels`` (one space per level; with ``req="may"`` also the space as it was).
    A level where a cache cannot be placed gives no space."""
    out = []
    for sch in spaces:
        if config.req == "may":
            out.append(sch)
        for level in config.levels:
            if not 1 <= level <= len(tiles) or not tiles[level - 1]:
                continue
            branch = sch.copy()
            branch.seed(sch.fork_seed())
            try:
                cache_reads_at(branch, block, tiles[level - 1][-1], config.scope,
                               vector_load_lens, max_vector_bytes)
            except ScheduleError:
                continue
            out.append(branch)
    return out or spaces


def cache_reads_at(sch, block, loop, scope: str, vector_load_lens,
                   max_vector_bytes: int = 16) -> list:
    """``cache_read`` every buffer ``block`` reads but does not write into ``scope``,
    computed at ``loop``, its copy loops fused, annotated with a vector length drawn
    from ``vector_load_lens`` (those within ``max_vector_bytes``); returns the cache
    blocks."""
    _, hit = locate_block(sch, block)
    written = [region.buffer for region in hit.node.block.writes]
    reads = [region.buffer for region in hit.node.block.reads]
    caches = []
    for index, buffer in enumerate(reads):
        if any(buffer is w for w in written):
            continue
        cache = sch.cache_read(block, index, scope)
        sch.compute_at(cache, loop, preserve_unit_loops=True)
        copy_loops = sch.get_loops(cache)[-len(buffer.shape):]
        if len(copy_loops) > 1:
            sch.fuse(*copy_loops)
        # lengths past the widest vector access (16 bytes: 4 floats) never verify
        lens = [int(v) for v in vector_load_lens or ()
                if int(v) * buffer.dtype.bits <= max_vector_bytes * 8]
        if lens:
            length = sch.sample_categorical(lens, [1.0 / len(lens)] * len(lens))
            sch.annotate(cache, COOPERATIVE_FETCH, length)
        caches.append(cache)
    return caches
