import numpy as np
import pytest

from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_after, check_numeric, check_refused, make_row_sum


rowsum = make_row_sum(16, 64)


@T.prim_func
def rowsum_rf(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
    B_rf = T.alloc_buffer((16, 16))
    for i, k_0, k_1 in T.grid(16, 4, 16):
        with T.block("B_rf"):
            vk_1_rf, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
            T.reads(A[vi, vk_0 * 16 + vk_1_rf])
            T.writes(B_rf[vi, vk_1_rf])
            with T.init():
                B_rf[vi, vk_1_rf] = T.float32(0)
            B_rf[vi, vk_1_rf] = B_rf[vi, vk_1_rf] + A[vi, vk_0 * 16 + vk_1_rf]
    for i, k_1 in T.grid(16, 16):
        with T.block("B"):
            vk_1_rf, vi = T.axis.remap("RS", [k_1, i])
            T.reads(B_rf[vi, vk_1_rf])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + B_rf[vi, vk_1_rf]


@T.prim_func
def rowmax(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 32):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.min_value("float32")
            B[vi] = T.max(B[vi], A[vi, vk])


def test_rfactor_split_inner_loop():
    sch = Schedule(rowsum)
    _, k = sch.get_loops("B")
    _, k1 = sch.split(k, factors=[None, 16])
    rf = sch.rfactor(k1, factor_axis=1)
    assert sch.get(rf).name_hint == "B_rf"
    check_after(rowsum, sch, rowsum_rf)
    check_numeric(sch.mod["main"], lambda a, b: a.sum(axis=1))


def test_rfactor_rf_loop_can_be_vectorized():
    sch = Schedule(rowsum)
    i, k = sch.get_loops("B")
    k0, k1 = sch.split(k, factors=[None, 16])
    rf = sch.rfactor(k1, factor_axis=0)
    i, k0, k1 = sch.get_loops(rf)
    sch.vectorize(k1)
    assert sch.get(rf).writes[0].buffer.shape[0].value == 16
    check_numeric(sch.mod["main"], lambda a, b: a.sum(axis=1))


def test_rfactor_max_reduction_keeps_numpy_answer():
    sch = Schedule(rowmax)
    _, k = sch.get_loops("B")
    sch.rfactor(k, factor_axis=-1)
    check_numeric(sch.mod["main"], lambda a, b: a.max(axis=1))


@T.prim_func
def rowmax_ordered(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 32):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32("-inf")
            B[vi] = T.Select(B[vi] > A[vi, vk], B[vi], A[vi, vk])


@T.prim_func
def rowmin_ordered_running_value_second(A: T.Buffer((8, 32), "float32"),
                                        B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 32):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32("inf")
            B[vi] = T.Select(A[vi, vk] < B[vi], A[vi, vk], B[vi])


@pytest.mark.parametrize("func, reference, compare, identity", [
    (rowmax_ordered, lambda a, b: a.max(axis=1), ">", "-inf"),
    (rowmin_ordered_running_value_second, lambda a, b: a.min(axis=1), "<", "inf")])
def test_rfactor_ordered_select_max_and_min(func, reference, compare, identity):
    """``T.Select(X > e, X, e)`` (one vmaxps) is a reduction like ``T.max``; its partial
    results start from the identity and are combined by the same select."""
    sch = Schedule(func)
    _, k = sch.get_loops("B")
    _, k1 = sch.split(k, factors=[None, 8])
    sch.rfactor(k1, factor_axis=1)
    text = sch.mod.script()
    assert f'B_rf[vi, vk_1_rf] = T.float32("{identity}")' in text
    assert (f"B_rf[vi, vk_1_rf] = T.Select(B_rf[vi, vk_1_rf] {compare} A[vi, vk_0 * 8 + vk_1_rf], "
            "B_rf[vi, vk_1_rf], A[vi, vk_0 * 8 + vk_1_rf])") in text
    assert f"B[vi] = T.Select(B[vi] {compare} B_rf[vi, vk_1_rf], B[vi], B_rf[vi, vk_1_rf])" in text
    check_numeric(sch.mod["main"], reference)


def test_rfactor_refuses_select_that_is_not_a_max_or_min():
    @T.prim_func
    def picks_the_smaller(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = T.Select(B[vi] > A[vi, vk], A[vi, vk], B[vi])

    sch = Schedule(picks_the_smaller)
    _, k = sch.get_loops("B")
    check_refused(sch, lambda s: s.rfactor(k, 0), r"T.Select\(X\[idx\] > e, X\[idx\], e\)")


def test_rfactor_refuses_spatial_loop():
    sch = Schedule(rowsum)
    i, _ = sch.get_loops("B")
    err = check_refused(sch, lambda s: s.rfactor(i, 0),
                        r"rfactor: loop 'i' binds the spatial iterator 'vi'")
    assert "# <-- here" in str(err)


def test_rfactor_refuses_bad_factor_axis():
    sch = Schedule(rowsum)
    _, k = sch.get_loops("B")
    check_refused(sch, lambda s: s.rfactor(k, 3), r"factor_axis 3 is out of range")


def test_rfactor_refuses_non_reduction_body():
    @T.prim_func
    def prod_like(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] * T.float32(0.5) + A[vi, vk]

    sch = Schedule(prod_like)
    _, k = sch.get_loops("B")
    check_refused(sch, lambda s: s.rfactor(k, 0), r"not a reduction rfactor understands")
