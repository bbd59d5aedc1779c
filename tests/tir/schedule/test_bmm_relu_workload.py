"""The course exercise: batched matmul + relu transformed into a parallel, vectorized,
unrolled target (compute_at, split, reorder, decompose_reduction, loop kinds)."""
import numpy as np

from mlcbench.ir import assert_structural_equal
from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_numeric, check_trace_roundtrip


@T.prim_func
def bmm_relu(A: T.Buffer((16, 128, 128), "float32"), W: T.Buffer((16, 128, 128), "float32"),
             Y: T.Buffer((16, 128, 128), "float32")):
    T.func_attr({"global_symbol": "bmm_relu", "tir.noalias": True})
    Y_ = T.alloc_buffer((16, 128, 128))
    for n, i, j, k in T.grid(16, 128, 128, 128):
        with T.block("Y_"):
            vn, vi, vj, vk = T.axis.remap("SSSR", [n, i, j, k])
            with T.init():
                Y_[vn, vi, vj] = T.float32(0)
            Y_[vn, vi, vj] = Y_[vn, vi, vj] + A[vn, vi, vk] * W[vn, vk, vj]
    for n, i, j in T.grid(16, 128, 128):
        with T.block("Y"):
            vn, vi, vj = T.axis.remap("SSS", [n, i, j])
            Y[vn, vi, vj] = T.max(Y_[vn, vi, vj], T.float32(0))


@T.prim_func
def target(A: T.Buffer((16, 128, 128), "float32"), W: T.Buffer((16, 128, 128), "float32"),
           Y: T.Buffer((16, 128, 128), "float32")):
    T.func_attr({"global_symbol": "bmm_relu", "tir.noalias": True})
    Y_ = T.alloc_buffer((16, 128, 128))
    for n in T.parallel(16):
        for i, j_0 in T.grid(128, 16):
            for ax0_init in T.vectorized(8):
                with T.block("Y__init"):
                    vn, vi = T.axis.remap("SS", [n, i])
                    vj = T.axis.spatial(128, j_0 * 8 + ax0_init)
                    T.reads()
                    T.writes(Y_[vn, vi, vj])
                    Y_[vn, vi, vj] = T.float32(0)
            for ax1_0 in range(32):
                for ax1_1 in T.unroll(4):
                    for ax0 in range(8):
                        with T.block("Y__update"):
                            vn, vi = T.axis.remap("SS", [n, i])
                            vj = T.axis.spatial(128, j_0 * 8 + ax0)
                            vk = T.axis.reduce(128, ax1_0 * 4 + ax1_1)
                            T.reads(Y_[vn, vi, vj], A[vn, vi, vk], W[vn, vk, vj])
                            T.writes(Y_[vn, vi, vj])
                            Y_[vn, vi, vj] = Y_[vn, vi, vj] + A[vn, vi, vk] * W[vn, vk, vj]
            for j_1 in T.vectorized(8):
                with T.block("Y"):
                    vn, vi = T.axis.remap("SS", [n, i])
                    vj = T.axis.spatial(128, j_0 * 8 + j_1)
                    T.reads(Y_[vn, vi, vj])
                    T.writes(Y[vn, vi, vj])
                    Y[vn, vi, vj] = T.max(Y_[vn, vi, vj], T.float32(0))


def test_bmm_relu_reaches_the_target():
    sch = Schedule(bmm_relu)
    block_mm, block_relu = sch.get_block("Y_"), sch.get_block("Y")
    n, _, j = sch.get_loops(block_relu)
    j_0, j_1 = sch.split(j, factors=[16, 8])
    sch.compute_at(block_mm, j_0)
    _, _, _, ax0, ax1 = sch.get_loops(block_mm)
    k_0, k_1 = sch.split(ax1, factors=[None, 4])
    sch.reorder(k_0, k_1, ax0)
    init = sch.decompose_reduction(block_mm, k_0)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.unroll(k_1)
    sch.parallel(n)
    sch.vectorize(j_1)
    assert_structural_equal(sch.mod["main"], target)
    check_trace_roundtrip(bmm_relu, sch)
    check_numeric(sch.mod["main"], lambda a, w, y: np.maximum(a @ w, 0), name="bmm_relu")
