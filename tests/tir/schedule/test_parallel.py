import numpy as np

from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_after, check_numeric, check_refused, make_matmul


matmul = make_matmul(16, 8, 12)


@T.prim_func
def matmul_parallel_i(A: T.Buffer((16, 12), "float32"), B: T.Buffer((12, 8), "float32"),
                      C: T.Buffer((16, 8), "float32")):
    for i in T.parallel(16):
        for j, k in T.grid(8, 12):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_parallel_spatial_loop():
    sch = Schedule(matmul)
    i, _, _ = sch.get_loops("C")
    sch.parallel(i)
    check_after(matmul, sch, matmul_parallel_i)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


def test_parallel_refuses_reduction_loop():
    sch = Schedule(matmul)
    _, _, k = sch.get_loops("C")
    err = check_refused(sch, lambda s: s.parallel(k), "reduce iter var 'vk' of block 'C'")
    assert "only loops bound to spatial iter vars can be parallelized" in str(err)
    assert 'with T.block("C"):  # <-- here' in str(err)


@T.prim_func
def produce_consume(A: T.Buffer((65,), "float32"), B: T.Buffer((65,), "float32"),
                    C: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi] * T.float32(2)
        with T.block("C"):
            vi = T.axis.spatial(64, i)
            C[vi] = B[vi + 1] + T.float32(1)


@T.prim_func
def produce_consume_same_row(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32"),
                             C: T.Buffer((16, 8), "float32")):
    for i in range(16):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, 7 - vj] + T.float32(1)


@T.prim_func
def last_wins(A: T.Buffer((32,), "float32"), B: T.Buffer((1,), "float32")):
    for i in range(32):
        with T.block("B"):
            T.reads(A[i])
            T.writes(B[0])
            B[0] = A[i]


@T.prim_func
def first_step_only(A: T.Buffer((9,), "float32")):
    for i in range(8):
        with T.block("b"):
            T.where(i < 1)
            T.reads(A[i:i + 2])
            T.writes(A[i + 1])
            A[i + 1] = A[i + 1] + A[i]


@T.prim_func
def rows_shift(A: T.Buffer((8, 17), "float32")):
    for r, i in T.grid(8, 16):
        with T.block("b"):
            vr = T.axis.spatial(8, r)
            T.reads(A[vr, i:i + 2])
            T.writes(A[vr, i + 1])
            A[vr, i + 1] = A[vr, i + 1] + A[vr, i]


def test_parallel_refuses_consumer_reading_another_iterations_result():
    sch = Schedule(produce_consume)
    (i,) = sch.get_loops("B")
    err = check_refused(sch, lambda s: s.parallel(i), "overlap on buffer 'B'")
    text = str(err)
    assert "block 'B' writes B[vi] and block 'C' reads B[vi + 1]" in text
    assert "iteration i=1 writes B[1] and iteration i=0 reads B[1]" in text


def test_parallel_accepts_consumer_within_its_own_iteration():
    sch = Schedule(produce_consume_same_row)
    i = sch.get_loops("B")[0]
    sch.parallel(i)
    check_numeric(sch.mod["main"], lambda a, b, c: a[:, ::-1] * 2 + 1)


def test_parallel_refuses_iterations_writing_one_element():
    sch = Schedule(last_wins)
    (i,) = sch.get_loops("B")
    check_refused(sch, lambda s: s.parallel(i),
                  "iteration i=0 writes B\\[0\\] and iteration i=1 writes B\\[0\\]")


def test_parallel_counts_only_iterations_the_predicate_runs():
    sch = Schedule(first_step_only)
    (i,) = sch.get_loops("b")
    sch.parallel(i)

    def reference(a):
        out = a.copy()
        out[1] += out[0]
        return out
    check_numeric(sch.mod["main"], reference, outputs=(0,))


def test_parallel_outer_loop_of_independent_rows_inner_loop_refused():
    sch = Schedule(rows_shift)
    r, i = sch.get_loops("b")
    err = check_refused(sch, lambda s: s.parallel(i), "overlap on buffer 'A'")
    assert "iteration i=0 (r=0) writes A[0, 1] and iteration i=1 (r=0) reads A[0, 1:3]" \
        in str(err)
    sch.parallel(r)          # rows are independent: each iteration of r owns its row
    check_numeric(sch.mod["main"], lambda a: np.cumsum(a, axis=1), outputs=(0,))


def test_parallel_fused_spatial_loops_of_matmul():
    sch = Schedule(matmul)
    i, j, _ = sch.get_loops("C")
    fused = sch.fuse(i, j)
    sch.parallel(fused)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)
