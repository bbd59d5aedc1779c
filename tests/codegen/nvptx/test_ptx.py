"""LLVM IR and PTX of device kernels through LLVM's NVPTX backend (mlcbench.codegen.nvptx).

No ptxas here: the checks are structural (entry points, special registers, shared
memory, barriers, the target architecture) on kernels written in the lowered form.
"""
import re

import pytest
from hypothesis import given, settings, strategies as st

from helpers.gpu_programs import global_in_kernel, vthread_left, window_sum_kernel as window_sum
from mlcbench.codegen.nvptx import gpu_arch, nvptx_ir, ptx_source
from mlcbench.ir import IRModule
from mlcbench.ir.errors import CodegenError
from mlcbench.script import tir as T
from mlcbench.target import Target


@T.prim_func
def local_accumulate(A: T.Buffer((4096,), "float32"), B: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "main_kernel1", "calling_conv": "device_kernel"})
    for by in T.thread_binding(2, thread="blockIdx.y"):
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                acc = T.allocate([2], "float32", "local")
                acc_buf = T.decl_buffer((2,), "float32", data=acc, scope="local")
                acc_buf[0] = T.float32(0)
                acc_buf[1] = T.float32(0)
                for k in range(8):
                    acc_buf[0] = acc_buf[0] + T.exp(A[(by * 128 + ty * 32 + tx) * 16 + k])
                    acc_buf[1] = T.max(acc_buf[1], A[(by * 128 + ty * 32 + tx) * 16 + 8 + k])
                B[by * 128 + ty * 32 + tx] = acc_buf[0] + acc_buf[1]


def test_llvm_ir_reads_special_registers_and_marks_the_kernel():
    text = nvptx_ir(window_sum, Target("cuda"))
    assert 'target triple = "nvptx64-nvidia-cuda"' in text
    assert re.search(r'define ptx_kernel void @"main_kernel0"\(ptr [^,]*noalias %"A"', text)
    assert 'call i32 @"llvm.nvvm.read.ptx.sreg.ctaid.x"()' in text
    assert 'call i32 @"llvm.nvvm.read.ptx.sreg.tid.x"()' in text
    assert 'call void @"llvm.nvvm.barrier0"()' in text
    assert '@"A_shared" = internal addrspace(3) global [130 x float] undef, align 16' in text
    assert "!nvvm.annotations" in text and '!"maxntidx", i32 128' in text


def test_ptx_has_the_entry_shared_loads_and_the_barrier():
    ptx = ptx_source(window_sum, Target("cuda"))
    assert ".target sm_75" in ptx
    assert ".visible .entry main_kernel0(" in ptx
    assert ".maxntid 128, 1, 1" in ptx
    assert re.search(r"\.shared \.align 16 \.b8 A_shared\[520\]", ptx)
    assert "mov.u32" in ptx and "%tid.x" in ptx and "%ctaid.x" in ptx
    assert "ld.shared" in ptx and "st.shared" in ptx and "ld.global" in ptx
    assert "bar.sync \t0;" in ptx
    # the barrier separates the fetch into shared memory from the reads of it
    assert ptx.index("st.shared") < ptx.index("bar.sync") < ptx.index("ld.shared")


def test_local_arrays_become_registers():
    ptx = ptx_source(local_accumulate, Target("nvidia/nvidia-a100"))
    assert ".target sm_80" in ptx and ".maxntid 32, 4, 1" in ptx
    assert "%ctaid.y" in ptx and "%tid.y" in ptx
    assert ".local" not in ptx and "ld.local" not in ptx


def test_a_module_gives_one_entry_per_kernel_and_skips_the_host_function():
    host = window_sum.with_attr("calling_conv", "host_launch").with_attr("global_symbol", "main")
    mod = IRModule({"main": host, "main_kernel0": window_sum, "main_kernel1": local_accumulate})
    ptx = ptx_source(mod, "nvidia/nvidia-h100")
    assert ".target sm_90" in ptx
    assert re.findall(r"\.entry (\w+)\(", ptx) == ["main_kernel0", "main_kernel1"]


@pytest.mark.parametrize("tag,arch", [("nvidia/geforce-rtx-2080-ti", "sm_75"),
                                      ("nvidia/nvidia-a100", "sm_80"),
                                      ("nvidia/nvidia-h100", "sm_90")])
