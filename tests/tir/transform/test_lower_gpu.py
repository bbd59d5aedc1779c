"""lower_gpu: course chapter 7's schedules in the GPU lowered form (kernels and launches)."""
from helpers import gpu_programs as G
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcbench.ir import CodegenError, assert_structural_equal
from mlcbench.script import tir as T
from mlcbench.target import Target
from mlcbench.tir import (Allocate, Call, Evaluate, For, ForKind, IfThenElse, Schedule, SeqStmt,
                          StringImm)
from mlcbench.tir.transform import lower_gpu
from mlcbench.tir.transform.thread_sync import is_sync


def _kernel(mod, name="main_kernel0"):
    return mod[name].without_attr("target")


def _launch_nest(kernel):
    """[(tag, extent, loop var name)] of the kernel's top nest, and the body inside it."""
    nest, body = [], kernel.body
    while (isinstance(body, For) and body.kind == ForKind.THREAD_BINDING) or (
            isinstance(body, Allocate) and body.buffer.scope == "shared"):
        if isinstance(body, For):
            nest.append((body.thread_binding.thread_tag, body.extent.value, body.loop_var.name))
        body = body.body
    return nest, body


def _all(stmt, kind):
    found = []
    from mlcbench.tir.functor import post_order_visit
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, kind) else None)
    return found


