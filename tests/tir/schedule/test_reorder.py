from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import (check_after, check_numeric, check_refused, make_matmul,
                                      two_nests)


matmul = make_matmul(16, 8, 12)


@T.prim_func
def matmul_kij(A: T.Buffer((16, 12), "float32"), B: T.Buffer((12, 8), "float32"),
               C: T.Buffer((16, 8), "float32")):
    for k, i, j in T.grid(12, 16, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_jik(A: T.Buffer((16, 12), "float32"), B: T.Buffer((12, 8), "float32"),
               C: T.Buffer((16, 8), "float32")):
    for j, i, k in T.grid(8, 16, 12):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_reorder_moves_reduction_loop_outermost():
    sch = Schedule(matmul)
    i, j, k = sch.get_loops("C")
    sch.reorder(k, i, j)
    check_after(matmul, sch, matmul_kij)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


def test_reorder_leaves_loops_not_named_in_place():
    sch = Schedule(matmul)
    i, j, k = sch.get_loops("C")
    sch.reorder(j, i)
    check_after(matmul, sch, matmul_jik)


def test_reorder_refuses_duplicate_loops():
    sch = Schedule(matmul)
    i, j, _ = sch.get_loops("C")
    check_refused(sch, lambda s: s.reorder(i, j, i), "appears twice")


def test_reorder_refuses_loops_of_different_chains_and_non_loop_between():
    sch = Schedule(two_nests)
    _, j_b = sch.get_loops("B")
    i, j_c = sch.get_loops("C")
    check_refused(sch, lambda s: s.reorder(j_b, j_c), "not in one nesting chain")
    check_refused(sch, lambda s: s.reorder(j_c, i), "only single loops may lie between")


def test_reorder_refuses_loop_mixing_spatial_and_reduction():
    sch = Schedule(matmul)
    _, j, k = sch.get_loops("C")
    fused = sch.fuse(j, k)
    outer, inner = sch.split(fused, factors=[None, 3])
    check_refused(sch, lambda s: s.reorder(inner, outer),
                  "feeds both spatial and reduction iter vars of block 'C'")
