from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from schedule_testing import check_after, check_numeric, check_refused


@T.prim_func
def scale_add(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def consumer_under_i(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i in range(16):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for ax0 in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def consumer_under_j(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_reverse_compute_at_outer_loop():
    sch = Schedule(scale_add)
    i, _ = sch.get_loops("B")
    sch.reverse_compute_at(sch.get_block("C"), i)
    check_after(scale_add, sch, consumer_under_i)
    check_numeric(sch.mod["main"], lambda a, c: a * 2 + 1)


def test_reverse_compute_at_inner_loop_drops_unit_loops():
    sch = Schedule(scale_add)
    _, j = sch.get_loops("B")
    sch.reverse_compute_at(sch.get_block("C"), j)
    check_after(scale_add, sch, consumer_under_j)
    check_numeric(sch.mod["main"], lambda a, c: a * 2 + 1)


def test_reverse_compute_at_refusals():
    sch = Schedule(scale_add)
    i_b, _ = sch.get_loops("B")
    i_c, _ = sch.get_loops("C")
    block_b, block_c = sch.get_block("B"), sch.get_block("C")
    check_refused(sch, lambda s: s.reverse_compute_at(block_c, i_c), "already above block 'C'")
    check_refused(sch, lambda s: s.reverse_compute_at(block_b, i_c), "must come after loop 'i'")
