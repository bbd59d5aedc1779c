from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_after, check_numeric, check_refused, make_row_sum


row_sum = make_row_sum(16, 4)


@T.prim_func
def row_sum_unrolled(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        for k in T.unroll(4):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


def test_unroll_reduction_loop_is_allowed():
    sch = Schedule(row_sum)
    _, k = sch.get_loops("B")
    sch.unroll(k)
    check_after(row_sum, sch, row_sum_unrolled)
    check_numeric(sch.mod["main"], lambda a, b: a.sum(axis=1))


def test_unroll_refuses_foreign_handle():
    sch = Schedule(row_sum)
    other = Schedule(row_sum)
    _, k = other.get_loops("B")
    check_refused(sch, lambda s: s.unroll(k), "expected a loop handle of this schedule")
