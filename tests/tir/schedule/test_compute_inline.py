from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import (check_after, check_numeric, check_refused,
                                      make_row_sum_then_scale, make_scale_add)


scale_add = make_scale_add(16, 8)


@T.prim_func
def scale_add_inlined(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)


@T.prim_func
def transpose_then_add(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vj, vi] + B[vi, vj]


def test_compute_inline_elementwise_producer():
    sch = Schedule(scale_add)
    sch.compute_inline(sch.get_block("B"))
    check_after(scale_add, sch, scale_add_inlined)
    check_numeric(sch.mod["main"], lambda a, c: a * 2 + 1)


def test_compute_inline_substitutes_each_load_index():
    sch = Schedule(transpose_then_add)
    sch.compute_inline(sch.get_block("B"))
    check_numeric(sch.mod["main"], lambda a, c: a + a.T)


def test_compute_inline_refuses_output_block():
    sch = Schedule(scale_add)
    block = sch.get_block("C")
    err = check_refused(sch, lambda s: s.compute_inline(block),
                        "writes the function parameter 'C'; an output cannot be inlined")
    assert 'with T.block("C"):  # <-- here' in str(err)


row_sum_then_scale = make_row_sum_then_scale(16, 8)


def test_compute_inline_refuses_reduction():
    sch = Schedule(row_sum_then_scale)
    block = sch.get_block("B")
    check_refused(sch, lambda s: s.compute_inline(block), "without T.init()")


@T.prim_func
def checked_scale(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi] - T.float32(1)
    T.Assert(B[0] > T.float32(0), "B[0] must be positive")
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi] * T.float32(2)


def test_compute_inline_refuses_a_buffer_read_outside_blocks():
    # the assert reads B outside any block: inlining would leave it reading nothing
    sch = Schedule(checked_scale)
    block = sch.get_block("B")
    check_refused(sch, lambda s: s.compute_inline(block),
                  r"buffer 'B' of block 'B' is also read outside the blocks")
