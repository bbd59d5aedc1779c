"""The exercises of notebooks/03_tensorir_in_action.ipynb: two transformations checked by
structural equality with a target program, and a fast schedule checked by its structure,
against numpy, and loosely by time. Reference solutions:
tests/notebooks/test_ch03_exercises.py."""
from nbformat.v4 import new_code_cell, new_markdown_cell

MD, CODE = new_markdown_cell, new_code_cell


def exercise_cell(source):
    """A code cell that tests/notebooks/ runs with the reference solutions."""
    return new_code_cell(source, metadata={"tags": ["exercise-setup"]})


SETUP_1 = '''import numpy as np
import mlcbench as tvm
from mlcbench.script import tir as T, ir as I
from mlcbench.runtime import timing


def _attempt(number, schedule_fn, mod):
    """The learner's schedule of ``mod``, or None when not attempted yet."""
    try:
        return schedule_fn(tvm.tir.Schedule(mod))
    except NotImplementedError:
        print(f"Exercise {number}: not attempted yet")
        return None


@I.ir_module
class BmmRelu:
    @T.prim_func
    def bmm_relu(A: T.Buffer((8, 64, 64), "float32"), B: T.Buffer((8, 64, 64), "float32"),
                 C: T.Buffer((8, 64, 64), "float32")):
        T.func_attr({"global_symbol": "bmm_relu", "tir.noalias": True})
        Y = T.alloc_buffer((8, 64, 64), "float32")
        for n, i, j, k in T.grid(8, 64, 64, 64):
            with T.block("Y"):
                vn, vi, vj, vk = T.axis.remap("SSSR", [n, i, j, k])
                with T.init():
                    Y[vn, vi, vj] = T.float32(0)
                Y[vn, vi, vj] = Y[vn, vi, vj] + A[vn, vi, vk] * B[vn, vk, vj]
        for n, i, j in T.grid(8, 64, 64):
            with T.block("C"):
                vn, vi, vj = T.axis.remap("SSS", [n, i, j])
                C[vn, vi, vj] = T.max(Y[vn, vi, vj], T.float32(0))
@I.ir_module
class Exercise1Target:
    @T.prim_func
    def bmm_relu(A: T.Buffer((8, 64, 64), "float32"), B: T.Buffer((8, 64, 64), "float32"), C: T.Buffer((8, 64, 64), "float32")):
        T.func_attr({"global_symbol": "bmm_relu", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        Y = T.alloc_buffer((8, 64, 64))
        for n in T.parallel(8):
            for i, j_0 in T.grid(64, 8):
                for j_1_init in T.vectorized(8):
                    with T.block("Y_init"):
                        vn, vi = T.axis.remap("SS", [n, i])
                        vj = T.axis.spatial(64, j_0 * 8 + j_1_init)
                        T.reads()
                        T.writes(Y[vn, vi, vj])
                        Y[vn, vi, vj] = T.float32(0)
                for k_0 in range(16):
                    for k_1 in T.unroll(4):
                        for j_1 in range(8):
                            with T.block("Y_update"):
                                vn, vi = T.axis.remap("SS", [n, i])
                                vj = T.axis.spatial(64, j_0 * 8 + j_1)
                                vk = T.axis.reduce(64, k_0 * 4 + k_1)
                                T.reads(Y[vn, vi, vj], A[vn, vi, vk], B[vn, vk, vj])
                                T.writes(Y[vn, vi, vj])
                                Y[vn, vi, vj] = Y[vn, vi, vj] + A[vn, vi, vk] * B[vn, vk, vj]
                for ax0 in T.vectorized(8):
                    with T.block("C"):
                        vn, vi = T.axis.remap("SS", [n, i])
                        vj = T.axis.spatial(64, j_0 * 8 + ax0)
                        T.reads(Y[vn, vi, vj])
                        T.writes(C[vn, vi, vj])
                        C[vn, vi, vj] = T.max(Y[vn, vi, vj], T.float32(0))


def check_exercise_1(schedule_fn):
    """True when schedule_fn turns BmmRelu into Exercise1Target; False when not tried."""
    sch = _attempt(1, schedule_fn, BmmRelu)
    if sch is None:
        return False
    tvm.ir.assert_structural_equal(sch.mod, Exercise1Target)
    print("Exercise 1: correct, the schedule gives Exercise1Target")
    return True'''

SETUP_2 = '''@I.ir_module
class MmBiasRelu:
    @T.prim_func
    def mm_bias_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                     bias: T.Buffer((128,), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_bias_relu", "tir.noalias": True})
        Y = T.alloc_buffer((128, 128), "float32")
        Z = T.alloc_buffer((128, 128), "float32")
        for i, j, k in T.grid(128, 128, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(128, 128):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + bias[vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Z[vi, vj], T.float32(0))
@I.ir_module
class Exercise2Target:
    @T.prim_func
    def mm_bias_relu(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"), bias: T.Buffer((128,), "float32"), C: T.Buffer((128, 128), "float32")):
        T.func_attr({"global_symbol": "mm_bias_relu", "tir.noalias": T.bool(True)})
        # with T.block("root"):
        Y = T.alloc_buffer((128, 128))
        for i, j_0 in T.grid(128, 8):
            for j_1_init in range(16):
                with T.block("Y_init"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j_0 * 16 + j_1_init)
                    T.reads()
                    T.writes(Y[vi, vj])
                    Y[vi, vj] = T.float32(0)
            for k, j_1 in T.grid(128, 16):
                with T.block("Y_update"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j_0 * 16 + j_1)
                    vk = T.axis.reduce(128, k)
                    T.reads(Y[vi, vj], A[vi, vk], B[vk, vj])
                    T.writes(Y[vi, vj])
                    Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
            for ax0 in range(16):
                with T.block("C"):
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j_0 * 16 + ax0)
                    T.reads(Y[vi, vj], bias[vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = T.max(Y[vi, vj] + bias[vj], T.float32(0))


def check_exercise_2(schedule_fn):
    """True when schedule_fn turns MmBiasRelu into Exercise2Target; False when not tried."""
    sch = _attempt(2, schedule_fn, MmBiasRelu)
    if sch is None:
        return False
    tvm.ir.assert_structural_equal(sch.mod, Exercise2Target)
    print("Exercise 2: correct, the schedule gives Exercise2Target")
    return True'''

