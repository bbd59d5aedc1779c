"""VerifyGPUCode: kernels over the target's launch limits are refused, naming what and why."""
from helpers import gpu_programs as G
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcbench.ir import CodegenError
from mlcbench.script import tir as T
from mlcbench.target import Target
from mlcbench.tir import Schedule
from mlcbench.tir.transform import GPULimitError, gpu_limit_problems, lower_gpu, verify_gpu_code


@pytest.mark.parametrize("program", [G.vec_add, G.window_sum, G.matmul_local, G.matmul_shared])
def test_course_kernels_fit_every_tag(program):
    lowered = lower_gpu(program(), "cuda")
    for tag in ("nvidia/nvidia-t4", "nvidia/nvidia-a100", "nvidia/nvidia-h100"):
        assert gpu_limit_problems(lowered["main_kernel0"], Target(tag)) == []
        assert verify_gpu_code(lowered["main_kernel0"], Target(tag))


def test_too_many_threads_per_block_names_the_loop_and_the_limit():
    assert issubclass(GPULimitError, CodegenError)
    with pytest.raises(GPULimitError, match=r"main_kernel0: 2048 threads per block \(loops "
                                            r"'i_1' \(threadIdx.x, 2048\)\) exceed "
                                            r"max_threads_per_block = 1024 of target 'cuda'"):
        lower_gpu(G.vec_add(2048), "cuda")


@settings(max_examples=15, deadline=None)
@given(limit=st.sampled_from([32, 64, 128, 256, 512]), factor=st.sampled_from([32, 64, 128,
                                                                                256, 512, 1024]))
def test_the_thread_limit_is_the_targets(limit, factor):
    target = Target(f"cuda -max_threads_per_block={limit}")
    if factor <= limit:
        lower_gpu(G.vec_add(factor), target)
    else:
        with pytest.raises(GPULimitError, match=f"{factor} threads per block .* "
                                                f"max_threads_per_block = {limit}"):
            lower_gpu(G.vec_add(factor), target)


def _matmul_shared(tile_block, tile_k):
    sch = Schedule(G.Matmul)
    return G.blocking_with_shared(sch, 4, 4, tile_block, tile_block, tile_k).mod


def test_too_much_shared_memory_names_the_buffers_and_the_limit():
    # 16 x 16 threads with 4 x 4 tiles: 64 x 64 outputs a block; tile_k = 64 makes A
    # and B tiles of 64 x 64 floats, 16 KiB each = 32 KiB (fits 48 KiB); 128 makes 64 KiB.
    lower_gpu(_matmul_shared(16, 64), "cuda")
    with pytest.raises(GPULimitError, match=r"65536 bytes of shared memory per block "
                                            r"\('A_shared' 32768 bytes, 'B_shared' 32768 "
                                            r"bytes\) exceed max_shared_memory_per_block = "
                                            r"49152 of target 'nvidia/nvidia-h100'"):
        lower_gpu(_matmul_shared(16, 128), "nvidia/nvidia-h100")


def test_a_vector_wider_than_16_bytes_is_refused():
    sch = Schedule(G.VecAdd)
    i, = sch.get_loops(sch.get_block("C"))
    bx, tx, vec = sch.split(i, [None, 64, 8])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    sch.vectorize(vec)
    with pytest.raises(GPULimitError, match=r"a float32x8 (store to|load of) buffer '[ABC]' "
                                            r"moves 32 bytes at once, more than "
                                            r"max_vector_bytes = 16 .*4 lanes or fewer"):
        lower_gpu(sch.mod, "cuda")


@T.prim_func
def _big_local(A: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "k", "calling_conv": "device_kernel"})
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        L = T.allocate([140000], "float32", "local")
        L_1 = T.Buffer((140000,), data=L, scope="local")
        L_1[tx] = A[tx]
        A[tx] = L_1[tx]


@T.prim_func
def _deep_z(A: T.Buffer((128,), "float32")):
    T.func_attr({"global_symbol": "k", "calling_conv": "device_kernel"})
    for bz in T.thread_binding(70000, thread="blockIdx.z"):
        for tz in T.thread_binding(128, thread="threadIdx.z"):
            A[tz] = T.float32(1)


def test_local_memory_grid_and_block_dimension_limits():
    problems = gpu_limit_problems(_big_local, Target("cuda"))
    assert problems[0] == ("k: 560000 bytes of local memory per thread ('L' 560000 bytes) "
                           "exceed max_local_memory_per_thread = 524288 of target 'cuda'; "
                           "use smaller tiles")
    assert len(problems) == 2 and "estimated 140016 registers" in problems[1]
    problems = gpu_limit_problems(_deep_z, Target("cuda"))
    assert problems == [
        "k: loop 'tz' launches 128 threads along threadIdx.z, more than max_thread_z = 64 "
        "of target 'cuda'",
        "k: loop 'bz' launches 70000 blocks along blockIdx.z, more than CUDA's 65535"]


def _local_tile(threads: int, words: int):
    @T.prim_func
    def kernel(A: T.Buffer((1024,), "float32")):
        T.func_attr({"global_symbol": "k", "calling_conv": "device_kernel"})
        for tx in T.thread_binding(threads, thread="threadIdx.x"):
            acc = T.allocate([words], "float32", "local")
            acc_1 = T.Buffer((words,), data=acc, scope="local")
            for i in range(words):
                acc_1[i] = A[tx]
            A[tx] = acc_1[words - 1]
    return kernel


@pytest.mark.parametrize("threads, words, allowed", [(1024, 48, None), (1024, 49, 64),
                                                     (256, 239, None), (256, 240, 255),
                                                     (512, 120, 128)])
def test_registers_are_estimated_from_local_words_against_the_per_thread_and_block_limits(
        threads, words, allowed):
    problems = gpu_limit_problems(_local_tile(threads, words), Target("cuda"))
    if allowed is None:
        assert problems == []
        return
    assert problems == [
        f"k: an estimated {16 + words} registers per thread (16 + the words of local buffers "
        f"'acc' {words}) exceed the {allowed} a thread may have: max_registers_per_thread = "
        f"255, registers_per_block = 65536 over {threads} threads per block (loops 'tx' "
        f"(threadIdx.x, {threads})) of target 'cuda'; use smaller local tiles or fewer "
        "threads"]


def test_the_register_limit_is_the_targets_and_lowering_raises_it():
    target = Target("cuda -registers_per_block=32768")
    assert gpu_limit_problems(_local_tile(512, 48), Target("cuda")) == []
    with pytest.raises(GPULimitError, match=r"estimated 65 registers .* exceed the 64 .*"
                                            r"registers_per_block = 32768 over 512 threads"):
        lower_gpu(_local_tile(512, 49), target)


@T.prim_func
def _unlowered_warp(A: T.Buffer((32,), "float32")):
    T.func_attr({"global_symbol": "k", "calling_conv": "device_kernel"})
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        W = T.allocate([32], "float32", "warp")
        W_1 = T.Buffer((32,), data=W, scope="warp")
        W_1[tx] = A[tx]
        A[tx] = W_1[31 - tx]


def test_a_warp_buffer_left_unlowered_is_refused_by_name():
    assert gpu_limit_problems(_unlowered_warp, Target("cuda")) == [
        "k: buffer 'W' of scope 'warp' is not lowered; lower the kernel with lower_gpu "
        "(LowerWarpMemory)"]