def test_arch_comes_from_the_target_tag(tag, arch):
    assert gpu_arch(Target(tag)) == arch
    assert f".target {arch}" in ptx_source(window_sum, tag)


def test_errors_name_what_is_wrong():
    with pytest.raises(CodegenError, match="no device kernels"):
        ptx_source(IRModule({"main": window_sum.with_attr("calling_conv", "host_launch")}),
                   "cuda")
    with pytest.raises(CodegenError, match="thread tag 'vthread'"):
        ptx_source(vthread_left, "cuda")
    with pytest.raises(CodegenError, match="storage scope 'global'"):
        ptx_source(global_in_kernel, "cuda")


def _shared_kernel(blocks: int, threads: int, halo: int):
    """Each block stages ``threads + halo`` elements in shared memory, then reads them."""
    size = threads + halo

    @T.prim_func
    def staged(A: T.Buffer((8192,), "float32"), B: T.Buffer((4096,), "float32")):
        T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
        for bx in T.thread_binding(blocks, thread="blockIdx.x"):
            S = T.allocate([size], "float32", "shared")
            S_buf = T.decl_buffer((size,), "float32", data=S, scope="shared")
            for tx in T.thread_binding(threads, thread="threadIdx.x"):
                for ax in range((size + threads - 1) // threads):
                    if ax * threads + tx < size:
                        S_buf[ax * threads + tx] = A[bx * threads + ax * threads + tx]
                T.tvm_storage_sync("shared")
                B[bx * threads + tx] = S_buf[tx] + S_buf[tx + halo]
    return staged


@settings(max_examples=8, deadline=None)
@given(blocks=st.integers(1, 16), threads=st.sampled_from([32, 64, 128, 256]),
       halo=st.integers(1, 40))
def test_shared_array_size_and_thread_count_reach_the_ptx(blocks, threads, halo):
    ptx = ptx_source(_shared_kernel(blocks, threads, halo), "cuda")
    assert f".maxntid {threads}, 1, 1" in ptx
    assert f"S[{4 * (threads + halo)}]" in ptx
    assert "bar.sync" in ptx and "ld.shared" in ptx


def _fetch_kernel(offset: int):
    """A cooperative fetch of float4s into shared memory, ``offset`` elements into A."""
    @T.prim_func
    def fetch(A: T.Buffer((1028,), "float32"), B: T.Buffer((1024,), "float32")):
        T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            S = T.allocate([256], "float32", "shared")
            S_buf = T.decl_buffer((256,), "float32", data=S, scope="shared")
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                S_buf[T.Ramp(tx * 4, 1, 4)] = A[T.Ramp(bx * 256 + tx * 4 + offset, 1, 4)]
                T.tvm_storage_sync("shared")
                B[bx * 256 + tx] = S_buf[255 - tx]
    return fetch


def test_aligned_vector_fetch_is_one_v4_load_and_store():
    aligned = ptx_source(_fetch_kernel(0), "cuda")
    assert re.search(r"ld\.global(\.nc)?\.v4\.(b|f)32", aligned)
    assert re.search(r"st\.shared\.v4\.(b|f)32", aligned)
    shifted = ptx_source(_fetch_kernel(1), "cuda")
    assert not re.search(r"ld\.global(\.nc)?\.v4", shifted)


# -- course chapter 7's schedules, lowered by lower_gpu --------------------------------
def test_course_shared_matmul_ptx():
    from helpers import gpu_course_schedules as course
    ptx = ptx_source(course.lowered(course.matmul_shared()), "cuda")
    assert ".maxntid 64, 1, 1" in ptx
    assert re.search(r"ld\.global(\.nc)?\.v4\.(b|f)32", ptx)
    assert re.search(r"st\.shared\.v4\.(b|f)32", ptx)
    assert ptx.count("bar.sync") == 2
    assert "ld.local" not in ptx and "st.local" not in ptx   # C_local[64] is in registers


def test_course_local_matmul_ptx_keeps_its_tile_in_registers():
    from helpers import gpu_course_schedules as course
    ptx = ptx_source(course.lowered(course.matmul_local()), "nvidia/nvidia-a100")
    assert ".target sm_80" in ptx and ".maxntid 8, 8, 1" in ptx
    assert "%tid.y" in ptx and "%ctaid.y" in ptx
    assert "ld.local" not in ptx and "bar.sync" not in ptx
    assert len(re.findall(r"\bfma\.rn\.f32", ptx)) >= 64
