"""CanonicalizeBindings: var-to-var bindings disappear; dataflow outputs stay visible."""
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax import op
from mlcbench.script import ir as I, relax as R


@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv0 = R.exp(x)
            lv1 = lv0
            lv2 = R.add(lv1, x)
            lv3 = lv2
            gv = lv3
            gv2 = gv
            R.output(gv, gv2)
        y = gv2
        z = R.match_cast(y, R.Tensor((4,), "float32"))
        w = R.match_cast(z, R.Tensor(("n",), "float32"))
        return (z, w, gv)


@I.ir_module
class After:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv0 = R.exp(x)
            gv = R.add(lv0, x)
            R.output(gv)
        w = R.match_cast(gv, R.Tensor(("n",), "float32"))
        return (gv, w, gv)


def test_trivial_bindings_removed_and_output_bound_directly():
    tvm.ir.assert_structural_equal(relax.transform.CanonicalizeBindings()(Before), After)


@I.ir_module
class LooserOutput:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv0 = R.exp(x)
            gv: R.Tensor(ndim=1, dtype="float32") = lv0
            R.output(gv)
        return gv


def test_output_with_other_struct_info_is_kept():
    """``gv`` is looser than ``lv0``; renaming ``lv0`` would change its struct info and
    replacing ``gv`` by ``lv0`` would leak a dataflow var: the binding stays."""
    assert relax.transform.CanonicalizeBindings()(LooserOutput) is LooserOutput


def test_canonical_module_is_returned_as_is():
    assert relax.transform.CanonicalizeBindings()(After) is After


@I.ir_module
class InBranches:
    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")):
        y = x
        if c:
            a = y
            r = R.exp(a)
        else:
            r = R.negative(y)
        s = r
        return s


@I.ir_module
class InBranchesAfter:
    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")):
        if c:
            r = R.exp(x)
        else:
            r = R.negative(x)
        return r


def test_aliases_inside_if_arms():
    tvm.ir.assert_structural_equal(relax.transform.CanonicalizeBindings()(InBranches),
                                   InBranchesAfter)


def _chain(ops, aliases, sinfo):
    """main(x): a dataflow block applying ``ops`` in turn; ``aliases[k]`` extra
    var-to-var bindings after step k. Returns the module."""
    x = relax.Var("x", sinfo)
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            value = x
            for name, copies in zip(ops, aliases):
                value = bb.emit(op.exp(value) if name == "exp" else
                                getattr(op, name)(value, x))
                for _ in range(copies):
                    value = bb.emit(value)
            out = bb.emit_output(value)
            for _ in range(aliases[-1] if aliases else 0):
                out = bb.emit_output(out)
        bb.emit_func_output(out)
    return bb.get()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["add", "multiply", "exp"]), min_size=1, max_size=6),
       st.data())
def test_random_aliases_canonicalize_to_the_program_without_them(ops, data):
    sinfo = relax.TensorStructInfo((3,), "float32")
    aliases = data.draw(st.lists(st.integers(0, 3), min_size=len(ops), max_size=len(ops)))
    with_aliases = relax.transform.CanonicalizeBindings()(_chain(ops, aliases, sinfo))
    without = relax.transform.CanonicalizeBindings()(_chain(ops, [0] * len(ops), sinfo))
    tvm.ir.assert_structural_equal(with_aliases, without)
    (block,) = with_aliases["main"].body.blocks
    assert len(block.bindings) == len(ops)
    assert not any(isinstance(b.value, relax.Var) for b in block.bindings)
    assert not isinstance(with_aliases["main"].body.body, relax.DataflowVar)
