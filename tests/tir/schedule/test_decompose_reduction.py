from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_after, check_numeric, check_refused, make_matmul


matmul = make_matmul(16, 8, 12)


@T.prim_func
def matmul_decomposed_at_i(A: T.Buffer((16, 12), "float32"), B: T.Buffer((12, 8), "float32"),
                           C: T.Buffer((16, 8), "float32")):
    for i_init, j_init in T.grid(16, 8):
        with T.block("C_init"):
            vi, vj = T.axis.remap("SS", [i_init, j_init])
            T.reads()
            T.writes(C[vi, vj])
            C[vi, vj] = T.float32(0)
    for i, j, k in T.grid(16, 8, 12):
        with T.block("C_update"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_decompose_reduction_at_outer_loop():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    i, _, _ = sch.get_loops(block)
    init = sch.decompose_reduction(block, i)
    assert sch.get(init).name_hint == "C_init"
    assert sch.get(block).name_hint == "C_update"
    check_after(matmul, sch, matmul_decomposed_at_i)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


def test_decompose_reduction_refusals():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    _, _, k = sch.get_loops(block)
    sch.decompose_reduction(block, k)
    init = sch.get_block("C_init")
    (init_loop, _) = sch.get_loops(init)
    check_refused(sch, lambda s: s.decompose_reduction(init, init_loop), "has no T.init()")


@T.prim_func
def two_sums(A: T.Buffer((16, 12), "float32"), B: T.Buffer((16,), "float32"),
             C: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 12):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
    for i, k in T.grid(16, 12):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]


def test_decompose_reduction_refuses_loop_of_another_block():
    sch = Schedule(two_sums)
    i_b, _ = sch.get_loops("B")
    block_c = sch.get_block("C")
    err = check_refused(sch, lambda s: s.decompose_reduction(block_c, i_b),
                        "loop 'i' is not above block 'C'")
    assert "pass one of its loops ['i', 'k']" in str(err)


def test_decompose_reduction_refuses_loop_inside_reduction_loop():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    sch.reorder(k, j)
    check_refused(sch, lambda s: s.decompose_reduction(block, j),
                  "loop 'k' above 'j' is a reduction loop of block 'C'")
