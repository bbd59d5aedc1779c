import pytest

from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import (check_after, check_numeric, check_refused, course_matmul,
                                      make_matmul)


matmul = make_matmul(16, 64, 32)


@T.prim_func
def matmul_blockized_row(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 64), "float32"),
                         C: T.Buffer((16, 64), "float32")):
    for i in range(16):
        with T.block("C_o"):
            vi_o = T.axis.spatial(16, i)
            T.reads(A[vi_o, 0:32], B[0:32, 0:64])
            T.writes(C[vi_o, 0:64])
            for j, k in T.grid(64, 32):
                with T.block("C"):
                    vj, vk = T.axis.remap("SR", [j, k])
                    T.reads(A[vi_o, vk], B[vk, vj])
                    T.writes(C[vi_o, vj])
                    with T.init():
                        C[vi_o, vj] = T.float32(0)
                    C[vi_o, vj] = C[vi_o, vj] + A[vi_o, vk] * B[vk, vj]


@T.prim_func
def matmul_blockized_tile(A: T.Buffer((16, 32), "float32"),
                          B: T.Buffer((32, 64), "float32"),
                          C: T.Buffer((16, 64), "float32")):
    for i, j_0 in T.grid(16, 4):
        for j_1_init in range(16):
            with T.block("C_init"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(64, j_0 * 16 + j_1_init)
                T.reads()
                T.writes(C[vi, vj])
                C[vi, vj] = T.float32(0)
        for k in range(32):
            with T.block("C_update_o"):
                vi_o, vj_o, vk_o = T.axis.remap("SSR", [i, j_0, k])
                T.reads(C[vi_o, vj_o * 16:vj_o * 16 + 16], A[vi_o, vk_o],
                        B[vk_o, vj_o * 16:vj_o * 16 + 16])
                T.writes(C[vi_o, vj_o * 16:vj_o * 16 + 16])
                for j_1 in range(16):
                    with T.block("C_update"):
                        vj_i = T.axis.spatial(16, j_1)
                        T.reads(C[vi_o, vj_o * 16 + vj_i], A[vi_o, vk_o],
                                B[vk_o, vj_o * 16 + vj_i])
                        T.writes(C[vi_o, vj_o * 16 + vj_i])
                        C[vi_o, vj_o * 16 + vj_i] = (C[vi_o, vj_o * 16 + vj_i]
                                                     + A[vi_o, vk_o] * B[vk_o, vj_o * 16 + vj_i])


def _reference(a, b, c):
    return a @ b


def test_blockize_row_keeps_inner_reduction_with_its_init():
    sch = Schedule(matmul)
    _, j, _ = sch.get_loops("C")
    outer = sch.blockize(j)
    assert sch.get(outer).name_hint == "C_o"
    check_after(matmul, sch, matmul_blockized_row)
    check_numeric(sch.mod["main"], _reference)


def test_blockize_split_loop_after_decompose_reduction():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(i, j0, k, j1)
    sch.decompose_reduction(block, k)
    sch.blockize(j1)
    check_after(matmul, sch, matmul_blockized_tile)
    check_numeric(sch.mod["main"], _reference)


@T.prim_func
def course_matmul_blockized(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                            C: T.Buffer((64, 64), "float32")):
    for i_0, j_0, k_0 in T.grid(4, 4, 4):
        with T.block("matmul_o"):
            vi_o, vj_o, vk_o = T.axis.remap("SSR", [i_0, j_0, k_0])
            T.reads(A[vi_o * 16:vi_o * 16 + 16, vk_o * 16:vk_o * 16 + 16],
                    B[vj_o * 16:vj_o * 16 + 16, vk_o * 16:vk_o * 16 + 16])
            T.writes(C[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])
            with T.init():
                for i_1, j_1 in T.grid(16, 16):
                    with T.block("matmul_init"):
                        vi_i_init, vj_i_init = T.axis.remap("SS", [i_1, j_1])
                        T.reads()
                        T.writes(C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init])
                        C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init] = T.float32(0)
            for i_1, j_1, k_1 in T.grid(16, 16, 16):
                with T.block("matmul"):
                    vi_i, vj_i, vk_i = T.axis.remap("SSR", [i_1, j_1, k_1])
                    T.reads(C[vi_o * 16 + vi_i, vj_o * 16 + vj_i],
                            A[vi_o * 16 + vi_i, vk_o * 16 + vk_i],
                            B[vj_o * 16 + vj_i, vk_o * 16 + vk_i])
                    T.writes(C[vi_o * 16 + vi_i, vj_o * 16 + vj_i])
                    C[vi_o * 16 + vi_i, vj_o * 16 + vj_i] = (
                        C[vi_o * 16 + vi_i, vj_o * 16 + vj_i]
                        + A[vi_o * 16 + vi_i, vk_o * 16 + vk_i] * B[vj_o * 16 + vj_i, vk_o * 16 + vk_i])


