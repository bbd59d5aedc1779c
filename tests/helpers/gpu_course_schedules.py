"""Course chapter 7's GPU schedules (vector add, window sum with shared memory, matmul
with local blocking and with shared blocking plus a vectorized cooperative fetch), as
the course writes them, on programs of a chosen size: 1024 as in the course for the
printed text, smaller where the printed kernel is run.
"""
from mlcbench import te, tir
from mlcbench.ir import IRModule
from mlcbench.target import Target
from mlcbench.tir.transform import lower_gpu


def _module(*tensors) -> IRModule:
    func = te.create_prim_func(list(tensors)).with_attr("global_symbol", "main")
    return IRModule({"main": func.with_attr("tir.noalias", True)})


def vector_add(n: int = 1024, nthread: int = 128) -> IRModule:
    A, B = te.placeholder((n,), name="A"), te.placeholder((n,), name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    sch = tir.Schedule(_module(A, B, C))
    i0, i1 = sch.split(sch.get_loops(sch.get_block("C"))[0], [None, nthread])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    return sch.mod


def window_sum(n: int = 1024, nthread: int = 128) -> IRModule:
    A = te.placeholder((n + 3,), name="A")
    B = te.compute((n,), lambda i: A[i] + A[i + 1] + A[i + 2], name="C")
    sch = tir.Schedule(_module(A, B))
    block_C = sch.get_block("C")
    i0, i1 = sch.split(sch.get_loops(block_C)[0], [None, nthread])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    A_shared = sch.cache_read(block_C, read_buffer_index=0, storage_scope="shared")
    sch.compute_at(A_shared, i1)
    ax0, ax1 = sch.split(sch.get_loops(A_shared)[-1], [None, nthread])
    sch.bind(ax1, "threadIdx.x")
    return sch.mod


def matmul(n: int) -> IRModule:
    A, B = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return _module(A, B, C)


def blocking(sch, tile_local_y, tile_local_x, tile_block_y, tile_block_x, tile_k):
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
    read_cache = sch.cache_read(block=block, read_buffer_index=read_idx, storage_scope="shared")
    sch.compute_at(block=read_cache, loop=read_loc)
    inner0, inner1 = sch.get_loops(block=read_cache)[-2:]
    inner = sch.fuse(inner0, inner1)
    _, tx, vec = sch.split(loop=inner, factors=[None, nthread, 4])
    sch.vectorize(vec)
    sch.bind(tx, "threadIdx.x")


def blocking_with_shared(sch, tile_local_y, tile_local_x, tile_block_y, tile_block_x, tile_k):
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


def matmul_local(n: int = 1024) -> IRModule:
    return blocking(tir.Schedule(matmul(n)), 8, 8, 8, 8, 4).mod


def matmul_shared(n: int = 1024) -> IRModule:
    return blocking_with_shared(tir.Schedule(matmul(n)), 8, 8, 8, 8, 8).mod


def lowered(mod: IRModule, target: str = "cuda") -> IRModule:
    return lower_gpu(mod, Target(target))
