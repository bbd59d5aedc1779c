"""The exercises of notebooks/07_gpu.ipynb: two GPU schedules checked by structural
equality with a target program (the second also run on the GPU against numpy), one
CPU schedule checked against numpy. Reference
solutions: tests/notebooks/test_ch07_exercises.py."""
from nbformat.v4 import new_code_cell, new_markdown_cell

MD, CODE = new_markdown_cell, new_code_cell


def exercise_cell(source):
    """A code cell that tests/notebooks/ runs with the reference solutions."""
    return new_code_cell(source, metadata={"tags": ["exercise-setup"]})


SETUP_1 = '''import numpy as np
import mlcbench as tvm
from mlcbench.script import tir as T, ir as I


@I.ir_module
class WindowSum5:
    @T.prim_func
    def main(A: T.Buffer((1028,), "float32"), B: T.Buffer((1024,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in range(1024):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + A[vi + 1] + A[vi + 2] + A[vi + 3] + A[vi + 4]


@I.ir_module
class Exercise1Target:
    @T.prim_func
    def main(A: T.Buffer((1028,), "float32"), B: T.Buffer((1024,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        A_shared = T.alloc_buffer((1028,), scope="shared")
        for i_0 in T.thread_binding(16, thread="blockIdx.x"):
            for i_1 in T.thread_binding(64, thread="threadIdx.x"):
                for ax0_0 in range(2):
                    for ax0_1 in T.thread_binding(64, thread="threadIdx.x"):
                        with T.block("A_shared"):
                            v0 = T.axis.spatial(1028, i_0 * 64 + (ax0_0 * 64 + ax0_1))
                            T.where(ax0_0 * 64 + ax0_1 < 68)
                            T.reads(A[v0])
                            T.writes(A_shared[v0])
                            A_shared[v0] = A[v0]
                with T.block("C"):
                    vi = T.axis.spatial(1024, i_0 * 64 + i_1)
                    T.reads(A_shared[vi:vi + 5])
                    T.writes(B[vi])
                    B[vi] = A_shared[vi] + A_shared[vi + 1] + A_shared[vi + 2] + A_shared[vi + 3] + A_shared[vi + 4]


def check_exercise_1(schedule_fn):
    """True when schedule_fn turns WindowSum5 into Exercise1Target; False when not tried."""
    try:
        sch = schedule_fn(tvm.tir.Schedule(WindowSum5))
    except NotImplementedError:
        print("Exercise 1: not attempted yet")
        return False
    tvm.ir.assert_structural_equal(sch.mod, Exercise1Target)
    print("Exercise 1: correct, the schedule gives Exercise1Target")
    return True'''

SETUP_2 = '''@I.ir_module
class Matmul256:
    @T.prim_func
    def main(A: T.Buffer((256, 256), "float32"), B: T.Buffer((256, 256), "float32"),
             C: T.Buffer((256, 256), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(256, 256, 256):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@I.ir_module
class Exercise2Target:
    @T.prim_func
    def main(A: T.Buffer((256, 256), "float32"), B: T.Buffer((256, 256), "float32"), C: T.Buffer((256, 256), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        C_local = T.alloc_buffer((256, 256), scope="local")
        B_shared = T.alloc_buffer((256, 256), scope="shared")
        for i_0 in T.thread_binding(8, thread="blockIdx.y"):
            for j_0 in T.thread_binding(8, thread="blockIdx.x"):
                for i_1 in T.thread_binding(8, thread="threadIdx.y"):
                    for j_1 in T.thread_binding(8, thread="threadIdx.x"):
                        for i_2_init, j_2_init in T.grid(4, 4):
                            with T.block("C_init"):
                                vi = T.axis.spatial(256, i_0 * 32 + i_1 * 4 + i_2_init)
                                vj = T.axis.spatial(256, j_0 * 32 + j_1 * 4 + j_2_init)
                                T.reads()
                                T.writes(C_local[vi, vj])
                                C_local[vi, vj] = T.float32(0)
                        for k_0 in range(32):
                            for ax0_ax1_fused_0 in range(4):
                                for ax0_ax1_fused_1 in T.thread_binding(8, thread="threadIdx.y"):
                                    for ax0_ax1_fused_2 in T.thread_binding(8, thread="threadIdx.x"):
                                        with T.block("B_shared"):
                                            v0 = T.axis.spatial(256, k_0 * 8 + (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 8 + ax0_ax1_fused_2) // 32)
                                            v1 = T.axis.spatial(256, j_0 * 32 + (ax0_ax1_fused_0 * 64 + ax0_ax1_fused_1 * 8 + ax0_ax1_fused_2) % 32)
                                            T.reads(B[v0, v1])
                                            T.writes(B_shared[v0, v1])
                                            B_shared[v0, v1] = B[v0, v1]
                            for k_1, i_2, j_2 in T.grid(8, 4, 4):
                                with T.block("C_update"):
                                    vi = T.axis.spatial(256, i_0 * 32 + i_1 * 4 + i_2)
                                    vj = T.axis.spatial(256, j_0 * 32 + j_1 * 4 + j_2)
                                    vk = T.axis.reduce(256, k_0 * 8 + k_1)
                                    T.reads(C_local[vi, vj], A[vi, vk], B_shared[vk, vj])
                                    T.writes(C_local[vi, vj])
                                    C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B_shared[vk, vj]
                        for ax0, ax1 in T.grid(4, 4):
                            with T.block("C_local"):
                                v0 = T.axis.spatial(256, i_0 * 32 + i_1 * 4 + ax0)
                                v1 = T.axis.spatial(256, j_0 * 32 + j_1 * 4 + ax1)
                                T.reads(C_local[v0, v1])
                                T.writes(C[v0, v1])
                                C[v0, v1] = C_local[v0, v1]


def check_exercise_2(schedule_fn):
    """True when schedule_fn turns Matmul256 into Exercise2Target; False when not tried."""
    try:
        sch = schedule_fn(tvm.tir.Schedule(Matmul256))
    except NotImplementedError:
        print("Exercise 2: not attempted yet")
        return False
    tvm.ir.assert_structural_equal(sch.mod, Exercise2Target)
    rng = np.random.default_rng(1)
    a, b = rng.random((256, 256), dtype="float32"), rng.random((256, 256), dtype="float32")
    dev = tvm.cuda(0)
    a_nd, b_nd = tvm.nd.array(a, dev), tvm.nd.array(b, dev)
    c_nd = tvm.nd.array(np.zeros((256, 256), "float32"), dev)
    seconds = tvm.build(sch.mod, target="cuda").time_evaluator("main", dev)(a_nd, b_nd, c_nd).mean
    np.testing.assert_allclose(c_nd.numpy(), a @ b, rtol=1e-4)
    print("Exercise 2: correct, the schedule gives Exercise2Target; on the GPU it computes "
          f"A @ B at {2 * 256 ** 3 / seconds / 1e9:.0f} GFLOPS (modeled)")
    return True'''

