"""How kernels run on the CPU: launch shapes, values kept across barriers, barriers under
uniform control flow, and kernels that cannot run (with their errors)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlcbench
from mlcbench.codegen.gpu import GPUSimulationError, build_gpu
from mlcbench.ir.errors import CodegenError
from mlcbench.ir.module import IRModule
from mlcbench.script import from_source
from mlcbench.script import tir as T

HEADER = '''
from mlcbench.script import tir as T

@T.prim_func
def main_kernel0(A: T.Buffer(({a},), "float32"), B: T.Buffer(({b},), "float32")):
    T.func_attr({{"global_symbol": "main_kernel0", "calling_conv": "device_kernel"}})
'''

# Every thread writes its global linear id: checks how block and thread indices map.
LAUNCH_IDS = '''
    for bx in T.thread_binding({bx}, thread="blockIdx.x"):
        for by in T.thread_binding({by}, thread="blockIdx.y"):
            for bz in T.thread_binding({bz}, thread="blockIdx.z"):
                for tx in T.thread_binding({tx}, thread="threadIdx.x"):
                    for ty in T.thread_binding({ty}, thread="threadIdx.y"):
                        for tz in T.thread_binding({tz}, thread="threadIdx.z"):
                            B[(((bz * {by} + by) * {bx} + bx) * {tz} + tz) * {ty} * {tx} + ty * {tx} + tx] = T.float32(1) + A[0]
'''

# A value computed before the barrier (a let and a local) used after it; the reversal
# through shared memory needs the barrier.
KEEP_ACROSS_BARRIER = '''
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        sh_data = T.allocate([64], "float32", "shared")
        sh = T.decl_buffer((64,), "float32", data=sh_data, scope="shared")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            keep_data = T.allocate([1], "float32", "local")
            keep = T.decl_buffer((1,), "float32", data=keep_data, scope="local")
            doubled: T.float32 = A[bx * 64 + tx] * T.float32(2)
            keep[0] = A[bx * 64 + tx] + T.float32(1)
            sh[tx] = A[bx * 64 + tx]
            T.tvm_storage_sync("shared")
            if bx == 1:
                T.tvm_storage_sync("shared")
            B[bx * 64 + tx] = sh[63 - tx] + doubled + keep[0]
'''

THREAD_DEPENDENT_LOOP = '''
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        for i in range(tx):
            T.tvm_storage_sync("shared")
        B[tx] = A[tx]
'''

TWO_WRITERS = '''
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        sh_data = T.allocate([32], "float32", "shared")
        sh = T.decl_buffer((32,), "float32", data=sh_data, scope="shared")
        sh[tx // 2] = A[tx]
        B[tx] = A[tx]
'''


def build(body: str, a: int, b: int, **fmt):
    func = from_source((HEADER + body).format(a=a, b=b, **fmt))
    return build_gpu(IRModule({"main_kernel0": func}), "cuda")


def on_gpu(array):
    return mlcbench.nd.array(array, mlcbench.cuda(0))


@settings(max_examples=10, deadline=None)
@given(st.tuples(*[st.integers(1, 3)] * 3), st.tuples(*[st.sampled_from([1, 2, 5, 32])] * 3))
def test_every_block_and_thread_runs_once(grid, block):
    total = int(np.prod(grid) * np.prod(block))
    if np.prod(block) > 1024:
        block = (block[0], block[1], 1)
        total = int(np.prod(grid) * np.prod(block))
    fmt = dict(zip(("bx", "by", "bz"), grid), **dict(zip(("tx", "ty", "tz"), block)))
    rt_mod = build(LAUNCH_IDS, 1, total, **fmt)
    out = on_gpu(np.zeros(total, "float32"))
    prof = rt_mod.profile("main_kernel0", on_gpu(np.ones(1, "float32")), out)
    np.testing.assert_array_equal(out.numpy(), np.full(total, 2, "float32"))
    assert prof["main_kernel0"].grid == grid and prof["main_kernel0"].block == block
    assert prof["main_kernel0"].global_bytes == pytest.approx(8 * total)


def test_lets_and_locals_live_across_barriers():
    rt_mod = build(KEEP_ACROSS_BARRIER, 128, 128)
    a_np = np.random.rand(128).astype("float32")
    b = on_gpu(np.zeros(128, "float32"))
    rt_mod["main_kernel0"](on_gpu(a_np), b)
    reversed_halves = a_np.reshape(2, 64)[:, ::-1].ravel()
    np.testing.assert_allclose(b.numpy(), reversed_halves + 3 * a_np + 1, rtol=1e-6)


def test_barrier_in_a_thread_dependent_loop_is_refused():
    with pytest.raises(CodegenError, match="the extent of loop 'i' `tx` depends on the thread"):
        build(THREAD_DEPENDENT_LOOP, 32, 32)


def test_two_threads_storing_one_shared_element_race():
    rt_mod = build(TWO_WRITERS, 32, 32)
    with pytest.raises(GPUSimulationError, match=r"data race on shared buffer 'sh\w*' at index "
                                                 r"0 .* threadIdx\(x=1\) writes .* "
                                                 r"threadIdx\(x=0\) writes"):
        rt_mod["main_kernel0"](on_gpu(np.zeros(32, "float32")), on_gpu(np.zeros(32, "float32")))


@T.prim_func
def two_stages(A: T.Buffer((256,), "float32"), C: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    B = T.alloc_buffer((256,), "float32")
    for i0 in T.thread_binding(2, thread="blockIdx.x"):
        for i1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(256, i0 * 128 + i1)
                B[vi] = A[vi] * T.float32(2)
    for i0 in T.thread_binding(4, thread="blockIdx.x"):
        for i1 in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("C"):
                vi = T.axis.spatial(256, i0 * 64 + i1)
                C[vi] = B[255 - vi] + T.float32(1)


def test_two_kernels_pass_an_intermediate_through_global_memory():
    rt_mod = mlcbench.build(two_stages, target="cuda")
    a_np = np.random.rand(256).astype("float32")
    c = on_gpu(np.zeros(256, "float32"))
    prof = rt_mod.profile("main", on_gpu(a_np), c)
    np.testing.assert_allclose(c.numpy(), a_np[::-1] * 2 + 1, rtol=1e-6)
    assert [k.name for k in prof.kernels] == ["main_kernel0", "main_kernel1"]
    assert [k.grid for k in prof.kernels] == [(2, 1, 1), (4, 1, 1)]


WARP_SCOPE = '''
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        red_data = T.allocate([32], "float32", "warp")
        red = T.decl_buffer((32,), "float32", data=red_data, scope="warp")
        red[tx] = A[tx]
        B[tx] = red[31 - tx]
'''


def test_warp_storage_is_refused_by_name():
    with pytest.raises(CodegenError, match="buffer 'red\\w*' has storage scope 'warp'"):
        build(WARP_SCOPE, 32, 32)
