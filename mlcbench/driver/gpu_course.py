"""Course chapter 7's GPU schedules, written once for the benchmarks and the tests.

Each function is the course's own schedule (mlc.ai chapter 7), applied to a
``tir.Schedule`` whose block ``"C"`` is a matmul ``C[i, j] += A[i, k] * B[k, j]``:

* :func:`blocking` -- local blocking: every thread accumulates a
  ``tile_local_y x tile_local_x`` tile of C in registers ("local");
* :func:`blocking_with_shared` -- the same, threads fused into one threadIdx.x, with the
  A and B tiles of each k step fetched into "shared" memory by all threads of the block
  together (:func:`cache_read_and_coop_fetch`, vectorized by 4).

The notebook shows the same code inline, as the course does.
"""
from __future__ import annotations


def blocking(sch, tile_local_y, tile_local_x, tile_block_y, tile_block_x, tile_k):
    """Course chapter 7's local blocking of block "C"; returns ``sch``."""
    block_C = sch.get_block("C")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block=block_C)
    i0, i1, i2 = sch.split(loop=i, factors=[None, tile_block_y, tile_local_y])
    j0, j1, j2 = sch.split(loop=j, factors=[None, tile_block_x, tile_local_x])
    k0, k1 = sch.split(loop=k, factors=[None, tile_k])
    sch.unroll(k1)
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    sch.decompose_reduction(block_C, k0)
    return sch


def cache_read_and_coop_fetch(sch, block, nthread, read_idx, read_loc):
    """Read input ``read_idx`` of ``block`` through "shared" memory at ``read_loc``, the
    copy spread over ``nthread`` threads and vectorized by 4."""
    read_cache = sch.cache_read(block=block, read_buffer_index=read_idx,
                                storage_scope="shared")
    sch.compute_at(block=read_cache, loop=read_loc)
    inner0, inner1 = sch.get_loops(block=read_cache)[-2:]
    inner = sch.fuse(inner0, inner1)
    _, tx, vec = sch.split(loop=inner, factors=[None, nthread, 4])
    sch.vectorize(vec)
    sch.bind(tx, "threadIdx.x")


def blocking_with_shared(sch, tile_local_y, tile_local_x, tile_block_y, tile_block_x, tile_k):
    """Course chapter 7's shared-memory blocking of block "C"; returns ``sch``."""
    block_C = sch.get_block("C")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block=block_C)
    i0, i1, i2 = sch.split(loop=i, factors=[None, tile_block_y, tile_local_y])
    j0, j1, j2 = sch.split(loop=j, factors=[None, tile_block_x, tile_local_x])
    k0, k1 = sch.split(loop=k, factors=[None, tile_k])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    tx = sch.fuse(i1, j1)
    sch.bind(tx, "threadIdx.x")
    nthread = tile_block_y * tile_block_x
    cache_read_and_coop_fetch(sch, block_C, nthread, 0, k0)
    cache_read_and_coop_fetch(sch, block_C, nthread, 1, k0)
    sch.decompose_reduction(block_C, k0)
    return sch
