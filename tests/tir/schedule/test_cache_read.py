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
def matmul_cached_b(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 8), "float32"),
                    C: T.Buffer((16, 8), "float32")):
    B_shared = T.alloc_buffer((8, 8), scope="shared")
    for ax0, ax1 in T.grid(8, 8):
        with T.block("B_shared"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(B[v0, v1])
            T.writes(B_shared[v0, v1])
            B_shared[v0, v1] = B[v0, v1]
    for i, j, k in T.grid(16, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B_shared[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B_shared[vk, vj]


def test_cache_read_second_input():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    copy = sch.cache_read(block, 1, "shared")
    assert sch.get(copy).name_hint == "B_shared"
    check_after(matmul, sch, matmul_cached_b)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


def test_cache_read_refuses_unknown_index():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    check_refused(sch, lambda s: s.cache_read(block, 5, "local"),
                  r"has no read buffer 5; its read buffers are \['A', 'B'\]")
