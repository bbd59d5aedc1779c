"""A GPU build on the real-device backend, run through the fake CUDA driver
(helpers.fake_cuda_driver): arrays in (fake) device memory, the PTX loaded and each
kernel launched with its grid, block and parameters in the PTX entry's order. The
fake runs each launch on the simulated GPU's CPU function of that kernel, so wrong
plumbing gives wrong numbers."""
import ctypes
import importlib

import numpy as np
import pytest
from helpers import gpu_course_schedules as course
from helpers.fake_cuda_driver import FakeCUDADriver, simulated_kernels

import mlcbench as tvm
from mlcbench.codegen.gpu import build_gpu
from mlcbench.codegen.gpu.cuda_module import CUDAModule
from mlcbench.ir import IRModule
from mlcbench.ir.errors import RuntimeError_
from mlcbench.runtime import cuda_dlpack, cuda_driver
from mlcbench.runtime.cuda_ndarray import CUDANDArray
from mlcbench.script import tir as T
from mlcbench.target import Target
from mlcbench.tir.transform import lower_gpu

device_module = importlib.import_module("mlcbench.runtime.device")


@pytest.fixture
def fake_gpu(monkeypatch):
    """install(lowered, target, **options): the fake driver, running the simulated
    kernels of ``lowered``, as the driver of cuda(0) (MLCBENCH_GPU=cuda)."""
    saved = list(device_module._backend)

    def install(lowered, target="cuda", **options):
        fake = FakeCUDADriver(simulated_kernels(build_gpu(lowered, target, backend="sim")),
                              **options)
        cuda_driver.use_driver(fake)
        monkeypatch.setenv("MLCBENCH_GPU", "cuda")
        device_module._backend.clear()
        return fake
    yield install
    cuda_driver.use_driver(None)
    device_module._backend[:] = saved


def test_window_sum_runs_on_the_device_backend(fake_gpu):
    lowered = course.lowered(course.window_sum(512))
    fake = fake_gpu(lowered)
    rt_mod = build_gpu(lowered, "cuda")
    assert isinstance(rt_mod, CUDAModule) and ".entry main_kernel0" in rt_mod.get_source()
    dev = tvm.cuda(0)
    a_np = np.random.default_rng(0).uniform(size=515).astype("float32")
    a, b = tvm.nd.array(a_np, dev), tvm.nd.empty((512,), "float32", dev)
    assert isinstance(a, CUDANDArray) and fake.view(a.handle, a_np.nbytes) is not None
    rt_mod["main"](a, b)
    np.testing.assert_allclose(b.numpy(), a_np[:-3] + a_np[1:-2] + a_np[2:-1], rtol=1e-6)
    assert fake.launches == [("main_kernel0", (4, 1, 1), (128, 1, 1))]


def test_matmul_shared_blocking_through_mlcbench_build(fake_gpu):
    mod = course.matmul_shared(128)
    fake = fake_gpu(course.lowered(mod))
    rt_mod = tvm.build(mod, target="cuda")
    rng = np.random.default_rng(1)
    a_np, b_np = (rng.uniform(size=(128, 128)).astype("float32") for _ in range(2))
    dev = tvm.cuda(0)
    a, b = tvm.nd.array(a_np, dev), tvm.nd.array(b_np, dev)
    c = tvm.nd.array(np.zeros((128, 128), "float32"), dev)
    rt_mod["main"](a, b, c)
    np.testing.assert_allclose(c.numpy(), a_np @ b_np, rtol=1e-4)
    (name, grid, block), = fake.launches
    assert grid == (2, 2, 1) and block == (64, 1, 1)       # 8 x 8 threads, fused
    timing = rt_mod.time_evaluator("main", dev, number=2, repeat=2)(a, b, c)
    assert len(timing.results) == 2 and all(t > 0 for t in timing.results)
    assert len(fake.launches) == 1 + 1 + 2 * 2         # call, warm-up, 2 x 2 timed
    np.testing.assert_allclose(c.numpy(), a_np @ b_np, rtol=1e-4)


