import pytest

from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import (check_after, check_numeric, check_refused,
                                      check_trace_roundtrip, make_matmul, make_mm_relu,
                                      make_scale_add)


scale_add = make_scale_add(16, 8)


@T.prim_func
def producer_under_tile(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i, j_0 in T.grid(16, 2):
        for ax0 in range(4):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(8, j_0 * 4 + ax0)
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j_1 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(8, j_0 * 4 + j_1)
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1)


def test_compute_at_tile_of_consumer():
    sch = Schedule(scale_add)
    _, j = sch.get_loops("C")
    j0, _ = sch.split(j, factors=[None, 4])
    sch.compute_at(sch.get_block("B"), j0)
    check_after(scale_add, sch, producer_under_tile)
    check_numeric(sch.mod["main"], lambda a, c: a * 2 + 1)


@T.prim_func
def shifted_guarded_read(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.if_then_else(1 <= vj, B[vi, vj - 1], T.float32(0))


@T.prim_func
def guarded_read_producer_in_bounds(A: T.Buffer((16, 8), "float32"),
                                    C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i in range(16):
        for ax0 in range(7):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(8, ax0)
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj - 1])
                T.writes(C[vi, vj])
                C[vi, vj] = T.if_then_else(1 <= vj, B[vi, vj - 1], T.float32(0))


def test_compute_at_cuts_a_guarded_read_region_to_the_buffer():
    """C reads B[vj - 1] for vj in [0, 8): the region [-1, 6] is cut to [0, 6], seven
    iterations and no predicate (the guard keeps B[-1] from being read)."""
    sch = Schedule(shifted_guarded_read)
    i, _ = sch.get_loops("C")
    sch.compute_at(sch.get_block("B"), i)
    check_after(shifted_guarded_read, sch, guarded_read_producer_in_bounds)
    check_numeric(sch.mod["main"], lambda a, c: np.pad(a[:, :-1] * 2, ((0, 0), (1, 0))))


matmul_relu = make_mm_relu(8, 8, 8)


def test_compute_at_reduction_producer_keeps_full_reduction():
    sch = Schedule(matmul_relu)
    i, _ = sch.get_loops("C")
    sch.compute_at(sch.get_block("Y"), i)
    loops = [sch.get(lp) for lp in sch.get_loops("Y")]
    assert [lp.extent.value for lp in loops] == [8, 8, 8]
    check_numeric(sch.mod["main"], lambda a, b, c: (np.maximum(a @ b, 0)))


def test_compute_at_refuses_loop_before_the_block():
    sch = Schedule(scale_add)
    i_b, _ = sch.get_loops("B")
    block_c = sch.get_block("C")
    check_refused(sch, lambda s: s.compute_at(block_c, i_b), "must come before loop 'i'")


import numpy as np  # noqa: E402


matmul_small = make_matmul(12, 6, 8)


def test_compute_at_refuses_an_init_under_a_loop_its_reduction_spans():
    sch = Schedule(matmul_small)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    jk = sch.fuse(j, k)
    init = sch.decompose_reduction(block, i)
    check_refused(sch, lambda s: s.compute_at(init, jk),
                  r"block 'C_update' accumulates into what block 'C_init' writes, and its "
                  r"reduce over 'vk' spans loop 'j_k_fused'")


@T.prim_func
def two_producers(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B1 = T.alloc_buffer((16, 8))
    B2 = T.alloc_buffer((16, 8))
    for i, j in T.grid(16, 8):
        with T.block("B1"):
            vi, vj = T.axis.remap("SS", [i, j])
            B1[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 8):
        with T.block("B2"):
            vi, vj = T.axis.remap("SS", [i, j])
            B2[vi, vj] = A[vi, vj] * T.float32(3)
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B1[vi, vj] + B2[vi, vj]


def _blocks_under(sch, loop) -> list:
    from mlcbench.tir.schedule.ir_utils import block_realizes_under
    return [r.block.name_hint for r in block_realizes_under(sch.get(loop).body)]


@pytest.mark.parametrize("index, order", [(-1, ["B2", "B1", "C"]), (-2, ["B1", "B2", "C"]),
                                          (0, ["B1", "B2", "C"]), (1, ["B2", "B1", "C"])])
def test_compute_at_index_picks_the_position_among_the_loop_body(index, order):
    sch = Schedule(two_producers)
    i, _ = sch.get_loops("C")
    sch.compute_at("B2", i)
    sch.compute_at("B1", i, index=index)
    assert _blocks_under(sch, i) == order
    check_numeric(sch.mod["main"], lambda a, c: a * 5)
    check_trace_roundtrip(two_producers, sch)


@pytest.mark.parametrize("index, match", [
    (2, r"argument 'index': 2 is not a position where block 'B1' may go under loop 'i'; it "
        r"may go at positions 0 to 1 of the 2 statements there \(-2 for 0, -1 for 1\)"),
    (-3, r"argument 'index': -3 is not a position"),
    ("last", r"argument 'index': expected an int \(-1, -2 or a position\), found str 'last'"),
])
def test_compute_at_refuses_an_index_where_the_block_cannot_go(index, match):
    sch = Schedule(two_producers)
    i, _ = sch.get_loops("C")
    sch.compute_at("B2", i)
    block = sch.get_block("B1")
    check_refused(sch, lambda s: s.compute_at(block, i, index=index), match)
