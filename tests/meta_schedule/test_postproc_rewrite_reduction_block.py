"""RewriteReductionBlock: every reduction's init becomes its own block."""
from hypothesis import given, settings, strategies as st

from mlcbench import meta_schedule as ms
from mlcbench.ir import assert_structural_equal
from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers import space_testing as sp


@T.prim_func
def vector_matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                  C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j_0, k in T.grid(16, 2, 16):
        for j_1 in T.vectorized(8):
            with T.block("C"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                v_j = T.axis.spatial(16, j_0 * 8 + j_1)
                with T.init():
                    C[v_i, v_j] = T.float32(0)
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]


@T.prim_func
def vector_matmul_decomposed(A: T.Buffer((16, 16), "float32"),
                             B: T.Buffer((16, 16), "float32"),
                             C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j_0 in T.grid(16, 2):
        for j_1_init in T.vectorized(8):
            with T.block("C_init"):
                v_i = T.axis.spatial(16, i)
                v_j = T.axis.spatial(16, j_0 * 8 + j_1_init)
                T.reads()
                T.writes(C[v_i, v_j])
                C[v_i, v_j] = T.float32(0)
        for k in range(16):
            for j_1 in T.vectorized(8):
                with T.block("C_update"):
                    v_i, v_k = T.axis.remap("SR", [i, k])
                    v_j = T.axis.spatial(16, j_0 * 8 + j_1)
                    T.reads(C[v_i, v_j], A[v_i, v_k], B[v_k, v_j])
                    T.writes(C[v_i, v_j])
                    C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]


def test_init_goes_before_the_outermost_reduction_loop_with_its_vector_loop():
    sch = Schedule(vector_matmul)
    assert ms.postproc.RewriteReductionBlock().apply(sch)
    assert_structural_equal(sch.mod["main"], vector_matmul_decomposed)
    sp.check_numeric(sch.mod, lambda a, b: a @ b)
    assert sp.replay(vector_matmul, sch.trace).mod.script() == sch.mod.script()


def test_every_reduction_of_softmax_is_decomposed():
    mod, reference = sp.softmax()
    sch = Schedule(mod)
    assert ms.postproc.RewriteReductionBlock().apply(sch)
    script = sch.mod.script()
    assert "T.init()" not in script
    assert 'T.block("T_softmax_maxelem_init")' in script
    assert 'T.block("T_softmax_expsum_init")' in script
    sp.check_numeric(sch.mod, reference)


def test_functions_without_reductions_are_unchanged():
    sch = Schedule(sp.softmax()[0])
    ms.postproc.RewriteReductionBlock().apply(sch)
    before = sch.mod
    assert ms.postproc.RewriteReductionBlock().apply(sch) and sch.mod is before


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2 ** 16))
def test_decomposing_sampled_conv2d_spaces_matches_numpy(seed):
    mod, reference = sp.conv2d()
    sch = Schedule(mod, seed=seed)
    rule = ms.schedule_rule.MultiLevelTiling()
    spaces = rule.apply(sch, sch.get_block("conv2d_nchw"))
    space = spaces[seed % len(spaces)]
    assert ms.postproc.RewriteReductionBlock().apply(space)
    assert "T.init()" not in space.mod.script()
    sp.check_numeric(space.mod, reference)
