"""RewriteParallelVectorizeUnroll: root-block limits become parallel, vector and
unrolled loops."""
from mlcbench import meta_schedule as ms
from mlcbench.ir import assert_structural_equal
from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from mlcbench.tir.stmt import ForKind
from helpers import space_testing as sp


@T.prim_func
def tiled_matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                 C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    with T.block("root"):
        T.reads()
        T.writes()
        T.block_attr({"meta_schedule.parallel": 32, "meta_schedule.vectorize": 64,
                      "meta_schedule.unroll_explicit": 16})
        for i_0, j_0, i_1, j_1, k_0, i_2, j_2, k_1, i_3, j_3 in T.grid(1, 2, 2, 1, 4, 2, 2, 4,
                                                                        4, 4):
            with T.block("C"):
                v_i = T.axis.spatial(16, i_0 * 16 + i_1 * 8 + i_2 * 4 + i_3)
                v_j = T.axis.spatial(16, j_0 * 8 + j_1 * 8 + j_2 * 4 + j_3)
                v_k = T.axis.reduce(16, k_0 * 4 + k_1)
                with T.init():
                    C[v_i, v_j] = T.float32(0)
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]


@T.prim_func
def tiled_matmul_rewritten(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                           C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for f in T.parallel(4, annotations={"pragma_auto_unroll_max_step": 16,
                                        "pragma_unroll_explicit": 1}):
        for k_0, i_2, j_2, k_1, i_3 in T.grid(4, 2, 2, 4, 4):
            for j_3 in T.vectorized(4):
                with T.block("C"):
                    v_i = T.axis.spatial(16, f // 4 * 16 + f % 2 // 1 * 8 + i_2 * 4 + i_3)
                    v_j = T.axis.spatial(16, f % 4 // 2 * 8 + f % 1 * 8 + j_2 * 4 + j_3)
                    v_k = T.axis.reduce(16, k_0 * 4 + k_1)
                    T.reads(A[v_i, v_k], B[v_k, v_j])
                    T.writes(C[v_i, v_j])
                    with T.init():
                        C[v_i, v_j] = T.float32(0)
                    C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]


@T.prim_func
def small_copy(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    with T.block("root"):
        T.reads()
        T.writes()
        T.block_attr({"meta_schedule.parallel": 32, "meta_schedule.vectorize": 64})
        for i, j in T.grid(4, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)


@T.prim_func
def small_transpose(A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    with T.block("root"):
        T.reads()
        T.writes()
        T.block_attr({"meta_schedule.parallel": 32, "meta_schedule.vectorize": 64})
        for i, j in T.grid(4, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vj, vi]


@T.prim_func
def row_sum(A: T.Buffer((4, 64), "float32"), S: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    with T.block("root"):
        T.reads()
        T.writes()
        T.block_attr({"meta_schedule.parallel": 32, "meta_schedule.vectorize": 64,
                      "meta_schedule.unroll_explicit": 64})
        for i, k in T.grid(4, 64):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]


def _rewrite(func):
    sch = Schedule(func)
    assert ms.postproc.RewriteParallelVectorizeUnroll().apply(sch)
    return sch


def _loops(sch, block):
    return [sch.get(loop) for loop in sch.get_loops(sch.get_block(block))]


def test_tiled_matmul_gets_parallel_outer_tiles_and_vector_columns():
    sch = _rewrite(tiled_matmul)
    assert_structural_equal(sch.mod["main"], tiled_matmul_rewritten)
    sp.check_numeric(sch.mod, lambda a, b: a @ b)
    assert sp.replay(tiled_matmul, sch.trace).mod.script() == sch.mod.script()


def test_contiguous_inner_loops_fuse_into_one_vector_loop():
    sch = _rewrite(small_copy)
    (loop,) = _loops(sch, "B")
    assert (loop.kind, loop.extent.value) == (ForKind.VECTORIZED, 32)
    sp.check_numeric(sch.mod, lambda a: a * 2)


def test_a_strided_walk_vectorizes_only_the_innermost_loop():
    sch = _rewrite(small_transpose)
    outer, inner = _loops(sch, "B")
    assert (outer.kind, inner.kind) == (ForKind.PARALLEL, ForKind.VECTORIZED)
    sp.check_numeric(sch.mod, lambda a: a.T)


def test_reduction_loops_are_neither_parallel_nor_vector_but_unrolled():
    sch = _rewrite(row_sum)
    rows, k = _loops(sch, "S")
    assert (rows.kind, k.kind) == (ForKind.PARALLEL, ForKind.SERIAL)
    assert rows.annotations == {"pragma_auto_unroll_max_step": 64, "pragma_unroll_explicit": 1}
    assert "meta_schedule" not in sch.mod.script()
    sp.check_numeric(sch.mod, lambda a: a.sum(axis=1))


def test_unannotated_functions_are_unchanged():
    mod, _ = sp.matmul(16)
    sch = Schedule(mod)
    before = sch.mod
    assert ms.postproc.RewriteParallelVectorizeUnroll().apply(sch) and sch.mod is before


def test_parallel_loop_count_includes_the_loop_that_passes_the_limit():
    from mlcbench.meta_schedule.postproc.rewrite_parallel_vectorize_unroll import (
        parallel_loop_count)
    assert parallel_loop_count([1, 4, 128, 256], 32) == 3
    assert parallel_loop_count([1, 4], 32) == 2
    assert parallel_loop_count([64], 32) == 1
    assert parallel_loop_count([], 32) == 0


def test_a_loop_that_a_block_below_ignores_is_not_parallel():
    # the max of each row recomputed inside the loop over columns: running that loop
    # in parallel would race on T_softmax_maxelem
    mod, reference = sp.softmax()
    sch = Schedule(mod)
    sch.compute_at(sch.get_block("T_softmax_maxelem"), sch.get_loops("T_softmax_exp")[1])
    root = sch.get_block("root")
    sch.annotate(root, "meta_schedule.parallel", 64)
    sch.annotate(root, "meta_schedule.vectorize", 64)
    assert ms.postproc.RewriteParallelVectorizeUnroll().apply(sch)
    rows, columns = _loops(sch, "T_softmax_exp")
    assert rows.kind == ForKind.PARALLEL and columns.kind == ForKind.SERIAL
    sp.check_numeric(sch.mod, reference)
