"""Normalize: nested calls get their own bindings; bodies and If arms end in leaves."""
import numpy as np
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax import op
from mlcbench.script import ir as I, relax as R

SINFO = relax.TensorStructInfo((2,), "float32")


@I.ir_module
class Flattened:
    @R.function
    def main(x: R.Tensor((2,), "float32"), y: R.Tensor((2,), "float32")):
        gv = R.multiply(x, y)
        gv1 = R.add(gv, y)
        gv2 = R.exp(gv1)
        return (gv2, x)


@I.ir_module
class IfArms:
    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")):
        if c:
            lv = R.exp(x)
            r = R.add(lv, x)
        else:
            r = R.negative(x)
        return r


@I.ir_module
class IfArmsNormalized:
    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32")):
        if c:
            lv = R.exp(x)
            gv = R.add(lv, x)
            r = gv
        else:
            gv1 = R.negative(x)
            r = gv1
        return r


def _module(func):
    return tvm.IRModule({"main": func.with_attr("global_symbol", "main")})


def test_nested_calls_and_returned_call_get_bindings():
    x, y = relax.Var("x", SINFO), relax.Var("y", SINFO)
    nested = relax.Function([x, y], relax.Tuple(
        [op.exp(op.add(op.multiply(x, y), y)), x]))
    tvm.ir.assert_structural_equal(relax.transform.Normalize()(_module(nested)), Flattened)


def test_if_arms_end_in_leaves():
    tvm.ir.assert_structural_equal(relax.transform.Normalize()(IfArms), IfArmsNormalized)


def test_normal_form_returns_the_same_module():
    assert relax.transform.Normalize()(Flattened) is Flattened
    after = relax.transform.Normalize()(IfArms)
    assert relax.transform.Normalize()(after) is after


def test_empty_blocks_dropped_and_adjacent_blocks_merged():
    x = relax.Var("x", SINFO)
    a, b = relax.Var("a", SINFO), relax.Var("b", SINFO)
    body = relax.SeqExpr([relax.BindingBlock([relax.VarBinding(a, op.exp(x))]),
                          relax.DataflowBlock([]),
                          relax.BindingBlock([relax.VarBinding(b, op.exp(a))])], b)
    after = relax.transform.Normalize()(_module(relax.Function([x], body)))["main"]
    (block,) = after.body.blocks
    assert [binding.var for binding in block.bindings] == [a, b]


def _random_tree(draw_ops, leaves):
    """A nested expression: each op applied to the previous result and a leaf."""
    expr = leaves[0]
    for name, k in draw_ops:
        other = leaves[k % len(leaves)]
        expr = op.exp(expr) if name == "exp" else getattr(op, name)(expr, other)
    return expr


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "multiply", "exp", "subtract"]),
                          st.integers(0, 3)), min_size=1, max_size=8))
def test_random_nested_expressions_become_one_binding_per_call(ops):
    params = [relax.Var(f"p{k}", SINFO) for k in range(3)]
    func = relax.Function(params, _random_tree(ops, params))
    after = relax.transform.Normalize()(_module(func))["main"]
    bindings = [b for block in after.body.blocks for b in block.bindings]
    assert len(bindings) == len(ops)
    for binding in bindings:
        assert all(relax.expr.is_leaf(arg) for arg in binding.value.args)
    assert after.body.body is bindings[-1].var
    assert relax.transform.Normalize()(tvm.IRModule({"main": after}))["main"] is after
    np.testing.assert_equal(after.ret_struct_info.static_shape(), (2,))
