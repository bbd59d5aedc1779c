"""Kernels in the GPU lowered form run on the simulated GPU and agree with numpy."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlcbench
from mlcbench.codegen.gpu import build_gpu
from mlcbench.ir.errors import CodegenError, MLCBenchError
from mlcbench.ir.module import IRModule
from mlcbench.script import from_source

# Vector add over a grid that may overshoot n: the guard keeps the last block inside.
VECTOR_ADD = '''
from mlcbench.script import tir as T

@T.prim_func
def main_kernel0(A: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32"),
                 C: T.Buffer(({n},), "float32")):
    T.func_attr({{"global_symbol": "main_kernel0", "calling_conv": "device_kernel"}})
    for bx in T.thread_binding({blocks}, thread="blockIdx.x"):
        for tx in T.thread_binding({threads}, thread="threadIdx.x"):
            if bx * {threads} + tx < {n}:
                C[bx * {threads} + tx] = A[bx * {threads} + tx] + B[bx * {threads} + tx]
'''

# Course chapter 7's window sum: each block stages its window of A in shared memory.
WINDOW_SUM = '''
from mlcbench.script import tir as T

@T.prim_func
def main_kernel0(A: T.Buffer((1027,), "float32"), B: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        A_sh_data = T.allocate([130], "float32", "shared")
        A_sh = T.decl_buffer((130,), "float32", data=A_sh_data, scope="shared")
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            for ax0 in range(2):
                if ax0 * 128 + tx < 130:
                    A_sh[ax0 * 128 + tx] = A[bx * 128 + ax0 * 128 + tx]
            T.tvm_storage_sync("shared")
            B[bx * 128 + tx] = A_sh[tx] + A_sh[tx + 1] + A_sh[tx + 2]
'''

DIVERGENT_BARRIER = '''
from mlcbench.script import tir as T

@T.prim_func
def main_kernel0(A: T.Buffer((32,), "float32")):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        if tx < 16:
            T.tvm_storage_sync("shared")
        A[tx] = T.float32(1)
'''


def build(text: str, **fmt):
    func = from_source(text.format(**fmt) if fmt else text)
    return build_gpu(IRModule({"main_kernel0": func}), "cuda")


def on_gpu(array):
    return mlcbench.nd.array(array, mlcbench.cuda(0))


@settings(max_examples=8, deadline=None)
@given(threads=st.sampled_from([1, 32, 48, 128]), n=st.integers(1, 300))
def test_vector_add_for_any_block_and_thread_extents(threads, n):
    blocks = -(-n // threads)
    rt_mod = build(VECTOR_ADD, n=n, threads=threads, blocks=blocks)
    a_np, b_np = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
    c = on_gpu(np.zeros(n, "float32"))
    rt_mod["main_kernel0"](on_gpu(a_np), on_gpu(b_np), c)
    np.testing.assert_allclose(c.numpy(), a_np + b_np)


def test_window_sum_through_shared_memory():
    rt_mod = build(WINDOW_SUM)
    a_np = np.random.rand(1027).astype("float32")
    b = on_gpu(np.zeros(1024, "float32"))
    rt_mod["main_kernel0"](on_gpu(a_np), b)
    np.testing.assert_allclose(b.numpy(), a_np[:1024] + a_np[1:1025] + a_np[2:1026], rtol=1e-6)


@pytest.mark.parametrize("variant", ["naive", "local", "shared"])
def test_course_matmul_schedules_in_lowered_form(variant):
    from helpers.matmul_kernels import matmul_module
    n = 128
    rt_mod = build_gpu(matmul_module(variant, n), "cuda")
    a_np, b_np = (np.random.rand(n, n).astype("float32") for _ in range(2))
    c = on_gpu(np.zeros(n * n, "float32"))
    rt_mod["main_kernel0"](on_gpu(a_np.ravel()), on_gpu(b_np.ravel()), c)
    np.testing.assert_allclose(c.numpy().reshape(n, n), a_np @ b_np, rtol=1e-4)
    evaluator = rt_mod.time_evaluator("main_kernel0", mlcbench.cuda(0), number=10)
    assert evaluator(on_gpu(a_np.ravel()), on_gpu(b_np.ravel()), c).mean > 0


def test_a_cpu_array_is_refused_naming_the_argument():
    rt_mod = build(VECTOR_ADD, n=32, threads=32, blocks=1)
    a = mlcbench.nd.array(np.zeros(32, "float32"))
    with pytest.raises(MLCBenchError, match="argument 'A' is on cpu.0., but main_kernel0 "
                                            "runs on cuda.0."):
        rt_mod["main_kernel0"](a, on_gpu(np.zeros(32, "float32")), on_gpu(np.zeros(32, "float32")))


def test_barrier_under_a_thread_dependent_if_is_refused():
    with pytest.raises(CodegenError, match="depends on the thread.*barrier"):
        build(DIVERGENT_BARRIER)


def test_device_source_is_offered_as_cuda_c():
    rt_mod = build(VECTOR_ADD, n=32, threads=32, blocks=1)
    source = rt_mod.imported_modules[0].get_source()
    assert "main_kernel0" in source and "threadIdx.x" in source


SCALED_COPY = '''
from mlcbench.script import tir as T

@T.prim_func
def main_kernel0(a: T.handle, b: T.handle, alpha: T.float32):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            if bx * 32 + tx < n:
                B[bx * 32 + tx] = A[bx * 32 + tx] * alpha
'''


@pytest.mark.parametrize("n", [100, 128])
def test_scalar_parameters_and_symbolic_sizes(n):
    rt_mod = build(SCALED_COPY)
    a_np = np.random.rand(n).astype("float32")
    b = on_gpu(np.zeros(n, "float32"))
    prof = rt_mod.profile("main_kernel0", on_gpu(a_np), b, 2.0)
    np.testing.assert_allclose(b.numpy(), a_np * 2)
    assert prof.flops == n                          # small grids are traced whole


def test_arguments_of_the_wrong_dtype_or_shape_are_refused_naming_them():
    rt_mod = build(VECTOR_ADD, n=32, threads=32, blocks=1)
    good = on_gpu(np.zeros(32, "float32"))
    with pytest.raises(MLCBenchError, match="argument 'B': expected dtype float32, found float64"):
        rt_mod["main_kernel0"](good, on_gpu(np.zeros(32)), good)
    with pytest.raises(MLCBenchError, match=r"argument 'C': expected shape \(32,\), found \(16,\)"):
        rt_mod["main_kernel0"](good, good, on_gpu(np.zeros(16, "float32")))
    with pytest.raises(MLCBenchError, match=r"expected 3 arguments \(A, B, C\), found 2"):
        rt_mod["main_kernel0"](good, good)


def test_counters_follow_the_array_sizes_of_each_call():
    rt_mod = build(SCALED_COPY)
    evaluator = rt_mod.time_evaluator("main_kernel0", mlcbench.cuda(0))
    flops = []
    for n in (40, 128):
        a, b = on_gpu(np.ones(n, "float32")), on_gpu(np.zeros(n, "float32"))
        assert evaluator(a, b, 3.0).mean > 0
        flops.append(rt_mod["main_kernel0"].last_profile.flops)
        np.testing.assert_array_equal(b.numpy(), 3)
    assert flops == [40, 128]