SETUP_3 = '''@I.ir_module
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


def _matmul_runner(mod, a, b):
    """Build ``mod``, check it computes a @ b, and return a timer for it."""
    lib = tvm.build(mod, target="llvm")
    args = [tvm.nd.array(a), tvm.nd.array(b), tvm.nd.empty((256, 256), "float32")]
    lib["main"](*args)
    np.testing.assert_allclose(args[2].numpy(), a @ b, rtol=1e-4)
    return timing.kernel(lib, "main", *args)


def check_exercise_3(schedule_fn, min_speedup=3.0):
    """True when schedule_fn gives Matmul256 a parallel and a vectorized loop, the
    result equals A @ B, and it runs at least ``min_speedup`` times as fast as the
    unscheduled program (timed in the same interleaved rounds); False when not tried."""
    sch = _attempt(3, schedule_fn, Matmul256)
    if sch is None:
        return False
    text = sch.mod.script()
    for needle, what in [("T.parallel(", "parallel loop"), ("T.vectorized(", "vectorized loop")]:
        assert needle in text, f"the scheduled program has no {what}"
    rng = np.random.default_rng(3)
    a, b = rng.random((256, 256), dtype="float32"), rng.random((256, 256), dtype="float32")
    times = timing.compare({"yours": _matmul_runner(sch.mod, a, b),
                            "unscheduled": _matmul_runner(Matmul256, a, b),
                            "numpy": timing.call(lambda: a @ b)},
                           rounds=3, min_repeat_ms=20, settle_ms=50)
    print(times.describe("yours", "unscheduled"))
    print(times.describe("yours", "numpy"))
    speedup = times.speedup("yours", "unscheduled")
    assert speedup >= min_speedup, (
        f"your schedule ran {speedup:.1f}x as fast as the unscheduled program; aim for at "
        f"least {min_speedup}x (tiles of C in a local buffer reach 10x or more; if a "
        f"timing above is flagged unsteady, run the check again)")
    print("Exercise 3: correct, parallel, vectorized, and faster than the unscheduled program")
    return True'''

EXERCISE_CELLS = [
    MD("## Exercises\n\n"
       "Each exercise has a cell to fill in and a cell that checks your answer. Until "
       "you fill it in, the check says \"not attempted yet\"; a wrong answer raises an "
       "error that says what differs. For the first two, print the target and your "
       "`sch.mod` side by side as you go, and read the names of the loops in the target: "
       "they tell you which loop was split (`j_0`, `j_1`), which was created by "
       "`reverse_compute_at` (`ax0`) and which by `decompose_reduction` (`_init`). "
       "Reference solutions are in `tests/notebooks/test_ch03_exercises.py`."),
    exercise_cell(SETUP_1),
    MD("### Exercise 1: batched matmul with relu\n\n"
       "`BmmRelu` is the batched `mm_relu` of chapter 2's third exercise. Transform it "
       "into `Exercise1Target`: the batches in parallel, the columns in strips of 8 with "
       "the relu of each strip computed right after it (vectorized), `k` split by 4 "
       "with the inner part unrolled, and the initialization decomposed and "
       "vectorized."),
    CODE('''def schedule_exercise_1(sch: tvm.tir.Schedule) -> tvm.tir.Schedule:
    # your schedule here; return sch
    raise NotImplementedError


exercise_1_done = check_exercise_1(schedule_exercise_1)'''),
    exercise_cell(SETUP_2),
    MD("### Exercise 2: a linear layer, inlined\n\n"
       "`MmBiasRelu` adds a bias between the matmul and the relu, through a second "
       "intermediate buffer `Z`. Transform it into `Exercise2Target`, where `Z` is gone "
       "(the bias is added inside the relu's block), the columns are processed in "
       "strips of 16, and each strip's relu follows its matmul."),
    CODE('''def schedule_exercise_2(sch: tvm.tir.Schedule) -> tvm.tir.Schedule:
    # your schedule here; return sch
    raise NotImplementedError


exercise_2_done = check_exercise_2(schedule_exercise_2)'''),
    exercise_cell(SETUP_3),
    MD("### Exercise 3: a fast matmul\n\n"
       "Schedule `Matmul256` for speed with the primitives of this chapter. The check "
       "asks for a parallel loop and a vectorized loop, the right numbers, and at least "
       "3x the speed of the unscheduled program, timed in the same interleaved rounds "
       "(a loose bar on purpose: on a busy machine times move, and the structure and the "
       "numbers are what the check relies on). It also prints how you compare with numpy. "
       "Try tile sizes; the tiled matmul above is one starting point."),
    CODE('''def schedule_exercise_3(sch: tvm.tir.Schedule) -> tvm.tir.Schedule:
    # your schedule here; return sch
    raise NotImplementedError


exercise_3_done = check_exercise_3(schedule_exercise_3)'''),
]
