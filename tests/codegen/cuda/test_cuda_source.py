"""CUDA C printed from device kernels of the GPU lowered form (mlcbench.codegen.cuda).

Kernels are written directly in the lowered form. Structural checks compare expected
lines; the printed text is also compiled as C++ (a few lines stand in for the CUDA
built-ins: one POSIX thread per GPU thread, a pthread barrier for __syncthreads) and
run against numpy, which checks that it computes what the kernel computes.
"""
import ctypes
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers.gpu_programs import global_in_kernel, vthread_left, window_sum_kernel as window_sum
from mlcbench.codegen.cuda import cuda_source, opencl_source
from mlcbench.ir import IRModule
from mlcbench.ir.errors import CodegenError, InvalidTypeError
from mlcbench.script import tir as T


@T.prim_func
def vector_add(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"),
               C: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            C[bx * 128 + tx] = A[bx * 128 + tx] + B[bx * 128 + tx]


@T.prim_func
def matmul_local(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32"),
                 C: T.Buffer((4096,), "float32")):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    for by in T.thread_binding(2, thread="blockIdx.y"):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for ty in T.thread_binding(8, thread="threadIdx.y"):
                for tx in T.thread_binding(8, thread="threadIdx.x"):
                    C_local = T.allocate([16], "float32", "local")
                    C_local_buf = T.decl_buffer((16,), "float32", data=C_local, scope="local")
                    for i, j in T.grid(4, 4):
                        C_local_buf[i * 4 + j] = T.float32(0)
                    for k in range(64):
                        for i, j in T.grid(4, 4):
                            C_local_buf[i * 4 + j] = C_local_buf[i * 4 + j] + \
                                A[by * 2048 + ty * 256 + i * 64 + k] * \
                                B[k * 64 + bx * 32 + tx * 4 + j]
                    for i, j in T.grid(4, 4):
                        C[by * 2048 + ty * 256 + i * 64 + bx * 32 + tx * 4 + j] = \
                            C_local_buf[i * 4 + j]


@T.prim_func
def vector_copy(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            B[T.Ramp(bx * 256 + tx * 4, 1, 4)] = A[T.Ramp(bx * 256 + tx * 4, 1, 4)]


@T.prim_func
def scalar_ops(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"),
               N: T.Buffer((256,), "int32")):
    T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    for tx in T.thread_binding(256, thread="threadIdx.x"):
        B[tx] = T.exp(A[tx]) + T.max(A[tx], T.float32(0)) + T.Select(tx < 128, A[tx], T.float32(1))
        N[tx] = T.Cast("int32", A[tx]) + tx // 4 + tx % 8 + (tx - 100) // 3 + (tx - 100) % 3


def test_vector_add_prints_thread_indices_and_launch_bounds():
    lines = cuda_source(vector_add).splitlines()
    assert lines[0] == ('extern "C" __global__ void __launch_bounds__(128) main_kernel0('
                        'float* __restrict__ A, float* __restrict__ B, float* __restrict__ C) {')
    assert lines[1] == ("  C[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))] = "
                        "(A[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))] + "
                        "B[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))]);")
    assert lines[2:] == ["}"]


def test_window_sum_declares_shared_memory_and_syncs():
    lines = [line.strip() for line in cuda_source(window_sum).splitlines()]
    assert lines[1] == "__shared__ float A_shared[130];"
    assert lines[2] == "for (int ax0 = 0; ax0 < 2; ++ax0) {"
    assert lines[3] == "if (((ax0 * 128) + ((int)threadIdx.x)) < 130) {"
    assert lines.index("__syncthreads();") > lines.index(
        "A_shared[((ax0 * 128) + ((int)threadIdx.x))] = "
        "A[(((((int)blockIdx.x) * 128) + (ax0 * 128)) + ((int)threadIdx.x))];")


def test_matmul_local_is_a_per_thread_array_with_two_thread_axes():
    text = cuda_source(matmul_local)
    assert "__launch_bounds__(64)" in text
    assert "\n  float C_local[16];\n" in text
    assert "((int)threadIdx.y)" in text and "((int)blockIdx.y)" in text
    assert "C_local[((i * 4) + j)] = 0.0f;" in text


def test_aligned_vector_copy_is_one_float4_statement():
    body = cuda_source(vector_copy).splitlines()[1:-1]
    assert body == ["  *(float4*)(B + ((((int)blockIdx.x) * 256) + (((int)threadIdx.x) * 4))) = "
                    "*(float4*)(A + ((((int)blockIdx.x) * 256) + (((int)threadIdx.x) * 4)));"]


def test_intrinsics_selects_casts_and_floor_division():
    text = cuda_source(scalar_ops)
    assert "expf(A[((int)threadIdx.x)])" in text
    assert "fmaxf(A[((int)threadIdx.x)], 0.0f)" in text
    assert "((((int)threadIdx.x) < 128) ? A[((int)threadIdx.x)] : 1.0f)" in text
    assert "((int)A[((int)threadIdx.x)])" in text
    assert "(((int)threadIdx.x) >> 2)" in text and "(((int)threadIdx.x) & 7)" in text


def test_opencl_spells_the_same_kernel_with_its_own_builtins():
    text = opencl_source(window_sum)
    assert text.startswith("__kernel __attribute__((reqd_work_group_size(128, 1, 1))) void "
                           "main_kernel0(__global float* restrict A, __global float* restrict B)")
    assert "__local float A_shared[130];" in text
    assert "barrier(CLK_LOCAL_MEM_FENCE);" in text
    assert "((int)get_group_id(0))" in text and "((int)get_local_id(0))" in text


def test_module_prints_only_device_kernels_in_module_order():
    second = vector_add.with_attr("global_symbol", "main_kernel1")
    host = vector_add.with_attr("calling_conv", "host_launch").with_attr("global_symbol", "main")
    mod = IRModule({"main": host, "main_kernel0": window_sum, "main_kernel1": second})
    text = cuda_source(mod)
    assert text.count("__global__") == 2
    assert text.index("main_kernel0(") < text.index("main_kernel1(")


def test_errors_name_what_is_wrong():
    with pytest.raises(CodegenError, match="no device kernels.*lower_gpu"):
        cuda_source(IRModule({"main": vector_add.with_attr("calling_conv", "host_launch")}))
    with pytest.raises(InvalidTypeError, match="GPU-lowered IRModule"):
        cuda_source("main")
    with pytest.raises(CodegenError, match="'A_global' has storage scope 'global'"):
        cuda_source(global_in_kernel)
    with pytest.raises(CodegenError, match="thread tag 'vthread'"):
        cuda_source(vthread_left)


# -- the printed text runs as C++: one std::thread per GPU thread -----------------------
_PRELUDE = r"""
#include <math.h>
#include <pthread.h>
template <typename T> static T min(T a, T b) { return a < b ? a : b; }
template <typename T> static T max(T a, T b) { return a > b ? a : b; }
struct dim3_ { int x, y, z; };
static dim3_ blockIdx;
static thread_local dim3_ threadIdx;
static pthread_barrier_t block_barrier;
static void __syncthreads() { pthread_barrier_wait(&block_barrier); }
#define __global__
#define __shared__ static
#define __restrict__ __restrict
#define __launch_bounds__(n)
#define __align__(n) __attribute__((aligned(n)))
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
static float2 make_float2(float a, float b) { return {a, b}; }
static float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
"""
_LAUNCH = r"""
static void** kernel_args;
static int block_x, block_y;
static void* run_thread(void* t) {
  long id = (long)t;
  threadIdx = {int(id % block_x), int((id / block_x) % block_y), int(id / (block_x * block_y))};
  KERNEL(ARGS);
  return 0;
}
// Blocks run one after another (so a static array is one block's shared memory);
// the threads of a block run at once and meet at __syncthreads().
extern "C" void launch(int gx, int gy, int gz, int tx, int ty, int tz, void** args) {
  long threads = tx * ty * tz;
  pthread_t team[1024];
  kernel_args = args, block_x = tx, block_y = ty;
  for (int z = 0; z < gz; ++z) for (int y = 0; y < gy; ++y) for (int x = 0; x < gx; ++x) {
    blockIdx = {x, y, z};
    pthread_barrier_init(&block_barrier, 0, threads);
    for (long t = 0; t < threads; ++t) pthread_create(&team[t], 0, run_thread, (void*)t);
    for (long t = 0; t < threads; ++t) pthread_join(team[t], 0);
    pthread_barrier_destroy(&block_barrier);
  }
}
"""
_C_POINTERS = {"float32": "float*", "int32": "int*"}


def run_as_cpp(source: str, tmp_path, grid: tuple, block: tuple, *arrays,
               kernel: str = "main_kernel0"):
    """Compile ``source`` with g++ and launch ``kernel`` on ``grid`` x ``block`` threads."""
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed: the printed CUDA cannot be run as C++")
    tmp_path.mkdir(parents=True, exist_ok=True)
    args = ", ".join(f"({_C_POINTERS[str(a.dtype)]})kernel_args[{k}]"
                     for k, a in enumerate(arrays))
    launch = _LAUNCH.replace("KERNEL(ARGS)", f"{kernel}({args})")
    (tmp_path / "k.cpp").write_text(_PRELUDE + source + launch)
    subprocess.run(["g++", "-O1", "-pthread", "-shared", "-fPIC", "-o",
                    str(tmp_path / "k.so"), str(tmp_path / "k.cpp")],
                   check=True, capture_output=True)
    lib = ctypes.CDLL(str(tmp_path / "k.so"))
    pointers = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
    lib.launch(*grid, *block, pointers)


def test_printed_window_sum_with_shared_memory_and_barrier(tmp_path):
    a = np.random.rand(1027).astype("float32")
    b = np.zeros(1024, "float32")
    run_as_cpp(cuda_source(window_sum), tmp_path, (8, 1, 1), (128, 1, 1), a, b)
    np.testing.assert_allclose(b, a[:1024] + a[1:1025] + a[2:1026], rtol=1e-6)


def test_printed_vector_add_and_float4_copy_compute_the_kernel(tmp_path):
    a, b = np.random.rand(1024).astype("float32"), np.random.rand(1024).astype("float32")
    c = np.zeros(1024, "float32")
    run_as_cpp(cuda_source(vector_add), tmp_path / "add", (8, 1, 1), (128, 1, 1), a, b, c)
    np.testing.assert_allclose(c, a + b)
    out = np.zeros(1024, "float32")
    run_as_cpp(cuda_source(vector_copy), tmp_path / "copy", (4, 1, 1), (64, 1, 1), a, out)
    np.testing.assert_array_equal(out, a)


def test_printed_local_blocked_matmul_computes_the_kernel(tmp_path):
    a, b = np.random.rand(64, 64).astype("float32"), np.random.rand(64, 64).astype("float32")
    c = np.zeros((64, 64), "float32")
    run_as_cpp(cuda_source(matmul_local), tmp_path, (2, 2, 1), (8, 8, 1), a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_printed_floor_division_of_negative_numbers(tmp_path):
    a = np.linspace(-3, 3, 256).astype("float32")
    out, ints = np.zeros(256, "float32"), np.zeros(256, "int32")
    run_as_cpp(cuda_source(scalar_ops), tmp_path, (1, 1, 1), (256, 1, 1), a, out, ints)
    tx = np.arange(256)
    expected = a.astype("int32") + tx // 4 + tx % 8 + (tx - 100) // 3 + (tx - 100) % 3
    np.testing.assert_array_equal(ints, expected)


# -- extents and offsets vary ---------------------------------------------------------
def _copy_kernel(blocks: int, threads: int, offset: int, lanes: int):
    @T.prim_func
    def copy(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
        T.func_attr({"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
        for bx in T.thread_binding(blocks, thread="blockIdx.x"):
            for tx in T.thread_binding(threads, thread="threadIdx.x"):
                B[T.Ramp((bx * threads + tx) * lanes, 1, lanes)] = \
                    A[T.Ramp((bx * threads + tx) * lanes + offset, 1, lanes)]
    return copy


@settings(max_examples=20, deadline=None)
@given(blocks=st.integers(1, 8), threads=st.sampled_from([32, 64, 96, 128]),
       offset=st.integers(0, 7), lanes=st.sampled_from([2, 4]))
def test_float4_only_where_aligned_and_launch_bounds_follow_the_block(blocks, threads,
                                                                      offset, lanes):
    text = cuda_source(_copy_kernel(blocks, threads, offset, lanes))
    assert f"__launch_bounds__({threads})" in text
    load = f"*(float{lanes}*)(A + "
    assert (load in text) == (offset % lanes == 0)
    assert f"*(float{lanes}*)(B + " in text
    if offset % lanes:
        assert text.count(f"make_float{lanes}(A[") == 1


# -- course chapter 7's schedules, lowered by lower_gpu --------------------------------
def test_course_window_sum_prints_as_the_course_shows_it():
    from helpers import gpu_course_schedules as course
    text = cuda_source(course.lowered(course.window_sum()))
    lines = [line.strip() for line in text.splitlines()]
    assert lines[0].startswith('extern "C" __global__ void __launch_bounds__(128) main_kernel0(')
    assert lines[1].startswith("__shared__ float A_shared[")
    assert "if (((ax0_0 * 128) + ((int)threadIdx.x)) < 130) {" in lines
    assert "__syncthreads();" in lines
    assert lines[-2] == ("C[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))] = "
                         "((A_shared[((int)threadIdx.x)] + A_shared[(((int)threadIdx.x) + 1)]) "
                         "+ A_shared[(((int)threadIdx.x) + 2)]);")


def test_course_shared_matmul_fetches_float4_between_barriers():
    from helpers import gpu_course_schedules as course
    text = cuda_source(course.lowered(course.matmul_shared()))
    assert "__launch_bounds__(64)" in text and "float C_local[64];" in text
    assert "__shared__ __align__(16) float A_shared[512];" in text
    assert ("*(float4*)(A_shared + ((ax0_ax1_fused_0 * 256) + (((int)threadIdx.x) * 4))) = "
            "*(float4*)(A + (((((((int)blockIdx.y) * 65536) + (ax0_ax1_fused_0 * 32768)) + "
            "((((int)threadIdx.x) >> 1) * 1024)) + (k_0 * 8)) + "
            "((((int)threadIdx.x) & 1) * 4)));") in text
    assert text.count("__syncthreads();") == 2


@pytest.mark.parametrize("schedule,grid,block", [("vector_add", (1, 1, 1), (128, 1, 1)),
                                                 ("window_sum", (1, 1, 1), (128, 1, 1)),
                                                 ("matmul_local", (2, 2, 1), (8, 8, 1)),
                                                 ("matmul_shared", (2, 2, 1), (64, 1, 1))])
def test_printed_course_kernels_compute_their_programs(schedule, grid, block, tmp_path):
    from helpers import gpu_course_schedules as course
    rng = np.random.default_rng(0)
    if schedule.startswith("matmul"):
        a, b = rng.random((128, 128), "float32"), rng.random((128, 128), "float32")
        arrays, expected = (a, b, np.zeros((128, 128), "float32")), a @ b
        mod = getattr(course, schedule)(128)
    elif schedule == "window_sum":
        a = rng.random(131, "float32")
        arrays, expected = (a, np.zeros(128, "float32")), a[:128] + a[1:129] + a[2:130]
        mod = course.window_sum(128)
    else:
        a, b = rng.random(128, "float32"), rng.random(128, "float32")
        arrays, expected = (a, b, np.zeros(128, "float32")), a + b
        mod = course.vector_add(128)
    run_as_cpp(cuda_source(course.lowered(mod)), tmp_path, grid, block, *arrays)
    np.testing.assert_allclose(arrays[-1], expected, rtol=1e-5)


def test_let_becomes_a_local_and_names_avoid_c_keywords():
    from mlcbench.tir import expr as E
    from mlcbench.tir.function import PrimFunc
    from mlcbench.tir.stmt import BufferStore, For, ForKind
    from mlcbench.tir import Buffer
    A = Buffer("A", (128,), "float32")
    tx, square = E.Var("int", "int32"), E.Var("x", "float32")
    load = E.BufferLoad(A, (tx,))
    body = BufferStore(A, E.Let(square, load * load, square + square), (tx,))
    loop = For(tx, E.const(0), E.const(128), ForKind.SERIAL, body)
    handle = E.Var("A_handle", "handle")
    func = PrimFunc((handle,), loop, buffer_map={handle: A},
                    attrs={"global_symbol": "main_kernel0", "calling_conv": "device_kernel"})
    lines = [line.strip() for line in cuda_source(func).splitlines()]
    assert lines[1] == "for (int int_1 = 0; int_1 < 128; ++int_1) {"
    assert lines[2] == "float x = (A_handle[int_1] * A_handle[int_1]);"
    assert lines[3] == "A_handle[int_1] = (x + x);"
    guarded = E.Call("float32", "tir.if_then_else", (tx < 64, E.Let(square, load, square),
                                                     E.const(0.0, "float32")))
    bad = func.with_body(For(tx, E.const(0), E.const(128), ForKind.SERIAL,
                             BufferStore(A, guarded, (tx,))))
    with pytest.raises(CodegenError, match="Let inside a branch of if_then_else"):
        cuda_source(bad)
