"""Warp shuffles on the simulated GPU: "warp" buffers lowered to registers and
tvm_warp_shuffle, run with warp semantics (every lane reads the values the others had
before the shuffle; groups of ``width`` lanes apart)."""
import importlib

import numpy as np
import pytest
from helpers.fake_cuda_driver import FakeCUDADriver, simulated_kernels

import mlcbench as tvm
from mlcbench.codegen.gpu import build_gpu
from mlcbench.codegen.gpu.cuda_module import CUDAModule
from mlcbench.ir import CodegenError
from mlcbench.runtime import cuda_driver
from mlcbench.script import tir as T
from mlcbench.tir.transform import lower_gpu

from helpers.warp_programs import warp_pairs, warp_rotate

device_module = importlib.import_module("mlcbench.runtime.device")


@T.prim_func
def warp_sum(A: T.Buffer((128,), "float32"), B: T.Buffer((4,), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            red = T.allocate([32], "float32", "warp")
            red_1 = T.Buffer((32,), data=red, scope="warp")
            red_1[tx] = A[bx * 32 + tx]
            # each lane adds the lane `offset` ahead: after 16, 8, 4, 2, 1 every lane holds
            # the sum, and a lane that read a value another lane overwrote would not
            red_1[tx] = red_1[tx] + red_1[(tx + 16) % 32]
            red_1[tx] = red_1[tx] + red_1[(tx + 8) % 32]
            red_1[tx] = red_1[tx] + red_1[(tx + 4) % 32]
            red_1[tx] = red_1[tx] + red_1[(tx + 2) % 32]
            red_1[tx] = red_1[tx] + red_1[(tx + 1) % 32]
            if tx == 0:
                B[bx] = red_1[tx]


@T.prim_func
def scheduled_reverse(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    W = T.alloc_buffer((64,), scope="warp")
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("W"):
                vi = T.axis.spatial(64, bx * 32 + tx)
                W[vi] = A[vi]
            with T.block("B"):
                vi = T.axis.spatial(64, bx * 32 + tx)
                B[vi] = W[vi // 32 * 32 + 31 - vi % 32]


@T.prim_func
def divergent_shuffle(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        W = T.allocate([32], "float32", "warp")
        W_1 = T.Buffer((32,), data=W, scope="warp")
        W_1[tx] = A[tx]
        if tx < 16:
            B[tx] = W_1[(tx + 16) % 32]


def _run(func, shapes, inputs):
    rt_mod = tvm.build(func, target="cuda")
    dev = tvm.cuda(0)
    args = [tvm.nd.array(x, dev) for x in inputs] + [tvm.nd.empty(s, "float32", dev)
                                                     for s in shapes]
    rt_mod["main"](*args)
    return rt_mod, args


def test_rotation_within_each_warp():
    a = np.random.default_rng(0).uniform(size=64).astype("float32")
    rt_mod, (a_nd, b) = _run(warp_rotate, [(64,)], [a])
    want = np.concatenate([np.roll(a[:32], -1), np.roll(a[32:], -1)]) + a
    np.testing.assert_allclose(b.numpy(), want, rtol=1e-6)
    counts = {(c.buffer, c.kind) for c in rt_mod.profile("main", a_nd, b).kernels[0].counts}
    assert ("W_lanes", "load") in counts      # the shuffle, counted as shared memory


def test_groups_of_sixteen_lanes_with_two_elements_each():
    a = np.arange(64, dtype="float32")
    _, (_, b) = _run(warp_pairs, [(64,)], [a])
    # each group of 16 lanes (one threadIdx.y row) rotates its 32 elements by one lane
    want = np.concatenate([np.roll(a[:32], -2), np.roll(a[32:], -2)])
    np.testing.assert_array_equal(b.numpy(), want)


def test_a_warp_reduction_reads_the_values_from_before_each_shuffle():
    a = np.random.default_rng(1).uniform(size=128).astype("float32")
    _, (_, b) = _run(warp_sum, [(4,)], [a])
    np.testing.assert_allclose(b.numpy(), a.reshape(4, 32).sum(axis=1), rtol=1e-5)


def test_a_scheduled_warp_buffer_is_sized_for_its_warp_and_reversed_across_lanes():
    a = np.arange(64, dtype="float32")
    _, (_, b) = _run(scheduled_reverse, [(64,)], [a])
    np.testing.assert_array_equal(b.numpy(), np.concatenate([a[31::-1], a[:31:-1]]))


def test_a_shuffle_under_a_thread_dependent_condition_is_refused():
    with pytest.raises(CodegenError, match=r"warp buffer 'W': read at index tx \+ 16 "
                                           r"\(lane tx \+ 16\) is a warp shuffle under the "
                                           r"condition `tx < 16`, which depends on the thread"):
        tvm.build(divergent_shuffle, target="cuda")


def test_a_warp_kernel_on_the_device_backend_through_the_fake_driver(monkeypatch):
    """The PTX (with shfl.sync) loads and launches; the fake runs the simulated kernel."""
    lowered = lower_gpu(warp_rotate, "cuda")
    saved = list(device_module._backend)
    cuda_driver.use_driver(FakeCUDADriver(simulated_kernels(
        build_gpu(lowered, "cuda", backend="sim"))))
    monkeypatch.setenv("MLCBENCH_GPU", "cuda")
    device_module._backend.clear()
    try:
        rt_mod = build_gpu(lowered, "cuda")
        assert isinstance(rt_mod, CUDAModule) and "shfl.sync.idx.b32" in rt_mod.get_source("ptx")
        a = np.arange(64, dtype="float32")
        dev = tvm.cuda(0)
        args = [tvm.nd.array(a, dev), tvm.nd.empty((64,), "float32", dev)]
        rt_mod["main"](*args)
        want = np.concatenate([np.roll(a[:32], -1), np.roll(a[32:], -1)]) + a
        np.testing.assert_array_equal(args[1].numpy(), want)
    finally:
        cuda_driver.use_driver(None)
        device_module._backend[:] = saved