SETUP_3 = '''@I.ir_module
class Matmul128x256x512:
    @T.prim_func
    def main(A: T.Buffer((128, 256), "float32"), B: T.Buffer((256, 512), "float32"),
             C: T.Buffer((128, 512), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(128, 512, 256):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def check_exercise_3(schedule_fn):
    """True when schedule_fn blocks Matmul128x256x512 for the CPU (a local tile, a
    parallel loop, a vectorized loop) and the result equals A @ B; False when not tried."""
    try:
        sch = schedule_fn(tvm.tir.Schedule(Matmul128x256x512))
    except NotImplementedError:
        print("Exercise 3: not attempted yet")
        return False
    text = sch.mod.script()
    for needle, what in [('scope="local"', "local accumulator (cache_write)"),
                         ("T.parallel(", "parallel loop"),
                         ("T.vectorized(", "vectorized loop")]:
        assert needle in text, f"the scheduled program has no {what}"
    rng = np.random.default_rng(2)
    a = rng.random((128, 256), dtype="float32")
    b = rng.random((256, 512), dtype="float32")
    c = tvm.nd.empty((128, 512), "float32")
    tvm.build(sch.mod, target="llvm")["main"](tvm.nd.array(a), tvm.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)
    print("Exercise 3: correct, blocked for the CPU and equal to A @ B")
    return True'''

EXERCISE_CELLS = [
    MD("## Exercises\n\n"
       "Each exercise has a cell to fill in and a cell that checks your answer. Until "
       "you fill it in, the check says \"not attempted yet\"; a wrong answer raises an "
       "error that says what differs. Print the target program and compare it with "
       "`sch.mod.show()` as you go. Reference solutions are in "
       "`tests/notebooks/test_ch07_exercises.py`."),
    exercise_cell(SETUP_1),
    MD("### Exercise 1: a five-point window with smaller blocks\n\n"
       "`WindowSum5` sums five neighbours instead of three. Schedule it for blocks of "
       "64 threads, staging each block's inputs in shared memory with a cooperative "
       "fetch, so that the result is `Exercise1Target` above. How many values does a "
       "block copy, and why does the copy still need a `T.where`?"),
    CODE('''def schedule_exercise_1(sch: tvm.tir.Schedule) -> tvm.tir.Schedule:
    # your schedule here; return sch
    raise NotImplementedError


exercise_1_done = check_exercise_1(schedule_exercise_1)'''),
    exercise_cell(SETUP_2),
    MD("### Exercise 2: two-dimensional threads, B in shared memory\n\n"
       "Schedule `Matmul256` into `Exercise2Target`: local blocking with 4 x 4 tiles per "
       "thread, 8 x 8 threads per block bound to `threadIdx.y` and `threadIdx.x` (not "
       "fused), `k` in steps of 8, and only `B` staged in shared memory at the `k_0` "
       "loop, fetched cooperatively by the two-dimensional threads (the copy loop "
       "bound to both `threadIdx.y` and `threadIdx.x`, no vectorization). `A` is read "
       "straight from global memory: each of its values is used by only the 8 threads "
       "of one row of the block."),
    CODE('''def schedule_exercise_2(sch: tvm.tir.Schedule) -> tvm.tir.Schedule:
    # your schedule here; return sch
    raise NotImplementedError


exercise_2_done = check_exercise_2(schedule_exercise_2)'''),
    exercise_cell(SETUP_3),
    MD("### Exercise 3: CPU blocking of a rectangular matmul\n\n"
       "`Matmul128x256x512` multiplies a 128 x 256 matrix by a 256 x 512 one. Block it "
       "for the CPU as the chapter did for the square matmul: tiles of `C` accumulated "
       "in a `local` buffer, the tile loops in parallel, the tile's columns vectorized. "
       "The tile shape is up to you (it must divide 128 and 512); time your schedule "
       "against numpy with `timing.compare` and try a few."),
    CODE('''def schedule_exercise_3(sch: tvm.tir.Schedule) -> tvm.tir.Schedule:
    # your schedule here; return sch
    raise NotImplementedError


exercise_3_done = check_exercise_3(schedule_exercise_3)'''),
]
