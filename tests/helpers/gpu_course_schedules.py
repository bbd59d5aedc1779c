"""Course chapter 7's GPU schedules (vector add, window sum with shared memory, matmul
with local blocking and with shared blocking plus a vectorized cooperative fetch), as
the course writes them, on programs of a chosen size: 1024 as in the course for the
printed text, smaller where the printed kernel is run.
"""
from mlcbench import te, tir
from mlcbench.driver.gpu_course import blocking, blocking_with_shared  # noqa: F401
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


def matmul_local(n: int = 1024) -> IRModule:
    return blocking(tir.Schedule(matmul(n)), 8, 8, 8, 8, 4).mod


def matmul_shared(n: int = 1024) -> IRModule:
    return blocking_with_shared(tir.Schedule(matmul(n)), 8, 8, 8, 8, 8).mod


def lowered(mod: IRModule, target: str = "cuda") -> IRModule:
    return lower_gpu(mod, Target(target))
