"""The course's mm_relu schedule: split, reorder, reverse_compute_at, decompose_reduction."""
import numpy as np

from mlcbench.driver.kernels import MM_RELU
from mlcbench.script import from_source
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_numeric, check_trace_roundtrip, mm_relu_decomposed
from mlcbench.ir import assert_structural_equal


MyModule = from_source(MM_RELU)


def test_mm_relu_course_schedule():
    sch = Schedule(MyModule)
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    block_C = sch.get_block("C", "mm_relu")
    sch.reverse_compute_at(block_C, j0)
    sch.decompose_reduction(block_Y, k)
    assert_structural_equal(sch.mod["mm_relu"], mm_relu_decomposed)
    check_trace_roundtrip(MyModule, sch, "mm_relu")
    check_numeric(sch.mod["mm_relu"], lambda a, b, c: np.maximum(a @ b, 0), name="mm_relu")
    assert str(sch.trace).splitlines()[-1] == "  b7 = sch.decompose_reduction(block=b0, loop=l3)"
