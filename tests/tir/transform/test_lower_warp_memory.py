"""tir.LowerWarpMemory: "warp" buffers become per-lane locals read across lanes with
tvm_warp_shuffle; CUDA prints __shfl_sync and PTX shfl.sync; what cannot be lowered is
refused naming the buffer."""
import pytest

from mlcbench.codegen.cuda import cuda_source, opencl_source
from mlcbench.codegen.nvptx import ptx_source
from mlcbench.ir import CodegenError
from mlcbench.script import tir as T
from mlcbench.tir.transform import lower_gpu

from helpers.warp_programs import warp_pairs, warp_rotate


def _kernel_text(func):
    text = lower_gpu(func, "cuda")["main_kernel0"].script()
    return [line.strip() for line in text.splitlines() if line.strip() and "func_attr" not in line]


def test_a_warp_buffer_becomes_one_register_per_lane_and_a_shuffle():
    assert _kernel_text(warp_rotate)[-6:] == [
        "for bx in T.thread_binding(2, thread=\"blockIdx.x\"):",
        "for tx in T.thread_binding(32, thread=\"threadIdx.x\"):",
        "W = T.allocate([1], \"float32\", \"local\")",
        "W_1 = T.Buffer((1,), data=W, scope=\"local\")",
        "W_1[0] = A[bx * 32 + tx]",
        "B[bx * 32 + tx] = T.tvm_warp_shuffle(T.uint32(4294967295), W_1[0], (tx + 1) % 32, "
        "32, 32) + W_1[0]"]


def test_elements_per_lane_and_a_group_narrower_than_a_warp():
    lines = _kernel_text(warp_pairs)
    assert "W = T.allocate([2], \"float32\", \"local\")" in lines
    assert "W_1[j] = A[ty * 32 + tx * 2 + j]" in lines
    assert ("B[ty * 32 + tx * 2 + j] = T.tvm_warp_shuffle(T.uint32(4294967295), W_1[j], "
            "(tx + 1) % 16, 16, 32)") in lines


def test_cuda_prints_shfl_sync_and_ptx_has_shfl_sync_idx():
    lowered = lower_gpu(warp_pairs, "cuda")
    text = cuda_source(lowered)
    assert "float W[2];" in text
    assert ("B[(((((int)threadIdx.y) * 32) + (((int)threadIdx.x) * 2)) + j_1)] = "
            "__shfl_sync(0xffffffff, W[j_1], ((((int)threadIdx.x) + 1) & 15), 16);") in text
    ptx = ptx_source(lowered, "cuda")
    # width 16: the clamp operand holds 32 - 16 in bits 8-12 and the last lane 31
    assert any("shfl.sync.idx.b32" in line and "4127, -1;" in line for line in ptx.splitlines())
    with pytest.raises(CodegenError, match="warp shuffle .* only as CUDA's __shfl_sync"):
        opencl_source(lowered)


def _warp_func(store_index, load_index, threads=32, size=32):
    @T.prim_func
    def func(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for tx in T.thread_binding(threads, thread="threadIdx.x"):
            W = T.allocate([size], "float32", "warp")
            W_1 = T.Buffer((size,), data=W, scope="warp")
            W_1[store_index(tx)] = A[tx]
            B[tx] = W_1[load_index(tx)]
    return func


@pytest.mark.parametrize("store, load, threads, size, message", [
    (lambda tx: (tx + 1) % 32, lambda tx: tx, 32, 32,
     r"warp buffer 'W': store at index \(tx \+ 1\) % 32 does not give each lane of "
     r"threadIdx.x a constant number of elements of its own"),
    (lambda tx: tx + 1, lambda tx: tx, 31, 32,
     r"power of two up to 32"),
    (lambda tx: tx + 1, lambda tx: tx, 16, 32,
     r"warp buffer 'W': store at index tx \+ 1 writes lane \(tx \+ 1\) % 16, not the "
     r"storing thread's own lane tx"),
    (lambda tx: tx, lambda tx: tx, 64, 64,
     r"warp buffer 'W' is shared by the lanes of threadIdx.x, whose extent 64 is not a "
     r"power of two up to 32"),
    (lambda tx: tx * 2, lambda tx: tx * 2 + tx % 2 + 2, 16, 32,
     r"warp buffer 'W': read at index .* takes element .* of lane .*; a shuffle reads "
     r"the same register in every lane"),
    (lambda tx: tx * 3, lambda tx: tx, 16, 40,
     r"warp buffer 'W' has shape \(40,\); .* 3 element\(s\) per lane for 16 lanes: its size "
     r"must be a constant multiple of 48"),
])
def test_what_cannot_be_lowered_is_refused_naming_the_buffer(store, load, threads, size,
                                                             message):
    with pytest.raises(CodegenError, match=message):
        lower_gpu(_warp_func(store, load, threads, size), "cuda")
