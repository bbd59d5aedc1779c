import numpy as np
import pytest

from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import (check_after, check_numeric, check_refused, make_matmul,
                                      two_nests)


@T.prim_func
def scale(A: T.Buffer((16, 8, 4), "float32"), B: T.Buffer((16, 8, 4), "float32")):
    for i, j, k in T.grid(16, 8, 4):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)


@T.prim_func
def scale_fused(A: T.Buffer((16, 8, 4), "float32"), B: T.Buffer((16, 8, 4), "float32")):
    for i_j_k_fused in range(512):
        with T.block("B"):
            vi = T.axis.spatial(16, i_j_k_fused // 32)
            vj = T.axis.spatial(8, i_j_k_fused % 32 // 4)
            vk = T.axis.spatial(4, i_j_k_fused % 4)
            T.reads(A[vi, vj, vk])
            T.writes(B[vi, vj, vk])
            B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)


def test_fuse_three_loops():
    sch = Schedule(scale)
    fused = sch.fuse(*sch.get_loops("B"))
    assert sch.get(fused).extent.value == 512
    check_after(scale, sch, scale_fused)
    check_numeric(sch.mod["main"], lambda a, b: a + 1)


def test_fuse_refuses_loops_that_are_not_perfectly_nested():
    sch = Schedule(two_nests)
    i, j = sch.get_loops("B")
    err = check_refused(sch, lambda s: s.fuse(i, j), "must be the only statement directly "
                        "inside loop 'i'")
    assert "for i in range(16):  # <-- here" in str(err)


def test_fuse_refuses_a_single_loop():
    sch = Schedule(scale)
    i, _, _ = sch.get_loops("B")
    check_refused(sch, lambda s: s.fuse(i), "at least two loops")


matmul = make_matmul(8, 16, 12)


def test_fused_loop_inside_reduction_loop_builds_correctly():
    sch = Schedule(matmul)
    i, j, k = sch.get_loops("C")
    fused = sch.fuse(i, j)
    sch.reorder(k, fused)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


@T.prim_func
def with_unit_axis(A: T.Buffer((16, 1, 4), "float32"), B: T.Buffer((16, 1, 4), "float32")):
    for i, j, k in T.grid(16, 1, 4):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)


@T.prim_func
def with_unit_axis_fused(A: T.Buffer((16, 1, 4), "float32"),
                         B: T.Buffer((16, 1, 4), "float32")):
    for i_j_k_fused in range(64):
        with T.block("B"):
            vi = T.axis.spatial(16, i_j_k_fused // 4)
            vj = T.axis.spatial(1, i_j_k_fused % 4 // 4)
            vk = T.axis.spatial(4, i_j_k_fused % 4)
            B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)


@T.prim_func
def with_unit_axis_fused_dropped(A: T.Buffer((16, 1, 4), "float32"),
                                 B: T.Buffer((16, 1, 4), "float32")):
    for i_j_k_fused in range(64):
        with T.block("B"):
            vi = T.axis.spatial(16, i_j_k_fused // 4)
            vj = T.axis.spatial(1, 0)
            vk = T.axis.spatial(4, i_j_k_fused % 4)
            B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)


@pytest.mark.parametrize("preserve, expected", [(True, with_unit_axis_fused),
                                                (False, with_unit_axis_fused_dropped)])
def test_fuse_preserve_unit_iters_keeps_or_drops_the_unit_loop_in_the_binding(preserve,
                                                                              expected):
    sch = Schedule(with_unit_axis)
    sch.fuse(*sch.get_loops("B"), preserve_unit_iters=preserve)
    check_after(with_unit_axis, sch, expected)
    check_numeric(sch.mod["main"], lambda a, b: a + 1)


@T.prim_func
def broadcast_mixed_index_types(A: T.Buffer((3, 1), "float32"),
                                B: T.Buffer((T.int64(2), 3, T.int64(4)), "float32")):
    for i, j, k in T.grid(T.int64(2), 3, T.int64(4)):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vj, T.int64(0)]


def test_fuse_loops_of_int32_and_int64_counts_in_int64_and_casts_back():
    # relax's broadcast_to keeps an input's int32 axis beside int64 new ones
    sch = Schedule(broadcast_mixed_index_types)
    i, j, k = sch.get_loops("B")
    fused = sch.fuse(j, k)
    loop = sch.get(fused)
    assert str(loop.loop_var.dtype) == "int64" and loop.extent.value == 12
    text = sch.mod["main"].script()
    assert 'T.Cast("int32", j_k_fused // T.int64(4))' in text, text
    assert "vk = T.axis.spatial(T.int64(4), j_k_fused % T.int64(4))" in text, text
    check_numeric(sch.mod["main"], lambda a, b: np.broadcast_to(a, (2, 3, 4)))
    sch.vectorize(sch.split(fused, [None, 4])[1])
    check_numeric(sch.mod["main"], lambda a, b: np.broadcast_to(a, (2, 3, 4)))
