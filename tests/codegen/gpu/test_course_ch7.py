"""Course chapter 7 end to end on the simulated GPU: the course's schedules, built with
``mlcbench.build(..., target="cuda")`` and run on ``mlcbench.cuda(0)``, agree with numpy."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench.driver import gpu_course
from mlcbench.script import tir as T


@tvm.script.ir_module
class MyModuleWindowSum:
    @T.prim_func
    def main(A: T.Buffer((1027,), "float32"), B: T.Buffer((1024,), "float32")) -> None:
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in T.grid(1024):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + A[vi + 1] + A[vi + 2]


@tvm.script.ir_module
class MyModuleMatmul:
    @T.prim_func
    def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")) -> None:
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 128, 128):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = 0.0
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def window_sum_with_shared():
    sch = tvm.tir.Schedule(MyModuleWindowSum)
    block_C = sch.get_block("C")
    i, = sch.get_loops(block=block_C)
    i0, i1 = sch.split(i, [None, 128])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    A_shared = sch.cache_read(block_C, read_buffer_index=0, storage_scope="shared")
    sch.compute_at(A_shared, i1)
    ax0, ax1 = sch.split(sch.get_loops(A_shared)[-1], [None, 128])
    sch.bind(ax1, "threadIdx.x")
    return sch


def blocking(sch, shared: bool):
    """The course's local (8, 8, 8, 8, 4) or shared (8, 8, 8, 8, 8) blocking."""
    if shared:
        return gpu_course.blocking_with_shared(sch, 8, 8, 8, 8, 8)
    return gpu_course.blocking(sch, 8, 8, 8, 8, 4)


def test_window_sum_with_shared_memory():
    rt_mod = tvm.build(window_sum_with_shared().mod, target="cuda")
    dev = tvm.cuda(0)
    a_np = np.random.uniform(size=(1027,)).astype("float32")
    b = tvm.nd.array(np.zeros((1024,), "float32"), dev)
    rt_mod["main"](tvm.nd.array(a_np, dev), b)
    np.testing.assert_allclose(b.numpy(), a_np[:-3] + a_np[1:-2] + a_np[2:-1], rtol=1e-6)
    device_code = rt_mod.imported_modules[0]
    assert "__syncthreads()" in device_code.get_source()
    assert "bar.sync" in device_code.get_source("ptx")
    with pytest.raises(tvm.ir.errors.MLCBenchError, match="unknown format 'spirv'"):
        device_code.get_source("spirv")


def test_window_sum_built_for_opencl_reads_as_opencl_and_runs():
    # course chapter 7, cell 13: the same kernels printed in OpenCL's spelling
    rt_mod = tvm.build(window_sum_with_shared().mod, target="opencl")
    device_code = rt_mod.imported_modules[0]
    source = device_code.get_source()
    assert device_code.type_key == "opencl"
    assert "__kernel" in source and "barrier(CLK_LOCAL_MEM_FENCE)" in source
    assert "__syncthreads" not in source and "__syncthreads()" in device_code.get_source("cu")
    a_np = np.random.uniform(size=(1027,)).astype("float32")
    b = tvm.nd.array(np.zeros((1024,), "float32"), tvm.cuda(0))
    rt_mod["main"](tvm.nd.array(a_np, tvm.cuda(0)), b)
    np.testing.assert_allclose(b.numpy(), a_np[:-3] + a_np[1:-2] + a_np[2:-1], rtol=1e-6)


@pytest.mark.parametrize("shared", [False, True], ids=["local", "shared"])
def test_matmul_blocking(shared):
    rt_mod = tvm.build(blocking(tvm.tir.Schedule(MyModuleMatmul), shared).mod,
                       target="nvidia/geforce-rtx-2080-ti")
    dev = tvm.cuda(0)
    a_np, b_np = (np.random.uniform(size=(128, 128)).astype("float32") for _ in range(2))
    args = [tvm.nd.array(a_np, dev), tvm.nd.array(b_np, dev),
            tvm.nd.array(np.zeros((128, 128), "float32"), dev)]
    rt_mod["main"](*args)
    np.testing.assert_allclose(args[2].numpy(), a_np @ b_np, rtol=1e-4)
    evaluator = rt_mod.time_evaluator("main", dev, number=10)
    profile = rt_mod.profile("main", *args)
    assert evaluator(*args).mean == pytest.approx(profile.seconds)
    assert (profile["main_kernel0"].shared_wavefronts > 0) == shared
