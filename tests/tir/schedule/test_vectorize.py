from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from schedule_testing import check_after, check_numeric, check_refused


@T.prim_func
def add_one(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def add_one_vectorized(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
    for i in range(16):
        for j in T.vectorized(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def row_sum(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


def test_vectorize_inner_loop():
    sch = Schedule(add_one)
    _, j = sch.get_loops("B")
    sch.vectorize(j)
    check_after(add_one, sch, add_one_vectorized)
    check_numeric(sch.mod["main"], lambda a, b: a + 1)


def test_vectorize_refuses_reduction_loop():
    sch = Schedule(row_sum)
    _, k = sch.get_loops("B")
    check_refused(sch, lambda s: s.vectorize(k), "can be vectorized")


def test_vectorize_refuses_parallel_loop():
    sch = Schedule(add_one)
    i, _ = sch.get_loops("B")
    sch.parallel(i)
    check_refused(sch, lambda s: s.vectorize(i), "already parallel")
