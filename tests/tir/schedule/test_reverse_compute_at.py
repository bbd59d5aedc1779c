import pytest

from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import (check_after, check_numeric, check_refused,
                                      check_trace_roundtrip, make_scale_add)


scale_add = make_scale_add(16, 8)


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


@T.prim_func
def two_consumers(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32"),
                  D: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
    for i, j in T.grid(16, 8):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = B[vi, vj] * T.float32(3)


@pytest.mark.parametrize("index, order", [(-1, ["B", "C", "D"]), (-2, ["B", "D", "C"]),
                                          (1, ["B", "D", "C"]), (2, ["B", "C", "D"])])
def test_reverse_compute_at_index_picks_the_position_after_the_producer(index, order):
    from mlcbench.tir.schedule.ir_utils import block_realizes_under
    sch = Schedule(two_consumers)
    i, _ = sch.get_loops("B")
    sch.reverse_compute_at("C", i)
    sch.reverse_compute_at("D", i, index=index)
    assert [r.block.name_hint for r in block_realizes_under(sch.get(i).body)] == order
    check_numeric(sch.mod["main"], lambda a, c, d: (a * 2 + 1, a * 6), outputs=(1, 2))
    check_trace_roundtrip(two_consumers, sch)


def test_reverse_compute_at_refuses_a_position_before_the_producer():
    sch = Schedule(two_consumers)
    i, _ = sch.get_loops("B")
    block = sch.get_block("C")
    check_refused(sch, lambda s: s.reverse_compute_at(block, i, index=0),
                  r"argument 'index': 0 is not a position where block 'C' may go under loop "
                  r"'i'; it may go at positions 1 to 1")
