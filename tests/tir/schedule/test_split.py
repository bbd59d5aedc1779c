import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench.script import tir as T
from mlcbench.tir import Schedule, ScheduleError
from helpers.schedule_testing import (check_after, check_numeric, check_refused,
                                      check_trace_roundtrip, make_add_one, make_matmul)


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


@pytest.mark.parametrize("factors, match", [
    ([None, None], "argument 'factors': at most one factor may be None .inferred., found 2"),
    ([0, None], "argument 'factors': factor 0 at position 0 is not positive"),
    ([None, -4], "argument 'factors': factor -4 at position 1 is not positive"),
    ([4.0, None], "argument 'factors': factor 4.0 at position 0 is a float"),
    (["4", None], "argument 'factors': factor '4' at position 0 is a str"),
    ([True, None], "argument 'factors': factor True at position 0 is a bool"),
    ([], "argument 'factors': expected at least one factor, found \\[\\]"),
    (4, "argument 'factors': expected a list of positive integers or None, found int 4"),
])
def test_split_refuses_bad_factors(factors, match):
    sch = Schedule(scale)
    _, j = sch.get_loops("B")
    check_refused(sch, lambda s: s.split(j, factors=factors), match)


def test_split_loop_handle_is_gone_afterwards():
    sch = Schedule(scale)
    _, j = sch.get_loops("B")
    sch.split(j, factors=[None, 2])
    check_refused(sch, lambda s: s.split(j, factors=[None, 2]), "no longer in the function")


matmul64 = make_matmul(64, 64, 64)


@pytest.mark.parametrize("factors, match", [
    ([2**31, None], "argument 'factors': factor 2147483648 at position 0 exceeds the largest "
                    "int32 \\(2147483647\\), the index type of loop 'i' \\(extent 64\\)"),
    ([None, 2**31], "factor 2147483648 at position 1 exceeds the largest int32"),
    ([2**16, 2**16], "argument 'factors': the factors \\[65536, 65536\\] multiply to "
                     "4294967296, beyond the int32 range of loop 'i' \\(extent 64\\)"),
])
def test_split_refuses_factors_that_overflow_the_index_type(factors, match):
    sch = Schedule(matmul64)
    i, _, _ = sch.get_loops("C")
    check_refused(sch, lambda s: s.split(i, factors=factors), match)


def test_split_product_just_inside_the_index_type_is_kept():
    sch = Schedule(matmul64)
    i, _, _ = sch.get_loops("C")
    loops = sch.split(i, factors=[2**15, 2**16, None])      # largest index 2**31 - 1
    assert [sch.get(lp).extent.value for lp in loops] == [2**15, 2**16, 1]
    assert "T.where(i_0 * 65536 + i_1 + i_2 < 64)" in sch.mod["main"].script()


def test_split_factor_above_the_extent_is_exact():
    sch = Schedule(matmul64)
    i, _, _ = sch.get_loops("C")
    outer, inner = sch.split(i, factors=[100, None])
    assert (sch.get(outer).extent.value, sch.get(inner).extent.value) == (100, 1)
    check_trace_roundtrip(matmul64, sch)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


def test_split_accepts_numpy_integers_and_records_plain_ints():
    sch = Schedule(matmul64)
    i, _, _ = sch.get_loops("C")
    sch.split(i, factors=[np.int64(8), None])
    assert "factors=[8, None]" in str(sch.trace)
    check_trace_roundtrip(matmul64, sch)


add_one_100 = make_add_one(100)


_factor = st.one_of(st.none(), st.integers(-2, 300), st.sampled_from([2**31 - 1, 2**31, 2**40]))


@settings(max_examples=30, deadline=None)
@given(factors=st.lists(_factor, min_size=1, max_size=3))
def test_split_factors_are_refused_or_exact(factors):
    """Whatever the factors, split either refuses them with the schedule unchanged or
    gives loops of the stated sizes that compute A + 1."""
    sch = Schedule(add_one_100)
    (i,) = sch.get_loops("B")
    known = math.prod(f for f in factors if f is not None)
    sizes = [-(-100 // known) if f is None else f for f in factors] if known > 0 else None
    legal = (factors.count(None) <= 1 and all(f is None or f > 0 for f in factors)
             and max(sizes) < 2**31 and 100 <= math.prod(sizes) <= 2**31)
    if not legal:
        check_refused(sch, lambda s: s.split(i, factors=factors), "split: argument 'factors'")
        return
    loops = sch.split(i, factors=factors)
    assert [sch.get(lp).extent.value for lp in loops] == sizes
    if math.prod(sizes) <= 1 << 16:          # running 2**31 empty iterations is too slow
        check_numeric(sch.mod["main"], lambda a, b: a + 1)


@T.prim_func
def add_n(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] + T.float32(1)


@T.prim_func
def add_n_split(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,))
    B = T.match_buffer(b, (n,))
    for i_0, i_1 in T.grid((n + 3) // 4, 4):
        with T.block("B"):
            vi = T.axis.spatial(n, i_0 * 4 + i_1)
            T.where(i_0 * 4 + i_1 < n)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] + T.float32(1)


def test_split_of_a_symbolic_extent_infers_the_ceiling():
    sch = Schedule(add_n)
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[None, 4])
    check_after(add_n, sch, add_n_split)
    import mlcbench
    lib = mlcbench.build(sch.mod, "llvm")
    for n in (1, 7, 8, 13):
        a = np.arange(n, dtype="float32")
        b = mlcbench.nd.empty((n,), "float32")
        lib(mlcbench.nd.array(a), b)
        np.testing.assert_array_equal(b.numpy(), a + 1)


def test_split_of_a_symbolic_extent_needs_an_inferred_factor():
    sch = Schedule(add_n)
    (i,) = sch.get_loops(sch.get_block("B"))
    check_refused(sch, lambda s: s.split(i, factors=[2, 4]),
                  r"symbolic extent n, which the factors \[2, 4\] cannot be checked to cover")


@T.prim_func
def scale_split_unit(A: T.Buffer((128, 130), "float32"), B: T.Buffer((128, 130), "float32")):
    for i_0, i_1, i_2, j in T.grid(2, 1, 64, 130):
        with T.block("B"):
            vi = T.axis.spatial(128, i_0 * 64 + i_1 * 64 + i_2)
            vj = T.axis.spatial(130, j)
            B[vi, vj] = A[vi, vj] * T.float32(2)


@T.prim_func
def scale_split_unit_dropped(A: T.Buffer((128, 130), "float32"),
                             B: T.Buffer((128, 130), "float32")):
    for i_0, i_1, i_2, j in T.grid(2, 1, 64, 130):
        with T.block("B"):
            vi = T.axis.spatial(128, i_0 * 64 + i_2)
            vj = T.axis.spatial(130, j)
            B[vi, vj] = A[vi, vj] * T.float32(2)


@pytest.mark.parametrize("preserve, expected", [(True, scale_split_unit),
                                                (False, scale_split_unit_dropped)])
def test_split_preserve_unit_iters_keeps_or_drops_the_unit_loop_in_the_binding(preserve,
                                                                               expected):
    sch = Schedule(scale)
    i, _ = sch.get_loops("B")
    sch.split(i, factors=[2, 1, 64], preserve_unit_iters=preserve)
    check_after(scale, sch, expected)
    check_numeric(sch.mod["main"], lambda a, b: a * 2)
