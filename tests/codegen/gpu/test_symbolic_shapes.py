"""Kernels over buffers of a symbolic length ``n`` (``T.match_buffer(a, (n,))``): the
CUDA text takes ``n`` as a parameter after the buffers (as the PTX entry does), and
one build runs for several ``n`` in one process, on the simulated GPU and on the
device backend through the fake driver (``n`` read off the arrays at launch)."""
import importlib

import numpy as np
import pytest
from helpers.fake_cuda_driver import FakeCUDADriver, simulated_kernels

import mlcbench as tvm
from mlcbench.codegen.gpu import build_gpu
from mlcbench.codegen.nvptx import ptx_source
from mlcbench.ir.errors import CodegenError
from mlcbench.runtime import cuda_driver
from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from mlcbench.tir.transform import lower_gpu

device_module = importlib.import_module("mlcbench.runtime.device")


@T.prim_func
def grid_stride_add(a: T.handle, b: T.handle, c: T.handle):
    """A fixed grid of 4 x 128 threads, each striding over the whole of ``n``."""
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            for k in range((n + 511) // 512):
                if k * 512 + bx * 128 + tx < n:
                    C[k * 512 + bx * 128 + tx] = A[k * 512 + bx * 128 + tx] + B[k * 512 + bx * 128 + tx]


@T.prim_func
def add(a: T.handle, b: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i in range(n):
        with T.block("C"):
            vi = T.axis.spatial(n, i)
            C[vi] = A[vi] + B[vi]


def _run(rt_mod, n: int, seed: int):
    dev = tvm.cuda(0)
    rng = np.random.default_rng(seed)
    a, b = (rng.uniform(size=n).astype("float32") for _ in range(2))
    c = tvm.nd.empty((n,), "float32", dev)
    rt_mod["main"](tvm.nd.array(a, dev), tvm.nd.array(b, dev), c)
    np.testing.assert_array_equal(c.numpy(), a + b)


def test_cuda_text_and_ptx_take_n_after_the_buffers():
    lowered = lower_gpu(grid_stride_add, "cuda")
    cuda = tvm.build(grid_stride_add, target="cuda").imported_modules[0].get_source()
    assert "float* __restrict__ c, int64_t n) {" in cuda
    assert "< n)" in cuda
    ptx = ptx_source(lowered, "cuda")
    assert ".param .u64 main_kernel0_param_3" in ptx


def test_one_build_runs_two_lengths_on_the_simulated_gpu():
    rt_mod = tvm.build(grid_stride_add, target="cuda")
    for n, seed in ((1000, 0), (37, 1)):
        _run(rt_mod, n, seed)


def test_two_lengths_on_the_device_backend_through_the_fake_driver(monkeypatch):
    lowered = lower_gpu(grid_stride_add, "cuda")
    saved = list(device_module._backend)
    fake = FakeCUDADriver(simulated_kernels(build_gpu(lowered, "cuda", backend="sim")))
    cuda_driver.use_driver(fake)
    monkeypatch.setenv("MLCBENCH_GPU", "cuda")
    device_module._backend.clear()
    try:
        rt_mod = build_gpu(lowered, "cuda")
        for n, seed in ((700, 2), (5, 3)):
            _run(rt_mod, n, seed)
        assert fake.launches == [("main_kernel0", (4, 1, 1), (128, 1, 1))] * 2
    finally:
        cuda_driver.use_driver(None)
        device_module._backend[:] = saved


def test_a_grid_of_symbolic_extent_is_refused_naming_it():
    sch = Schedule(add)
    bx, tx = sch.split(sch.get_loops(sch.get_block("C"))[0], [None, 256])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    with pytest.raises(CodegenError, match=r"loop 'i_0' bound to blockIdx.x has extent "
                                           r"\(n \+ T.int64\(255\)\) // T.int64\(256\)"):
        tvm.build(sch.mod, target="cuda")
