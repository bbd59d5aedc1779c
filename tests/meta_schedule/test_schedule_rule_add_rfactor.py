"""AddRFactor: long reductions with few outputs get rfactor design spaces."""
from dataclasses import replace

from hypothesis import given, settings, strategies as st

from mlcbench import te
from mlcbench.ir import assert_structural_equal
from mlcbench.meta_schedule.schedule_rule import AddRFactor
from mlcbench.script import tir as T
from mlcbench.tir import Schedule, Trace
from helpers import space_testing as sp


@T.prim_func
def row_sum_rf_inner(X: T.Buffer((4, 64), "float32"), S: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    S_rf = T.alloc_buffer((4, 16))
    for i, k_0, k_1 in T.grid(4, 4, 16):
        with T.block("S_rf"):
            vk_1_rf, v_i, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
            T.reads(X[v_i, vk_0 * 16 + vk_1_rf])
            T.writes(S_rf[v_i, vk_1_rf])
            with T.init():
                S_rf[v_i, vk_1_rf] = T.float32(0)
            S_rf[v_i, vk_1_rf] = S_rf[v_i, vk_1_rf] + X[v_i, vk_0 * 16 + vk_1_rf]
    for i, k_1 in T.grid(4, 16):
        with T.block("S"):
            vk_1_rf, v_i = T.axis.remap("RS", [k_1, i])
            T.reads(S_rf[v_i, vk_1_rf])
            T.writes(S[v_i])
            T.block_attr({"meta_schedule.random_compute_producer": 1})
            with T.init():
                S[v_i] = T.float32(0)
            S[v_i] = S[v_i] + S_rf[v_i, vk_1_rf]


def row_sum(rows=4, cols=64):
    x = te.placeholder((rows, cols), name="X")
    k = te.reduce_axis((0, cols), name="k")
    return sp._module(x, te.compute((rows,), lambda i: te.sum(x[i, k], axis=k), name="S"))


def _spaces(mod, block, seed=0, **kwargs):
    sch = Schedule(mod, seed=seed)
    rule = sp.initialized(AddRFactor(**kwargs))
    return rule.apply(sch, sch.get_block(block))


def test_row_sum_gets_an_rfactor_space_per_split_loop_and_the_original():
    mod = row_sum()
    spaces = _spaces(mod, "S", max_innermost_factor=64)
    assert len(spaces) == 3
    assert_structural_equal(spaces[-1].mod, mod)
    insts = [replace(i, decision=[4, 16]) if i.kind == "sample_perfect_tile" else i
             for i in spaces[1].trace.insts]
    assert_structural_equal(sp.replay(mod, Trace(insts)).mod["main"], row_sum_rf_inner)
    for space in spaces:
        sp.check_numeric(space.mod, lambda x: x.sum(axis=1))


def test_reductions_with_enough_spatial_work_are_left_alone():
    mod, _ = sp.matmul(64)                 # 4096 outputs, reduction of 64
    (only,) = _spaces(mod, "C")
    assert_structural_equal(only.mod, mod)
    (only,) = _spaces(row_sum(cols=2), "S")     # reduction no longer than the cores
    assert "rfactor" not in [i.kind for i in only.trace.insts]


def test_a_matmul_with_few_outputs_is_factored():
    mod, reference = sp.matmul(2, 2, 256)     # 4 outputs, reduction of 256
    spaces = _spaces(mod, "C")
    assert len(spaces) == 3
    for space in spaces:
        sp.check_numeric(space.mod, reference)


def test_a_tuple_reduction_that_rfactor_refuses_keeps_only_the_original():
    mod, _ = sp.layer_norm()
    (only,) = _spaces(mod, "T_layer_norm_red_temp")
    assert_structural_equal(only.mod, mod)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2 ** 16), which=st.integers(0, 2))
def test_random_rfactors_of_softmax_match_numpy(seed, which):
    mod, reference = sp.softmax(cols=32)
    space = _spaces(mod, "T_softmax_expsum", seed=seed)[which]
    sch = Schedule(mod, seed=seed + 1)
    sp.without_decisions(space.trace).apply_to_schedule(sch)
    sp.check_numeric(sch.mod, reference)
