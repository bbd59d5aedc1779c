"""The course's mm_relu schedule: split, reorder, reverse_compute_at, decompose_reduction."""
import numpy as np

from mlcbench.driver.kernels import MM_RELU
from mlcbench.script import from_source, tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_numeric, check_trace_roundtrip
from mlcbench.ir import assert_structural_equal


MyModule = from_source(MM_RELU)


@T.prim_func
def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
             C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((128, 128))
    for i, j_0 in T.grid(128, 32):
        for j_1_init in range(4):
            with T.block("Y_init"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + j_1_init)
                T.reads()
                T.writes(Y[vi, vj])
                Y[vi, vj] = T.float32(0)
        for k, j_1 in T.grid(128, 4):
            with T.block("Y_update"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + j_1)
                vk = T.axis.reduce(128, k)
                T.reads(Y[vi, vj], A[vi, vk], B[vk, vj])
                T.writes(Y[vi, vj])
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + ax0)
                T.reads(Y[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))


def test_mm_relu_course_schedule():
    sch = Schedule(MyModule)
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    block_C = sch.get_block("C", "mm_relu")
    sch.reverse_compute_at(block_C, j0)
    sch.decompose_reduction(block_Y, k)
    assert_structural_equal(sch.mod["mm_relu"], expected)
    check_trace_roundtrip(MyModule, sch, "mm_relu")
    check_numeric(sch.mod["mm_relu"], lambda a, b, c: np.maximum(a @ b, 0), name="mm_relu")
    assert str(sch.trace).splitlines()[-1] == "  b7 = sch.decompose_reduction(block=b0, loop=l3)"
