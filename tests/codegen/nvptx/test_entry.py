"""The PTX entry ABI read back from ptx_source's text: parameters in the kernel's order
(buffers as .u64 .ptr, scalars in their own size), the .target from the target tag, and
check_entry's refusal of a launch that would pass something else."""
import pytest

from mlcbench.codegen.nvptx import ptx_source
from mlcbench.codegen.nvptx.entry import (PTXParam, check_entry, launch_params, ptx_entries,
                                          ptx_target)
from mlcbench.ir.errors import CodegenError
from mlcbench.script import tir as T
from mlcbench.target import Target


@T.prim_func
def scaled(A: T.Buffer((64,), "float32"), s: T.float32, n: T.int32, m: T.int64, b: T.bool,
           h: T.float16, B: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            if b:
                B[bx * 32 + tx] = (A[bx * 32 + tx] * s + T.Cast("float32", n)
                                   + T.Cast("float32", m) + T.Cast("float32", h))


@T.prim_func
def swapped(s: T.float32, A: T.Buffer((64,), "float32"), n: T.int32, m: T.int64, b: T.bool,
            h: T.float16, B: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            B[bx * 32 + tx] = A[bx * 32 + tx] * s


@pytest.fixture(scope="module")
def ptx():
    return ptx_source(scaled, Target("nvidia/nvidia-a100"))


def test_entry_params_in_the_kernels_order(ptx):
    entry = ptx_entries(ptx)["main_kernel0"]
    assert entry.params == (PTXParam("ptr", 8), PTXParam("float", 4), PTXParam("int", 4),
                            PTXParam("int", 8), PTXParam("int", 1), PTXParam("bytes", 2),
                            PTXParam("ptr", 8))
    check_entry(entry, scaled)                  # what a launch passes fits
    assert launch_params(scaled)[1] == PTXParam("float", 4)


def test_target_line_comes_from_the_tag(ptx):
    assert ptx_target(ptx) == "sm_80"
    assert ptx_target(ptx_source(scaled, Target("cuda"))) == "sm_75"


def test_a_launch_that_disagrees_is_refused(ptx):
    entry = ptx_entries(ptx)["main_kernel0"]
    with pytest.raises(CodegenError, match=r"parameter 0 \(s\) is ptr of 8 bytes, but the "
                                           r"launch passes float of 4 bytes"):
        check_entry(entry, swapped)
    short = entry.__class__(entry.name, entry.params[:-1])
    with pytest.raises(CodegenError, match="takes 6 parameters, but a launch passes 7"):
        check_entry(short, scaled)