@T.prim_func
def _vec_add_kernel(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"),
                    C: T.Buffer((1024,), "float32")):
    T.func_attr({"calling_conv": "device_kernel", "global_symbol": "main_kernel0"})
    for i_0 in T.thread_binding(8, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            C[i_0 * 128 + i_1] = A[i_0 * 128 + i_1] + B[i_0 * 128 + i_1]


def test_vector_add_is_one_kernel_launched_by_the_host_function():
    target = Target("nvidia/nvidia-a100")
    lowered = lower_gpu(G.vec_add(), target)
    assert sorted(gv.name_hint for gv in lowered.functions) == ["main", "main_kernel0"]
    kernel = lowered["main_kernel0"]
    assert kernel.attrs["target"] == target
    assert_structural_equal(_kernel(lowered), _vec_add_kernel)
    host = lowered["main"]
    assert host.attrs["calling_conv"] == "host_launch" and host.attrs["global_symbol"] == "main"
    assert host.attrs["target"] == Target("llvm")
    assert host.params == kernel.params                  # the same Vars, in order
    assert host.buffer_map == kernel.buffer_map
    launch = host.body
    assert isinstance(launch, Evaluate) and isinstance(launch.value, Call)
    assert launch.value.op == "tir.launch_kernel" and launch.value.dtype == "int32"
    assert launch.value.args[0].value == "main_kernel0"
    assert launch.value.args[1:] == host.params


@T.prim_func
def _window_sum_kernel(A: T.Buffer((1027,), "float32"), B: T.Buffer((1024,), "float32")):
    T.func_attr({"calling_conv": "device_kernel", "global_symbol": "main_kernel0"})
    for i_0 in T.thread_binding(8, thread="blockIdx.x"):
        A_shared = T.allocate([130], "float32", "shared")
        A_shared_1 = T.Buffer((130,), data=A_shared, scope="shared")
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            for ax0_0 in range(2):
                if ax0_0 * 128 + i_1 < 130:
                    A_shared_1[ax0_0 * 128 + i_1] = A[i_0 * 128 + ax0_0 * 128 + i_1]
            T.tvm_storage_sync("shared")
            B[i_0 * 128 + i_1] = A_shared_1[i_1] + A_shared_1[i_1 + 1] + A_shared_1[i_1 + 2]


def test_window_sum_shares_one_copy_per_block_and_syncs_before_reading_it():
    # The cooperative fetch's threadIdx.x loop is the launch's: its var becomes i_1.
    # The shared copy covers every thread's window (relaxed over threadIdx.x) and no
    # more than the fetch's guard lets it reach (130, as TVM sizes it), one copy per
    # block, allocated between the blockIdx and threadIdx loops.
    assert_structural_equal(_kernel(lower_gpu(G.window_sum(), "cuda")), _window_sum_kernel)


@settings(max_examples=8, deadline=None)
@given(nthread=st.sampled_from([16, 32, 64, 100, 128, 256]))
def test_window_sum_with_any_thread_count(nthread):
    kernel = lower_gpu(G.window_sum(nthread), "cuda")["main_kernel0"]
    nest, _ = _launch_nest(kernel)
    assert nest == [("blockIdx.x", -(-1024 // nthread), "i_0"),
                    ("threadIdx.x", nthread, "i_1")]
    shared, = [a for a in _all(kernel.body, Allocate) if a.buffer.scope == "shared"]
    assert shared.buffer.shape[0].value == nthread + 2      # a window of 3 per thread
    a, b = np.random.rand(1027).astype("float32"), np.zeros(1024, "float32")
    G.run_kernel_in_phases(kernel, a, b)
    np.testing.assert_allclose(b, a[:-3] + a[1:-2] + a[2:-1], rtol=1e-6)


def test_matmul_local_blocking_keeps_one_accumulator_tile_per_thread():
    kernel = lower_gpu(G.matmul_local(), "cuda")["main_kernel0"]
    nest, body = _launch_nest(kernel)
    assert nest == [("blockIdx.x", 16, "j_0"), ("blockIdx.y", 16, "i_0"),
                    ("threadIdx.x", 8, "j_1"), ("threadIdx.y", 8, "i_1")]
    assert isinstance(body, Allocate) and body.buffer.scope == "local"
    assert body.buffer.name == "C_local" and body.buffer.shape[0].value == 64
    assert not [s for s in _all(kernel.body, Evaluate) if is_sync(s)]    # no shared memory
    assert all(f.kind == ForKind.SERIAL for f in _all(body, For))        # k_1 unrolled


@T.prim_func
def _matmul8(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
             C: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@settings(max_examples=8, deadline=None)
@given(local_y=st.sampled_from([1, 2]), local_x=st.sampled_from([1, 2]),
       block_y=st.sampled_from([1, 2, 4]), block_x=st.sampled_from([2, 4]),
       tile_k=st.sampled_from([1, 2, 8]))
def test_local_blocking_with_any_tiles(local_y, local_x, block_y, block_x, tile_k):
    sch = G.blocking(Schedule(_matmul8), local_y, local_x, block_y, block_x, tile_k)
    kernel = lower_gpu(sch.mod, "cuda")["main_kernel0"]
    nest, body = _launch_nest(kernel)
    assert [(tag, extent) for tag, extent, _ in nest] == [
        ("blockIdx.x", 8 // (block_x * local_x)), ("blockIdx.y", 8 // (block_y * local_y)),
        ("threadIdx.x", block_x), ("threadIdx.y", block_y)]
    assert isinstance(body, Allocate) and body.buffer.scope == "local"
    assert body.buffer.shape[0].value == local_y * local_x         # one tile per thread
    a, b = np.random.rand(8, 8).astype("float32"), np.random.rand(8, 8).astype("float32")
    c = np.zeros((8, 8), "float32")
    G.run_kernel_serially(kernel, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


@T.prim_func
def _matmul_shared_kernel(A: T.Buffer((1024, 1024), "float32"),
                          B: T.Buffer((1024, 1024), "float32"),
                          C: T.Buffer((1024, 1024), "float32")):
    T.func_attr({"calling_conv": "device_kernel", "global_symbol": "main_kernel0"})
    A_1 = T.Buffer((1048576,), data=A.data)
    B_1 = T.Buffer((1048576,), data=B.data)
    C_1 = T.Buffer((1048576,), data=C.data)
    for j_0 in T.thread_binding(16, thread="blockIdx.x"):
        for i_0 in T.thread_binding(16, thread="blockIdx.y"):
            A_shared = T.allocate([512], "float32", "shared")
            A_shared_1 = T.Buffer((512,), data=A_shared, scope="shared")
            B_shared = T.allocate([512], "float32", "shared")
            B_shared_1 = T.Buffer((512,), data=B_shared, scope="shared")
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                C_local = T.allocate([64], "float32", "local")
                C_local_1 = T.Buffer((64,), data=C_local, scope="local")
                for i_2_init, j_2_init in T.grid(8, 8):
                    C_local_1[i_2_init * 8 + j_2_init] = T.float32(0)
                for k_0 in range(128):
                    for f_0 in range(2):
                        A_shared_1[f_0 * 256 + tx * 4:f_0 * 256 + tx * 4 + 4] = A_1[
                            i_0 * 65536 + f_0 * 32768 + tx // 2 * 1024 + k_0 * 8 + tx % 2 * 4:
                            i_0 * 65536 + f_0 * 32768 + tx // 2 * 1024 + k_0 * 8 + tx % 2 * 4 + 4]
                    for f_0 in range(2):
                        B_shared_1[f_0 * 256 + tx * 4:f_0 * 256 + tx * 4 + 4] = B_1[
                            k_0 * 8192 + f_0 * 4096 + tx // 16 * 1024 + j_0 * 64 + tx % 16 * 4:
                            k_0 * 8192 + f_0 * 4096 + tx // 16 * 1024 + j_0 * 64 + tx % 16 * 4 + 4]
                    T.tvm_storage_sync("shared")
                    for k_1, i_2, j_2 in T.grid(8, 8, 8):
                        C_local_1[i_2 * 8 + j_2] = C_local_1[i_2 * 8 + j_2] + A_shared_1[
                            tx // 8 * 64 + i_2 * 8 + k_1] * B_shared_1[k_1 * 64 + tx % 8 * 8 + j_2]
                    T.tvm_storage_sync("shared")
                for ax0, ax1 in T.grid(8, 8):
                    C_1[i_0 * 65536 + tx // 8 * 8192 + ax0 * 1024 + j_0 * 64 + tx % 8 * 8 + ax1] = \
                        C_local_1[ax0 * 8 + ax1]


def test_matmul_shared_blocking_with_vectorized_cooperative_fetch():
    # Per k_0 step: a 64 x 8 tile of A and an 8 x 64 tile of B in shared memory, fetched
    # as float4 by the 64 threads, a barrier before the tiles are read and one before
    # the next step overwrites them.
    assert_structural_equal(_kernel(lower_gpu(G.matmul_shared(), "cuda")),
                            _matmul_shared_kernel)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 300), factor=st.integers(1, 64))
def test_vector_add_split_by_any_factor(n, factor):
    @T.prim_func
    def vec_add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
                C: T.Buffer((n,), "float32")):
        for i in range(n):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = A[vi] + B[vi]
    kernel = lower_gpu(G.vec_add(factor, vec_add), "cuda")["main_kernel0"]
    nest, body = _launch_nest(kernel)
    blocks = -(-n // factor)
    assert [(tag, extent) for tag, extent, _ in nest] == [("blockIdx.x", blocks),
                                                          ("threadIdx.x", factor)]
    assert isinstance(body, IfThenElse) == (n % factor != 0)    # the tail block's guard
    a, b = np.random.rand(n).astype("float32"), np.random.rand(n).astype("float32")
    c = np.zeros(n, "float32")
    G.run_kernel_serially(kernel, a, b, c)
    np.testing.assert_array_equal(c, a + b)


@T.prim_func
def _two_stages(A: T.Buffer((256,), "float32"), C: T.Buffer((256,), "float32")):
    B = T.alloc_buffer((256,))
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(256, bx * 64 + tx)
                B[vi] = A[vi] * T.float32(2)
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("C"):
                vi = T.axis.spatial(256, bx * 128 + tx)
                C[vi] = B[255 - vi] + T.float32(1)


def test_nests_in_sequence_are_kernels_passing_a_global_intermediate():
    lowered = lower_gpu(_two_stages, "cuda")
    host = lowered["main"]
    assert isinstance(host.body, Allocate) and host.body.buffer.scope == "global"
    intermediate = host.body.buffer
    assert intermediate.shape[0].value == 256            # relaxed over every thread
    launches = host.body.body
    assert isinstance(launches, SeqStmt)
    names = [s.value.args[0].value for s in launches.seq]
    assert all(isinstance(s.value.args[0], StringImm) for s in launches.seq)
    assert names == ["main_kernel0", "main_kernel1"]
    first, second = lowered["main_kernel0"], lowered["main_kernel1"]
    a_param, c_param = host.params
    assert first.params == (a_param, intermediate.data)
    assert second.params == (c_param, intermediate.data)
    assert [s.value.args[1:] for s in launches.seq] == [first.params, second.params]
    assert _launch_nest(second)[0] == [("blockIdx.x", 2, "bx"), ("threadIdx.x", 128, "tx")]
    a, c = np.random.rand(256).astype("float32"), np.zeros(256, "float32")
    b = np.zeros(256, "float32")
    G.run_kernel_serially(first, a, b)
    G.run_kernel_serially(second, c, b)
    np.testing.assert_allclose(c, a[::-1] * 2 + 1)


@T.prim_func
def _shorter_deeper_loop(A: T.Buffer((128,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            for v in T.thread_binding(2, thread="vthread"):
                for ty in T.thread_binding(4, thread="threadIdx.y"):
                    A[bx * 64 + tx] = T.float32(1)
                    for tx2 in T.thread_binding(32, thread="threadIdx.x"):
                        A[bx * 64 + tx2 * 2 + v] = A[bx * 64 + tx2 * 2 + v] + T.float32(1)


def test_deeper_loop_of_a_launched_tag_is_the_thread_index_guarded_when_shorter():
    kernel = lower_gpu(_shorter_deeper_loop, "cuda")["main_kernel0"]
    nest, body = _launch_nest(kernel)
    assert nest == [("blockIdx.x", 2, "bx"), ("threadIdx.x", 64, "tx"),
                    ("threadIdx.y", 4, "ty")]
    # The vthread is interleaved: the store without it runs once, the other one per vthread.
    assert isinstance(body, SeqStmt) and len(body.seq) == 2
    guard = body.seq[1]
    assert isinstance(guard, IfThenElse)
    assert str(guard.condition) == "tx < 32"
    assert len(guard.then_case.seq) == 2
    assert not [f for f in _all(body, For) if f.kind == ForKind.THREAD_BINDING]


@T.prim_func
def _outside_thread_loops(A: T.Buffer((64,), "float32")):
    A[0] = T.float32(0)
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        A[tx] = T.float32(1)


@T.prim_func
def _unbound(A: T.Buffer((64,), "float32")):
    for i in range(64):
        A[i] = T.float32(1)


@T.prim_func
def _longer_deeper(A: T.Buffer((64,), "float32")):
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        for tx2 in T.thread_binding(64, thread="threadIdx.x"):
            A[tx2] = T.float32(1)


@T.prim_func
def _block_extents_conflict(A: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            A[bx * 16 + tx] = T.float32(1)
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for bx2 in T.thread_binding(2, thread="blockIdx.x"):
            A[bx * 8 + bx2] = T.float32(2)


@T.prim_func
def _warp_scope(A: T.Buffer((64,), "float32")):
    W = T.alloc_buffer((64,), scope="warp")
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        with T.block("W"):
            vi = T.axis.spatial(64, tx)
            W[vi] = A[vi]
        with T.block("A"):
            vi = T.axis.spatial(64, tx)
            A[vi] = W[63 - vi]


@pytest.mark.parametrize("func,match", [
    (_warp_scope, r"main_kernel0: warp buffer 'W' is shared by the lanes of threadIdx.x, "
                  "whose extent 64 is not a power of two up to 32"),
    (_outside_thread_loops, r"main: statement `A\[0\] = T.float32\(0\)` runs outside every "
                            "thread-bound loop"),
    (_unbound, r"statement `for i in range\(64\):` runs outside every thread-bound loop"),
    (_longer_deeper, r"main_kernel0: loop 'tx2' bound to threadIdx.x has extent 64, longer "
                     r"than the launch extent 32 of loop 'tx'"),
    (_block_extents_conflict, r"main_kernel1: loop 'bx2' bound to blockIdx.x has extent 2, "
                              r"but the kernel launches 8 blocks .*extents conflict"),
])
def test_programs_a_gpu_cannot_launch_are_refused_naming_the_statement(func, match):
    with pytest.raises(CodegenError, match=match):
        lower_gpu(func, "cuda")


def test_only_gpu_targets_are_lowered_for_the_gpu():
    with pytest.raises(CodegenError, match="'llvm' is a llvm target; GPU lowering "
                                           "supports 'cuda'"):
        lower_gpu(G.vec_add(), "llvm")
    assert "main_kernel0" in lower_gpu(G.vec_add(), "opencl")
