"""The dataflow pattern language: matching through bindings and rewriting calls."""
import numpy as np

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax.dpl import is_const, is_op, is_var, rewrite_call, wildcard
from mlcbench.script import relax as R


def tensor(name, shape=(2, 3)):
    return relax.Var(name, R.Tensor(shape, "float32"))


def test_call_patterns_match_ops_and_arguments():
    x, y = tensor("x"), tensor("y")
    call = relax.op.add(x, relax.const(np.ones((2, 3), "float32")))
    assert is_op("relax.add")(wildcard(), is_const()).match(call)
    assert is_op("relax.add")(is_var("x"), wildcard()).match(call)
    assert not is_op("relax.add")(is_var("y"), wildcard()).match(call)
    assert not is_op("relax.multiply")(wildcard(), wildcard()).match(call)
    assert not is_op("relax.add")(wildcard(), is_const()).match(relax.op.add(x, y))
    either = is_op("relax.add") | is_op("relax.subtract")
    assert either(wildcard(), wildcard()).match(relax.op.subtract(x, y))


def test_attribute_patterns():
    x = tensor("x")
    pattern = is_op("relax.sum")(wildcard()).has_attr({"keepdims": True})
    assert pattern.match(relax.op.sum(x, axis=1, keepdims=True))
    assert not pattern.match(relax.op.sum(x, axis=1))


@R.function
def before(a: R.Tensor((2, 3), "float32"), b: R.Tensor((2, 3), "float32"),
           c: R.Tensor((2, 3), "float32")):
    with R.dataflow():
        lv0 = R.multiply(a, b)
        lv1 = R.add(lv0, c)
        gv = R.nn.relu(lv1)
        R.output(gv)
    return gv


@R.function
def after(a: R.Tensor((2, 3), "float32"), b: R.Tensor((2, 3), "float32"),
          c: R.Tensor((2, 3), "float32")):
    R.func_attr({"global_symbol": "before"})
    with R.dataflow():
        lv1 = R.ewise_fma(a, b, c)
        gv = R.nn.relu(lv1)
        R.output(gv)
    return gv


def test_rewrite_call_fuses_multiply_add_through_bindings():
    a, b, c = wildcard(), wildcard(), wildcard()
    pattern = is_op("relax.add")(is_op("relax.multiply")(a, b), c)

    def rewriter(expr, matches):
        return relax.op.ewise_fma(matches[a], matches[b], matches[c])

    rewritten = rewrite_call(pattern, rewriter, before)
    tvm.ir.assert_structural_equal(rewritten, after)


def test_rewrite_call_leaves_non_matching_functions_alone():
    pattern = is_op("relax.subtract")(wildcard(), wildcard())
    assert rewrite_call(pattern, lambda e, m: e, before) is before
