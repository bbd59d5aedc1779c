"""Kernels over buffers of a symbolic length ``n`` (``T.match_buffer(a, (n,))``): the
CUDA text takes ``n`` as a parameter after the buffers (as the PTX entry does), a grid
of ``ceildiv(n, 256)`` blocks is computed at each launch, and one build runs for
several ``n`` in one process, on the simulated GPU and on the device backend through
the fake driver (``n`` read off the arrays at launch)."""
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


def _arrays(n: int):
    dev = tvm.cuda(0)
    return [tvm.nd.array(np.ones(n, "float32"), dev) for _ in range(3)]


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


def _ceildiv_schedule(block_tag="blockIdx.x", thread_tag="threadIdx.x"):
    """``range(n)`` split by 256: ceildiv(n, 256) blocks of 256 threads, the tail guarded."""
    sch = Schedule(add)
    outer, inner = sch.split(sch.get_loops(sch.get_block("C"))[0], [None, 256])
    sch.bind(outer, block_tag)
    sch.bind(inner, thread_tag)
    return sch.mod


def test_a_grid_of_ceildiv_n_blocks_lowers_prints_and_guards_the_tail():
    lowered = lower_gpu(_ceildiv_schedule(), "cuda")
    text = lowered["main_kernel0"].script()
    assert 'T.thread_binding((n + T.int64(255)) // T.int64(256), thread="blockIdx.x")' in text
    assert "< n:" in text
    cuda = tvm.build(_ceildiv_schedule(), target="cuda").imported_modules[0].get_source()
    assert "__launch_bounds__(256)" in cuda and "int64_t n) {" in cuda and "< n)" in cuda
    ptx = ptx_source(lowered, "cuda")
    assert ".maxntid 256, 1, 1" in ptx and "%ctaid.x" in ptx


def test_a_ceildiv_grid_runs_several_lengths_on_the_simulated_gpu():
    rt_mod = tvm.build(_ceildiv_schedule(), target="cuda")
    # n = 0 is an empty grid: nothing runs, nothing is counted.
    for n, seed in ((1000, 0), (37, 1), (512, 2), (0, 3)):
        _run(rt_mod, n, seed)
    assert rt_mod.profile("main", *_arrays(300))["main_kernel0"].grid == (2, 1, 1)


def test_the_device_backend_computes_the_grid_at_launch(monkeypatch):
    lowered = lower_gpu(_ceildiv_schedule(), "cuda")
    saved = list(device_module._backend)
    fake = FakeCUDADriver(simulated_kernels(build_gpu(lowered, "cuda", backend="sim")))
    cuda_driver.use_driver(fake)
    monkeypatch.setenv("MLCBENCH_GPU", "cuda")
    device_module._backend.clear()
    try:
        rt_mod = build_gpu(lowered, "cuda")
        for n, seed in ((1000, 3), (5, 4), (0, 5)):
            _run(rt_mod, n, seed)
        # The fake refuses any grid other than the kernel's own for these arguments;
        # an empty grid (n = 0) is not launched (CUDA refuses one).
        assert fake.launches == [("main_kernel0", (4, 1, 1), (256, 1, 1)),
                                 ("main_kernel0", (1, 1, 1), (256, 1, 1))]
    finally:
        cuda_driver.use_driver(None)
        device_module._backend[:] = saved


def test_a_thread_extent_of_n_is_refused_naming_it():
    with pytest.raises(CodegenError, match=r"loop 'i_0' bound to threadIdx.x has extent "
                                           r"\(n \+ T.int64\(255\)\) // T.int64\(256\)"):
        tvm.build(_ceildiv_schedule("threadIdx.x", "blockIdx.x"), target="cuda")