def test_blockize_moves_the_init_out_when_the_reduction_is_split():
    # course chapter 8: a 16x16 tile of a matmul with its reduction split, as TVM does it
    sch = Schedule(course_matmul)
    i, j, k = sch.get_loops("matmul")
    i, ii = sch.split(i, factors=[None, 16])
    j, ji = sch.split(j, factors=[None, 16])
    k, ki = sch.split(k, factors=[None, 16])
    sch.reorder(i, j, k, ii, ji, ki)
    sch.blockize(ii)
    check_after(course_matmul, sch, course_matmul_blockized)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b.T)


def test_blockize_refuses_to_move_an_init_over_a_loop_mixing_spatial_and_reduction():
    sch = Schedule(matmul)
    i, j, k = sch.get_loops("C")
    k0, k1 = sch.split(k, factors=[None, 16])
    sch.reorder(i, k0, j, k1)
    fused = sch.fuse(j, k1)
    err = check_refused(sch, lambda s: s.blockize(fused),
                        r"blockize: a loop inside 'j_k_1_fused' drives both a spatial and a "
                        r"reduction iterator of block 'C'")
    assert "# <-- here" in str(err)


def test_blockize_refuses_loop_holding_two_blocks():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    i, _, k = sch.get_loops(block)
    sch.decompose_reduction(block, k)
    check_refused(sch, lambda s: s.blockize(i),
                  r"loop 'i' must hold a perfect loop nest around one block; it holds "
                  r"\['C_init', 'C_update'\]")


def test_blockize_refuses_binding_that_does_not_split():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    _, j, k = sch.get_loops(block)
    fused = sch.fuse(j, k)
    _, inner = sch.split(fused, factors=[None, 48])
    check_refused(sch, lambda s: s.blockize(inner),
                  r"the binding vj = .* of block 'C' does not split into \(loops outside "
                  r"'j_k_fused_1'\) \* n \+ \(loops inside it\)")


@T.prim_func
def matmul_unit_split_blockized(A: T.Buffer((16, 32), "float32"),
                                B: T.Buffer((32, 64), "float32"),
                                C: T.Buffer((16, 64), "float32")):
    for i, j_0, j_1 in T.grid(16, 4, 1):
        with T.block("C_o"):
            vi_o = T.axis.spatial(16, i)
            vj_o = T.axis.spatial(4, j_0 + j_1)
            T.reads(A[vi_o, 0:32], B[0:32, vj_o * 16:vj_o * 16 + 16])
            T.writes(C[vi_o, vj_o * 16:vj_o * 16 + 16])
            for j_2, k in T.grid(16, 32):
                with T.block("C"):
                    vj_i, vk = T.axis.remap("SR", [j_2, k])
                    T.reads(A[vi_o, vk], B[vk, vj_o * 16 + vj_i])
                    T.writes(C[vi_o, vj_o * 16 + vj_i])
                    with T.init():
                        C[vi_o, vj_o * 16 + vj_i] = T.float32(0)
                    C[vi_o, vj_o * 16 + vj_i] = (C[vi_o, vj_o * 16 + vj_i]
                                                 + A[vi_o, vk] * B[vk, vj_o * 16 + vj_i])


@T.prim_func
def matmul_unit_split_blockized_dropped(A: T.Buffer((16, 32), "float32"),
                                        B: T.Buffer((32, 64), "float32"),
                                        C: T.Buffer((16, 64), "float32")):
    for i, j_0, j_1 in T.grid(16, 4, 1):
        with T.block("C_o"):
            vi_o, vj_o = T.axis.remap("SS", [i, j_0])
            T.reads(A[vi_o, 0:32], B[0:32, vj_o * 16:vj_o * 16 + 16])
            T.writes(C[vi_o, vj_o * 16:vj_o * 16 + 16])
            for j_2, k in T.grid(16, 32):
                with T.block("C"):
                    vj_i, vk = T.axis.remap("SR", [j_2, k])
                    T.reads(A[vi_o, vk], B[vk, vj_o * 16 + vj_i])
                    T.writes(C[vi_o, vj_o * 16 + vj_i])
                    with T.init():
                        C[vi_o, vj_o * 16 + vj_i] = T.float32(0)
                    C[vi_o, vj_o * 16 + vj_i] = (C[vi_o, vj_o * 16 + vj_i]
                                                 + A[vi_o, vk] * B[vk, vj_o * 16 + vj_i])


@pytest.mark.parametrize("preserve, expected", [
    (True, matmul_unit_split_blockized), (False, matmul_unit_split_blockized_dropped)])
def test_blockize_preserve_unit_iters_keeps_or_drops_the_unit_loop_in_the_binding(preserve,
                                                                                  expected):
    sch = Schedule(matmul)
    _, j, _ = sch.get_loops("C")
    _, _, j_2 = sch.split(j, factors=[4, 1, 16])
    sch.blockize(j_2, preserve_unit_iters=preserve)
    check_after(matmul, sch, expected)
    check_numeric(sch.mod["main"], _reference)
