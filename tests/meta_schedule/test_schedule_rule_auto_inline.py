"""AutoInline: cheap elementwise producers are inlined into their consumers."""
import numpy as np
import pytest

from mlcbench import meta_schedule as ms
from mlcbench.ir import assert_structural_equal
from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers import space_testing as sp


@T.prim_func
def add_relu(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    B = T.alloc_buffer((8, 16))
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(8, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(B[vi, vj], T.float32(0))


@T.prim_func
def add_relu_inlined(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j in T.grid(8, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = T.max(A[vi, vj] + T.float32(1), T.float32(0))


@T.prim_func
def transpose_relu(A: T.Buffer((16, 8), "float32"), C: T.Buffer((8, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    B = T.alloc_buffer((8, 16))
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]
    for i, j in T.grid(8, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.max(B[vi, vj], T.float32(0))


@T.prim_func
def exp_sum(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    B = T.alloc_buffer((8, 16))
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.exp(A[vi, vj])
    for i, k in T.grid(8, 16):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + B[vi, vk]


@T.prim_func
def constant_times(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = T.float32(3)
    for i, k in T.grid(16, 16):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vk] * B[vi]


def _apply(func, block_name, **kwargs):
    sch = Schedule(func)
    rule = ms.schedule_rule.AutoInline(**kwargs)
    (result,) = rule.apply(sch, sch.get_block(block_name))
    return result


def test_elementwise_producer_is_inlined():
    sch = _apply(add_relu, "B")
    assert_structural_equal(sch.mod["main"], add_relu_inlined)
    sp.check_numeric(sch.mod, lambda a: np.maximum(a + 1, 0))


def test_output_block_and_root_stay():
    sch = Schedule(add_relu)
    before = sch.mod
    rule = ms.schedule_rule.AutoInline()
    assert rule.apply(sch, sch.get_block("C"))[0].mod is before
    assert rule.apply(sch, sch.get_block("root"))[0].mod is before


def test_unordered_reads_stay_unless_allowed():
    assert _apply(transpose_relu, "B").mod["main"] is transpose_relu
    sch = _apply(transpose_relu, "B", require_ordered=False)
    assert 'T.block("B")' not in sch.mod.script()
    sp.check_numeric(sch.mod, lambda a: np.maximum(a.T, 0))


def test_disallowed_op_stays_in_a_function_with_reductions():
    assert _apply(exp_sum, "B", disallow_op=["tir.exp"]).mod["main"] is exp_sum
    sch = _apply(exp_sum, "B", disallow_op=[])
    assert 'T.block("B")' not in sch.mod.script()
    sp.check_numeric(sch.mod, lambda a: np.exp(a).sum(axis=1))


def test_padding_with_if_then_else_stays_in_conv2d():
    mod, _ = sp.conv2d()
    sch = Schedule(mod)
    (result,) = ms.schedule_rule.AutoInline().apply(sch, sch.get_block("pad_temp"))
    assert 'T.block("pad_temp")' in result.mod.script()


def test_constant_tensor_is_inlined():
    sch = _apply(constant_times, "B")
    assert 'T.block("B")' not in sch.mod.script()
    sp.check_numeric(sch.mod, lambda a: np.full(16, 3 * a.sum(), dtype="float32"))


def test_read_write_pattern():
    from mlcbench.meta_schedule.schedule_rule.auto_inline import read_write_pattern
    sch = Schedule(transpose_relu)
    block = sch.get(sch.get_block("B"))
    assert read_write_pattern(block.reads[0], block.writes[0]) == (True, False)
    sch = Schedule(add_relu)
    block = sch.get(sch.get_block("B"))
    assert read_write_pattern(block.reads[0], block.writes[0]) == (True, True)


@pytest.mark.parametrize("name", ["add_relu", "transpose_relu"])
def test_post_order_apply_with_auto_inline_replays(name):
    func = {"add_relu": add_relu, "transpose_relu": transpose_relu}[name]
    generator = sp.initialized(ms.PostOrderApply(sch_rules=[ms.schedule_rule.AutoInline()],
                                                 postprocs=[], mutator_probs={}))
    (space,) = generator.generate_design_space(func)
    assert 'T.block("B")' not in space.mod.script() or name == "transpose_relu"
    assert_structural_equal(sp.replay(Schedule(func).mod, space.trace).mod, space.mod)