def test_a_launch_with_swapped_parameters_computes_something_else(fake_gpu):
    # the fake reads parameters in the PTX entry's order: order matters, as on a GPU
    lowered = course.lowered(course.vector_add(256))
    fake_gpu(lowered)
    rt_mod = build_gpu(lowered, "cuda")
    dev = tvm.cuda(0)
    a, b = tvm.nd.array(np.ones(256, "float32"), dev), tvm.nd.array(np.full(256, 2, "float32"), dev)
    c = tvm.nd.empty((256,), "float32", dev)
    rt_mod["main"](a, b, c)
    kernel = rt_mod.get_function("main").host.kernels["main_kernel0"]
    cuda_driver.launch(kernel.function, kernel.nest.grid, kernel.nest.block_dim,
                       kernel.params([a, c, b]))
    np.testing.assert_array_equal(b.numpy(), np.full(256, 4, "float32"))   # b = a + c


def test_copies_in_and_out_of_device_memory(fake_gpu):
    fake = fake_gpu(course.lowered(course.vector_add(256)))
    dev = tvm.cuda(0)
    x = np.arange(12, dtype="int32").reshape(3, 4)
    a = tvm.nd.array(x, dev)
    assert a.device == dev and a.shape == (3, 4) and str(a.dtype) == "int32"
    np.testing.assert_array_equal(a.numpy(), x)
    a.copyfrom(x * 2)
    host = tvm.nd.array(np.zeros((3, 4), "int32"))
    host.copyfrom(a)                                   # device -> host NDArray
    np.testing.assert_array_equal(host.numpy(), x * 2)
    np.testing.assert_array_equal(a.copyto(tvm.cpu()).numpy(), x * 2)
    np.testing.assert_array_equal(tvm.nd.array(a, dev).numpy(), x * 2)   # device -> device
    with pytest.raises(ValueError, match="shape mismatch"):
        a.copyfrom(np.zeros((4, 3), "int32"))
    with pytest.raises(ValueError, match="dtype mismatch"):
        a.copyfrom(x.astype("float32"))
    address = a.handle
    del a
    assert fake.view(address, 1) is None               # freed with the array


def test_arguments_in_host_memory_are_refused(fake_gpu):
    lowered = course.lowered(course.vector_add(256))
    fake_gpu(lowered)
    rt_mod = build_gpu(lowered, "cuda")
    dev = tvm.cuda(0)
    a = tvm.nd.array(np.ones(256, "float32"))
    b, c = tvm.nd.empty((256,), "float32", dev), tvm.nd.empty((256,), "float32", dev)
    with pytest.raises(ValueError, match="argument 'A' is on cpu.0."):
        rt_mod["main"](a, b, c)
    with pytest.raises(ValueError, match="argument 'A': expected shape"):
        rt_mod["main"](tvm.nd.empty((128,), "float32", dev), b, c)


def test_driver_errors_name_the_call_and_the_error(fake_gpu):
    fake_gpu(course.lowered(course.vector_add(256)), memory_limit=1024)
    with pytest.raises(RuntimeError_, match="^cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY$"):
        tvm.nd.empty((1024,), "float32", tvm.cuda(0))
    with pytest.raises(RuntimeError_, match="cuMemFree failed: CUDA_ERROR_INVALID_VALUE"):
        cuda_driver.call("cuMemFree", 12345)


def test_a_build_for_a_newer_gpu_is_refused_on_load(fake_gpu):
    lowered = course.lowered(course.vector_add(256), "nvidia/nvidia-h100")
    fake_gpu(lowered, "nvidia/nvidia-h100", compute_capability=(8, 0))
    rt_mod = build_gpu(lowered, "nvidia/nvidia-h100")
    dev = tvm.cuda(0)
    args = [tvm.nd.empty((256,), "float32", dev) for _ in range(3)]
    with pytest.raises(RuntimeError_, match="built for sm_90.*device 0 .Fake CUDA device. "
                                            "is sm_80"):
        rt_mod["main"](*args)


@pytest.mark.parametrize("options, missing", [
    ({"libcuda": False}, "no CUDA driver: libcuda.so.1 was not found"),
    ({"devices": 0}, "the CUDA driver reports no device"),
])
def test_mlcbench_gpu_cuda_names_what_is_missing(fake_gpu, options, missing):
    fake_gpu(course.lowered(course.vector_add(256)), **options)
    assert not tvm.cuda(0).exist
    with pytest.raises(RuntimeError_, match=f"^MLCBENCH_GPU=cuda asks for a real CUDA "
                                            f"device, but {missing}"):
        tvm.nd.empty((4,), "float32", tvm.cuda(0))


