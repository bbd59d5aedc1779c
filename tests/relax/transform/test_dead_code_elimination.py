"""DeadCodeElimination: unused pure bindings and unreachable functions disappear."""
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir import IRError
from mlcbench.relax import op
from mlcbench.script import ir as I, relax as R, tir as T


@I.ir_module
class Before:
    @T.prim_func
    def relu(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = T.max(X[vi], T.float32(0))

    @T.prim_func
    def exp(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = T.exp(X[vi])

    @R.function(private=True)
    def helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        y = R.call_tir(cls.exp, (x,), R.Tensor((4,), "float32"))
        return y

    @R.function(private=True)
    def used_helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        y = R.negative(x)
        return y

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv0 = R.exp(x)
            lv1 = R.add(lv0, x)
            lv2: R.Tensor((4,), "float32") = cls.used_helper(x)
            gv = R.call_tir(cls.relu, (lv2,), R.Tensor((4,), "float32"))
            unused_out = R.multiply(x, x)
            R.output(gv, unused_out)
        return gv


@I.ir_module
class After:
    @T.prim_func
    def relu(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = T.max(X[vi], T.float32(0))

    @R.function(private=True)
    def used_helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        y = R.negative(x)
        return y

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv2: R.Tensor((4,), "float32") = cls.used_helper(x)
            gv = R.call_tir(cls.relu, (lv2,), R.Tensor((4,), "float32"))
            R.output(gv)
        return gv


def test_unused_bindings_and_unreachable_functions_are_removed():
    tvm.ir.assert_structural_equal(relax.transform.DeadCodeElimination()(Before), After)


def test_named_entry_functions_are_kept_with_what_they_reach():
    after = relax.transform.DeadCodeElimination(["helper"])(Before)
    assert sorted(gv.name_hint for gv in after) == ["exp", "helper", "main", "relu",
                                                    "used_helper"]
    with pytest.raises(IRError, match="entry function 'forward' is not in the module"):
        relax.transform.DeadCodeElimination(["forward"])(Before)


def test_nothing_dead_returns_the_same_module():
    assert relax.transform.DeadCodeElimination()(After) is After
    tir_only = tvm.IRModule({"relu": After["relu"]})
    assert relax.transform.DeadCodeElimination()(tir_only) is tir_only


@I.ir_module
class Effects:
    @R.function(pure=False, private=True)
    def log(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x

    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        a: R.Tensor((4,), "float32") = cls.log(x)
        b = R.ExternFunc("env.print")(x, sinfo_args=[R.Object])
        c = R.match_cast(x, R.Tensor(("n",), "float32"))
        d = R.match_cast(x, R.Tensor((4,), "float32"))
        e = R.exp(x)
        return x


def test_impure_calls_and_match_casts_that_define_symbols_stay():
    after = relax.transform.DeadCodeElimination()(Effects)["main"]
    kept = [b.var.name_hint for b in after.body.blocks[0].bindings]
    assert kept == ["a", "b", "c"]


@I.ir_module
class Branches:
    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")):
        if c:
            dead = R.exp(x)
            r = R.add(x, x)
        else:
            r = R.negative(x)
        return r


@I.ir_module
class BranchesAfter:
    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")):
        if c:
            r = R.add(x, x)
        else:
            r = R.negative(x)
        return r


def test_bindings_inside_if_arms():
    tvm.ir.assert_structural_equal(relax.transform.DeadCodeElimination()(Branches),
                                   BranchesAfter)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_random_graph_keeps_exactly_the_ancestors_of_the_result(data):
    """Bindings v_k = add(a, b) over earlier values; DCE must keep v_k iff the result
    depends on it, which the test computes by its own walk of the graph."""
    count = data.draw(st.integers(1, 12))
    sinfo = relax.TensorStructInfo((3,), "float32")
    x = relax.Var("x", sinfo)
    bb = relax.BlockBuilder()
    operands = {}
    with bb.function("main", [x]):
        with bb.dataflow():
            values = [x]
            for k in range(count):
                a, b = (data.draw(st.integers(0, len(values) - 1)) for _ in range(2))
                operands[k + 1] = (a, b)
                values.append(bb.emit(op.add(values[a], values[b]), f"v{k + 1}"))
            result = data.draw(st.integers(1, count))
            gv = bb.emit_output(values[result])
        bb.emit_func_output(gv)
    needed, work = set(), [result]
    while work:
        k = work.pop()
        if k > 0 and k not in needed:
            needed.add(k)
            work.extend(operands[k])
    after = relax.transform.DeadCodeElimination()(bb.get())["main"]
    kept = [b.var.name_hint for b in after.body.blocks[0].bindings][:-1]
    assert kept == [f"v{k}" for k in sorted(needed)]
