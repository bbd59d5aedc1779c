"""LowerInitBlock: T.init() becomes `if <reduce vars at their min>: init`."""
import pytest
from helpers.lowering_programs import block, buf, loops, prim_func, root

import mlcbench
from mlcbench.tir.op import all as all_of
from mlcbench.tir import BufferStore, IfThenElse, const, seq
from mlcbench.tir.transform import LowerInitBlock


def _row_sum(init_dom=16, spatial_init=False):
    A, S = buf("A", (4, 16)), buf("S", (4,))
    low = init_dom[0] if isinstance(init_dom, tuple) else 0
    def body(lower_init):
        def update(vi, vk):
            return BufferStore(S, S[vi] + A[vi, vk - low], (vi,))
        def init(vi, vk):
            return BufferStore(S, const(0.0), (vi,))
        def lowered(vi, vk):
            cond = all_of(*([vi == 0] if spatial_init else []), vk == low)
            return seq(IfThenElse(cond, init(vi, vk)), update(vi, vk))
        kinds = [("R" if spatial_init else "S", 4), ("R", init_dom)]
        return loops([4, 16], lambda i, k: block(
            "S", kinds, [i, k + low], lowered if lower_init else update,
            init=None if lower_init else init))
    before = prim_func([A, S], root(body(False)))
    after = prim_func([A, S], root(body(True)))
    return before, after


def _run(func):
    return LowerInitBlock()(mlcbench.IRModule.from_expr(func))["main"]


def test_init_guarded_by_reduce_var_at_zero():
    before, expected = _row_sum()
    mlcbench.assert_structural_equal(_run(before), expected)


def test_nonzero_domain_min_is_used():
    before, expected = _row_sum(init_dom=(2, 16))
    mlcbench.assert_structural_equal(_run(before), expected)


def test_all_reduce_vars_enter_the_condition():
    before, expected = _row_sum(spatial_init=True)
    mlcbench.assert_structural_equal(_run(before), expected)


def test_block_without_init_is_left_alone():
    _, lowered = _row_sum()
    assert _run(lowered) is lowered


def test_wrong_condition_is_detected():
    before, _ = _row_sum()
    _, other = _row_sum(init_dom=(2, 16))
    with pytest.raises(AssertionError):
        mlcbench.assert_structural_equal(_run(before), other)


def test_tvmscript_matmul():
    from mlcbench.script import tir as T

    @T.prim_func
    def before(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
               Y: T.Buffer((8, 8), "float32")):
        for i, j, k in T.grid(8, 8, 8):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(Y[vi, vj], A[vi, vk], B[vk, vj])
                T.writes(Y[vi, vj])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]

    @T.prim_func
    def expected(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
                 Y: T.Buffer((8, 8), "float32")):
        for i, j, k in T.grid(8, 8, 8):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(Y[vi, vj], A[vi, vk], B[vk, vj])
                T.writes(Y[vi, vj])
                if vk == 0:
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]

    mlcbench.assert_structural_equal(_run(before), expected)
