from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from schedule_testing import check_after, check_numeric, check_refused


@T.prim_func
def matmul(A: T.Buffer((16, 12), "float32"), B: T.Buffer((12, 8), "float32"),
           C: T.Buffer((16, 8), "float32")):
    for i, j, k in T.grid(16, 8, 12):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


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