def test_a_present_device_is_the_default_without_mlcbench_gpu(fake_gpu, monkeypatch):
    fake_gpu(course.lowered(course.vector_add(256)))
    monkeypatch.delenv("MLCBENCH_GPU")
    assert tvm.cuda(0).exist and isinstance(tvm.nd.empty((4,), "float32", tvm.cuda(0)),
                                            CUDANDArray)
    tvm.cuda(0).sync()


class _Tensor:
    """A CUDA tensor from another library: only the DLPack protocol, as torch offers it."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_shares_device_memory_both_ways(fake_gpu):
    fake_gpu(course.lowered(course.vector_add(256)))
    dev = tvm.cuda(0)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    a = tvm.nd.array(x, dev)
    assert a.__dlpack_device__() == (2, 0)
    b = tvm.nd.from_dlpack(_Tensor(a))                 # a capsule made and read back
    assert isinstance(b, CUDANDArray) and b.handle == a.handle and b.shape == (2, 3)
    assert str(b.dtype) == "float32"
    b.copyfrom(x + 1)
    np.testing.assert_array_equal(a.numpy(), x + 1)
    np.testing.assert_array_equal(tvm.nd.array(_Tensor(a), dev).numpy(), x + 1)   # a copy
    # numpy holds host memory only: RuntimeError before numpy 2.5, BufferError since
    with pytest.raises((RuntimeError, BufferError)):
        np.from_dlpack(a)
    del b
    a.__dlpack__()                                     # forgets the capsule numpy refused
    assert [entry[0] for entry in cuda_dlpack._alive.values()] == [a]


def test_a_cpu_function_refuses_an_array_in_device_memory(fake_gpu):
    fake_gpu(course.lowered(course.vector_add(256)))
    lib = tvm.build(course.matmul(4), target="llvm")
    dev = tvm.cuda(0)
    a, b = tvm.nd.array(np.ones((4, 4), "float32"), dev), tvm.nd.empty((4, 4), "float32")
    with pytest.raises(ValueError, match="parameter A: the NDArray is in the memory of "
                                         "cuda.0., but main runs on the CPU"):
        lib["main"](a, b, b)


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


def test_kernels_run_in_order_through_a_global_intermediate(fake_gpu):
    lowered = lower_gpu(IRModule({"main": two_stages}), Target("cuda"))
    fake = fake_gpu(lowered)
    rt_mod = build_gpu(lowered, "cuda")
    dev = tvm.cuda(0)
    c = tvm.nd.empty((256,), "float32", dev)
    for seed in (0, 1):                        # the intermediate is reused by the second call
        a_np = np.random.default_rng(seed).uniform(size=256).astype("float32")
        rt_mod["main"](tvm.nd.array(a_np, dev), c)
        np.testing.assert_allclose(c.numpy(), a_np[::-1] * 2 + 1, rtol=1e-6)
    assert [(name, grid) for name, grid, _ in fake.launches] == [
        ("main_kernel0", (2, 1, 1)), ("main_kernel1", (4, 1, 1))] * 2


def test_from_dlpack_refuses_a_strided_cuda_tensor_and_leaves_it_unconsumed(fake_gpu):
    fake_gpu(course.lowered(course.vector_add(256)))
    a = tvm.nd.array(np.zeros((2, 3), "float32"), tvm.cuda(0))
    capsule = a.__dlpack__()
    address = cuda_dlpack._get_pointer(capsule, b"dltensor")
    strides = (ctypes.c_int64 * 2)(1, 2)                       # column-major
    cuda_dlpack.DLManagedTensor.from_address(address).dl_tensor.strides = strides
    with pytest.raises(ValueError, match=r"tensor of shape \(2, 3\) is not C-contiguous"):
        cuda_dlpack.from_dlpack_capsule(capsule, tvm.cuda(0))
    assert cuda_dlpack._is_valid(capsule, b"dltensor")        # still the producer's
