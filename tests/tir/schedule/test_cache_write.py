from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from schedule_testing import check_after, check_numeric, check_refused


@T.prim_func
def matmul(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 8), "float32"),
           C: T.Buffer((16, 8), "float32")):
    for i, j, k in T.grid(16, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_write_cached(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 8), "float32"),
                        C: T.Buffer((16, 8), "float32")):
    C_local = T.alloc_buffer((16, 8), scope="local")
    for i in range(16):
        for j, k in T.grid(8, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C_local[vi, vj])
                with T.init():
                    C_local[vi, vj] = T.float32(0)
                C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(8):
            with T.block("C_local"):
                v0, v1 = T.axis.remap("SS", [i, ax0])
                T.reads(C_local[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_local[v0, v1]


def test_cache_write_then_reverse_compute_at():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    copy_back = sch.cache_write(block, 0, "local")
    i, _, _ = sch.get_loops(block)
    sch.reverse_compute_at(copy_back, i)
    check_after(matmul, sch, matmul_write_cached)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


def test_cache_write_refuses_after_blocks_share_loops():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    copy_back = sch.cache_write(block, 0, "local")
    i, _, _ = sch.get_loops(block)
    sch.reverse_compute_at(copy_back, i)
    check_refused(sch, lambda s: s.cache_write(block, 0, "global"),
                  "shares loops with block 'C'")
