import numpy as np

from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import (check_after, check_numeric, check_refused, random_args,
                                      run, make_matmul)


matmul = make_matmul(16, 64, 8)


@T.prim_func
def matmul_packed_b(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 64), "float32"),
                    C: T.Buffer((16, 64), "float32")):
    B_global = T.alloc_buffer((2, 8, 32))
    for ax0, ax1 in T.grid(8, 64):
        with T.block("B_global"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(B[v0, v1])
            T.writes(B_global[v1 // 32, v0, v1 % 32])
            B_global[v1 // 32, v0, v1 % 32] = B[v0, v1]
    for i, j, k in T.grid(16, 64, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B_global[vj // 32, vk, vj % 32])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B_global[vj // 32, vk, vj % 32]


@T.prim_func
def matmul_transposed_a(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 64), "float32"),
                        C: T.Buffer((16, 64), "float32")):
    for i, j, k in T.grid(16, 64, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vk, vi], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vk, vi] * B[vk, vj]


def test_transform_layout_packs_cached_b_into_panels():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    sch.cache_read(block, 1, "global")
    sch.transform_layout(block, ("read", 1), lambda k, j: (j // 32, k, j % 32))
    check_after(matmul, sch, matmul_packed_b)
    assert "index_map=lambda k, j: (j // 32, k, j % 32)" in str(sch.trace)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


def test_transform_layout_by_name_of_a_parameter_changes_the_signature():
    sch = Schedule(matmul)
    sch.transform_layout("C", "A", lambda i, k: (k, i))
    check_after(matmul, sch, matmul_transposed_a)
    a, b, c = random_args(matmul)
    _, _, out = run(sch.mod["main"], [np.ascontiguousarray(a.T), b, c])
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-5)


def test_transform_layout_refuses_non_injective_map():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    err = check_refused(sch, lambda s: s.transform_layout(block, ("write", 0),
                                                          lambda i, j: (i // 2, j)),
                        r"transform_layout: the index map lambda i, j: \(i // 2, j\) is "
                        r"not injective on 'C': \[0, 0\] and \[1, 0\]")
    assert "# <-- here" in str(err)


def test_transform_layout_refuses_wrong_arity_and_bad_buffer():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    check_refused(sch, lambda s: s.transform_layout(block, ("read", 0), lambda i: (i,)),
                  r"takes 1 indices but 'A' has 2 dimensions")
    check_refused(sch, lambda s: s.transform_layout(block, ("read", 7), lambda i, j: (j, i)),
                  r"block 'C' has 2 read buffers \['A', 'B'\]; index 7 is out of range")
    check_refused(sch, lambda s: s.transform_layout(block, "D", lambda i, j: (j, i)),
                  r"accesses no buffer named 'D'")


def test_transform_layout_refuses_negative_indices():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    check_refused(sch, lambda s: s.transform_layout(block, ("read", 1),
                                                    lambda k, j: (k - 1, j)),
                  r"gives the index k - 1 negative values")


def test_transform_layout_refuses_a_non_injective_map_again_from_the_remembered_answer():
    """The injectivity check remembers its answer per map text and shapes: the same map
    on the same buffer is refused again, with the same two indices, and the same map
    text on another shape is checked afresh."""
    for _ in range(2):
        sch = Schedule(matmul)
        check_refused(sch, lambda s: s.transform_layout("C", ("write", 0),
                                                        lambda i, j: (i // 4, j % 8)),
                      r"not injective on 'C': \[0, 0\] and \[0, 8\]")
    tall = make_matmul(4, 8, 8)           # C is 4 x 8: j % 8 == j, i // 4 == 0
    sch = Schedule(tall)
    check_refused(sch, lambda s: s.transform_layout("C", ("write", 0),
                                                    lambda i, j: (i // 4, j % 8)),
                  r"not injective on 'C': \[0, 0\] and \[1, 0\]")
    one_row = make_matmul(1, 8, 8)         # C is 1 x 8: the map keeps every element apart
    sch = Schedule(one_row)
    sch.transform_layout("C", ("write", 0), lambda i, j: (i // 4, j % 8))
    check_numeric(sch.mod["main"], lambda a, b, c: (a @ b).reshape(1, 8))
