import numpy as np
import pytest

from mlcbench.script import tir as T
from mlcbench.tir import Schedule, ScheduleError
from schedule_testing import check_after, check_numeric, check_refused


@T.prim_func
def scale(A: T.Buffer((128, 130), "float32"), B: T.Buffer((128, 130), "float32")):
    for i, j in T.grid(128, 130):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)


@T.prim_func
def scale_split_i(A: T.Buffer((128, 130), "float32"), B: T.Buffer((128, 130), "float32")):
    for i_0, i_1, i_2, j in T.grid(4, 4, 8, 130):
        with T.block("B"):
            vi = T.axis.spatial(128, i_0 * 32 + i_1 * 8 + i_2)
            vj = T.axis.spatial(130, j)
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)


@T.prim_func
def scale_split_j_predicate(A: T.Buffer((128, 130), "float32"),
                            B: T.Buffer((128, 130), "float32")):
    for i, j_0, j_1 in T.grid(128, 33, 4):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            vj = T.axis.spatial(130, j_0 * 4 + j_1)
            T.where(j_0 * 4 + j_1 < 130)
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)


def test_split_three_ways_with_inferred_factor():
    sch = Schedule(scale)
    i, _ = sch.get_loops(sch.get_block("B"))
    outs = sch.split(i, factors=[4, None, 8])
    assert len(outs) == 3 and sch.get(outs[1]).extent.value == 4
    check_after(scale, sch, scale_split_i)
    check_numeric(sch.mod["main"], lambda a, b: a * 2)


def test_split_non_divisible_adds_predicate():
    sch = Schedule(scale)
    _, j = sch.get_loops("B")
    sch.split(j, factors=[None, 4])
    check_after(scale, sch, scale_split_j_predicate)
    check_numeric(sch.mod["main"], lambda a, b: a * 2)


def test_split_refuses_too_small_product_and_suggests_fix():
    sch = Schedule(scale)
    _, j = sch.get_loops("B")
    err = check_refused(sch, lambda s: s.split(j, factors=[32, 4]), "multiply to 128, less "
                        "than the extent 130")
    text = str(err)
    assert "factors=[None, 4]" in text and "26 x 5" in text
    assert "for i, j in T.grid(128, 130):  # <-- here" in text


@pytest.mark.parametrize("factors, match", [([None, None], "at most one factor"),
                                             ([0, None], "positive integers")])
def test_split_refuses_bad_factors(factors, match):
    sch = Schedule(scale)
    _, j = sch.get_loops("B")
    check_refused(sch, lambda s: s.split(j, factors=factors), match)


def test_split_loop_handle_is_gone_afterwards():
    sch = Schedule(scale)
    _, j = sch.get_loops("B")
    sch.split(j, factors=[None, 2])
    check_refused(sch, lambda s: s.split(j, factors=[None, 2]), "no longer in the function")
