from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_after, check_refused, make_row_sum


row_sum = make_row_sum(64, 32)


@T.prim_func
def row_sum_bound(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64,), "float32")):
    for i_0 in T.thread_binding(2, thread="blockIdx.x"):
        for i_1 in T.thread_binding(32, thread="threadIdx.x"):
            for k in range(32):
                with T.block("B"):
                    vi = T.axis.spatial(64, i_0 * 32 + i_1)
                    vk = T.axis.reduce(32, k)
                    T.reads(A[vi, vk])
                    T.writes(B[vi])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]


def test_bind_blocks_and_threads():
    sch = Schedule(row_sum)
    i, _ = sch.get_loops("B")
    i_0, i_1 = sch.split(i, factors=[None, 32])
    sch.bind(i_0, "blockIdx.x")
    sch.bind(i_1, "threadIdx.x")
    check_after(row_sum, sch, row_sum_bound)


def test_bind_refusals():
    sch = Schedule(row_sum)
    i, k = sch.get_loops("B")
    check_refused(sch, lambda s: s.bind(k, "threadIdx.x"), "can be bound to threads")
    check_refused(sch, lambda s: s.bind(i, "threadIdx.w"), "unknown thread axis")
