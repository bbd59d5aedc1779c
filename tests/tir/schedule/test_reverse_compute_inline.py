import numpy as np

from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_after, check_numeric, check_refused, make_scale_add


scale_add = make_scale_add(16, 8)


@T.prim_func
def scale_add_reverse_inlined(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)


def test_reverse_compute_inline_consumer():
    sch = Schedule(scale_add)
    sch.reverse_compute_inline(sch.get_block("C"))
    check_after(scale_add, sch, scale_add_reverse_inlined)
    check_numeric(sch.mod["main"], lambda a, c: a * 2 + 1)


@T.prim_func
def transposed_read(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vj, vi] * T.float32(3)


def test_reverse_compute_inline_permuted_indices():
    sch = Schedule(transposed_read)
    sch.reverse_compute_inline(sch.get_block("C"))
    check_numeric(sch.mod["main"], lambda a, c: ((a + 1) * 3).T)


@T.prim_func
def two_reads(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(7):
        with T.block("C"):
            vi = T.axis.spatial(7, i)
            C[vi] = B[vi] + B[vi + 1]


def test_reverse_compute_inline_refuses_shifted_reads():
    sch = Schedule(two_reads)
    block = sch.get_block("C")
    check_refused(sch, lambda s: s.reverse_compute_inline(block),
                  "loads 'B' at different indices")
