"""tir.InjectVirtualThread: vthread loops interleaved, local buffers one copy per
virtual thread; course-style matmuls with vthread-bound loops on the simulated GPU."""
import numpy as np
import pytest
from helpers.gpu_course_schedules import matmul

import mlcbench as tvm
from mlcbench.codegen.cuda import cuda_source
from mlcbench.ir import CodegenError, IRModule, assert_structural_equal
from mlcbench.ir.transform import Sequential
from mlcbench.script import tir as T
from mlcbench.tir import For, ForKind, Schedule
from mlcbench.tir.functor import post_order_visit
from mlcbench.tir.transform import lower_gpu
from mlcbench.tir.transform.inject_virtual_thread import InjectVirtualThread
from mlcbench.tir.transform.simplify import Simplify


@T.prim_func
def _before(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        for vx in T.thread_binding(2, thread="vthread.x"):
            A_shared = T.allocate([32], "float32", "shared")
            A_shared_1 = T.Buffer((32,), data=A_shared, scope="shared")
            acc = T.allocate([2], "float32", "local")
            acc_1 = T.Buffer((2,), data=acc, scope="local")
            for i in range(2):
                acc_1[i] = T.float32(0)
            for k in range(2):
                A_shared_1[k * 16 + tx] = A[k * 16 + tx]
                T.tvm_storage_sync("shared")
                for i in range(2):
                    acc_1[i] = acc_1[i] + A_shared_1[vx * 16 + tx]
            for i in range(2):
                B[vx * 32 + tx * 2 + i] = acc_1[i]


@T.prim_func
def _after(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        A_shared = T.allocate([32], "float32", "shared")
        A_shared_1 = T.Buffer((32,), data=A_shared, scope="shared")
        acc = T.allocate([4], "float32", "local")
        acc_1 = T.Buffer((4,), data=acc, scope="local")
        for i in range(2):
            acc_1[i] = T.float32(0)
            acc_1[i + 2] = T.float32(0)
        for k in range(2):
            A_shared_1[k * 16 + tx] = A[k * 16 + tx]
            T.tvm_storage_sync("shared")
            for i in range(2):
                acc_1[i] = acc_1[i] + A_shared_1[tx]
                acc_1[i + 2] = acc_1[i + 2] + A_shared_1[16 + tx]
        for i in range(2):
            B[tx * 2 + i] = acc_1[i]
            B[32 + tx * 2 + i] = acc_1[i + 2]


def _inject(func):
    mod = IRModule({"main": func})
    lowered = Sequential([InjectVirtualThread(), Simplify()])(mod)
    return lowered["main"]


def test_fetch_and_barrier_run_once_and_the_local_buffer_doubles():
    assert_structural_equal(_inject(_before), _inject(_after))


@T.prim_func
def _accumulate_outside(A: T.Buffer((8,), "float32")):
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        for vx in T.thread_binding(3, thread="vthread"):
            A[tx] = A[tx] + T.float32(1)


@T.prim_func
def _loop_depends(A: T.Buffer((8,), "float32")):
    for tx in T.thread_binding(2, thread="threadIdx.x"):
        for vx in T.thread_binding(2, thread="vthread"):
            for i in range(vx + 1):
                A[tx * 4 + vx * 2 + i] = T.float32(1)


def test_an_accumulation_into_an_outer_buffer_runs_per_virtual_thread():
    body = _inject(_accumulate_outside).body.body
    assert [s.script().strip() for s in body.seq] == ["A[tx] = A[tx] + T.float32(1)"] * 3


def test_a_loop_depending_on_the_virtual_thread_becomes_a_serial_loop_around_it():
    loop = _inject(_loop_depends).body.body
    assert isinstance(loop, For) and loop.kind == ForKind.SERIAL
    assert loop.loop_var.name == "vx" and loop.extent.value == 2 and loop.thread_binding is None


@T.prim_func
def _symbolic(A: T.Buffer((8,), "float32"), n: T.int32):
    for tx in T.thread_binding(8, thread="threadIdx.x"):
        for vx in T.thread_binding(n, thread="vthread"):
            A[tx] = T.float32(1)


def test_a_symbolic_extent_is_refused_naming_the_loop():
    with pytest.raises(CodegenError, match="loop 'vx' bound to vthread has extent n"):
        _inject(_symbolic)


def matmul_vthread(n=64, vt=(2, 2), threads=4, local=2, tile_k=4):
    """Shared-memory blocking with a ``vt`` grid of virtual threads between the blocks and
    the threads (TVM's vthread tiling: each thread computes ``vt`` tiles a tile apart)."""
    sch = Schedule(matmul(n))
    block_C = sch.get_block("C")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block_C)
    i0, iv, i1, i2 = sch.split(i, [None, vt[0], threads, local])
    j0, jv, j1, j2 = sch.split(j, [None, vt[1], threads, local])
    k0, k1 = sch.split(k, [None, tile_k])
    sch.reorder(i0, j0, iv, jv, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(iv, "vthread.y")
    sch.bind(jv, "vthread.x")
    sch.bind(sch.fuse(i1, j1), "threadIdx.x")
    for index in (0, 1):
        cache = sch.cache_read(block_C, index, "shared")
        sch.compute_at(cache, k0)
        _, tx = sch.split(sch.fuse(*sch.get_loops(cache)[-2:]), [None, threads * threads])
        sch.bind(tx, "threadIdx.x")
    sch.decompose_reduction(block_C, k0)
    return sch.mod


def _loops(stmt):
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, For) else None)
    return found


@pytest.mark.parametrize("vt", [(2, 2), (3, 1)])
def test_matmul_with_virtual_threads_on_the_simulated_gpu(vt):
    n = 48 if 3 in vt else 64
    mod = matmul_vthread(n, vt)
    kernel = lower_gpu(mod, "cuda")["main_kernel0"]
    assert not [lp for lp in _loops(kernel.body) if lp.kind == ForKind.SERIAL
                and lp.loop_var.name in ("i_1", "j_1")]
    rt_mod = tvm.build(mod, target="cuda")
    dev = tvm.cuda(0)
    a_np, b_np = (np.random.uniform(size=(n, n)).astype("float32") for _ in range(2))
    a, b = tvm.nd.array(a_np, dev), tvm.nd.array(b_np, dev)
    c = tvm.nd.empty((n, n), "float32", dev)
    rt_mod["main"](a, b, c)
    np.testing.assert_allclose(c.numpy(), a_np @ b_np, rtol=1e-5)


def test_cuda_source_has_one_local_array_for_all_virtual_threads_and_two_barriers():
    text = cuda_source(lower_gpu(matmul_vthread(), "cuda"))
    assert "float C_local[16];" in text
    assert text.count("__syncthreads();") == 2
    # Neighbouring virtual threads' updates are adjacent statements of the innermost loop.
    assert ("C_local[(((i_3 * 2) + j_3) + 12)] = (C_local[(((i_3 * 2) + j_3) + 12)] + "
            "(A_shared[(((((((int)threadIdx.x) >> 2) * 8) + (i_3 * 4)) + k_1) + 32)] * "
            "B_shared[((((k_1 * 16) + ((((int)threadIdx.x) & 3) * 2)) + j_3) + 8)]));") in text
    assert "vthread" not in text
