"""ToNonDataflow: dataflow blocks become binding blocks, DataflowVars become Vars."""
import mlcbench as tvm
from mlcbench import relax
from mlcbench.script import ir as I, relax as R, tir as T


@T.prim_func
def relu(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("Y"):
            vi = T.axis.remap("S", [i])
            Y[vi] = T.max(X[vi], T.float32(0))


@I.ir_module
class Before:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        with R.dataflow():
            lv0 = R.call_dps_packed("env.relu", (x,), R.Tensor((4,), "float32"))
            lv1 = R.match_cast(lv0, R.Tensor((4,), "float32"))
            gv = R.call_dps_packed("env.relu", (lv1,), R.Tensor((4,), "float32"))
            R.output(gv)
        y = gv
        return y


@I.ir_module
class Expected:
    @R.function
    def main(x: R.Tensor((4,), "float32")):
        lv0 = R.call_dps_packed("env.relu", (x,), R.Tensor((4,), "float32"))
        lv1 = R.match_cast(lv0, R.Tensor((4,), "float32"))
        gv = R.call_dps_packed("env.relu", (lv1,), R.Tensor((4,), "float32"))
        y = gv
        return y


def test_dataflow_block_becomes_binding_block():
    after = relax.transform.ToNonDataflow()(Before)
    tvm.ir.assert_structural_equal(after, Expected)
    block = after["main"].body.blocks[0]
    assert type(block) is relax.BindingBlock
    assert all(type(b.var) is relax.Var for b in block.bindings)


def test_dataflow_vars_are_told_apart_from_vars():
    # The comparison above could not pass by accident: the two forms differ.
    assert not tvm.ir.structural_equal(Before, Expected)


def test_module_without_dataflow_is_returned_unchanged():
    assert relax.transform.ToNonDataflow()(Expected) is Expected


def test_prim_funcs_are_left_alone():
    mod = Before.with_function("relu", relu)
    after = relax.transform.ToNonDataflow()(mod)
    assert after["relu"] is relu
    assert type(after["main"].body.blocks[0]) is relax.BindingBlock
