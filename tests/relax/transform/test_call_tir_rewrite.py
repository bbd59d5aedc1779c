"""CallTIRRewrite: destination-passing calls become explicit allocations plus calls."""
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir import IRError
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
    def split(X: T.Buffer((4,), "float32"), A: T.Buffer((2,), "float32"),
              B: T.Buffer((2,), "int32")):
        for i in range(2):
            with T.block("AB"):
                vi = T.axis.remap("S", [i])
                A[vi] = X[vi]
                B[vi] = T.Cast("int32", X[vi + 2])

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        lv0 = R.call_tir(cls.relu, (x,), R.Tensor((4,), "float32"))
        lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((4,), "float32"))
        lv2 = R.call_tir(cls.split, (lv1,), [R.Tensor((2,), "float32"), R.Tensor((2,), "int32")])
        return lv2


@I.ir_module
class Expected:
    @T.prim_func
    def relu(X: T.Buffer((4,), "float32"), Y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = T.max(X[vi], T.float32(0))

    @T.prim_func
    def split(X: T.Buffer((4,), "float32"), A: T.Buffer((2,), "float32"),
              B: T.Buffer((2,), "int32")):
        for i in range(2):
            with T.block("AB"):
                vi = T.axis.remap("S", [i])
                A[vi] = X[vi]
                B[vi] = T.Cast("int32", X[vi + 2])

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        alloc = R.builtin.alloc_tensor(R.shape([4]), dtype="float32", runtime_device_index=0)
        _: R.Object = cls.relu(x, alloc)
        lv0 = alloc
        alloc1 = R.builtin.alloc_tensor(R.shape([4]), dtype="float32", runtime_device_index=0)
        _1: R.Object = R.ExternFunc("env.relu")(lv0, alloc1)
        lv1 = alloc1
        alloc2 = R.builtin.alloc_tensor(R.shape([2]), dtype="float32", runtime_device_index=0)
        alloc3 = R.builtin.alloc_tensor(R.shape([2]), dtype="int32", runtime_device_index=0)
        _2: R.Object = cls.split(lv1, alloc2, alloc3)
        lv2 = (alloc2, alloc3)
        return lv2


def test_outputs_are_allocated_and_passed_last():
    tvm.ir.assert_structural_equal(relax.transform.CallTIRRewrite()(Before), Expected)


def test_rewritten_module_round_trips_through_text():
    after = relax.transform.CallTIRRewrite()(Before)
    tvm.ir.assert_structural_equal(tvm.script.from_source(after.script()), after)


def test_module_without_dps_calls_is_unchanged():
    assert relax.transform.CallTIRRewrite()(Expected) is Expected


@I.ir_module
class TupleArgsAndBranch:
    @R.function
    def main(x: R.Tensor((4,), "float32"), flag: R.Tensor((), "bool")):
        t = (x, x)
        if flag:
            y = R.call_dps_packed("env.add", t, R.Tensor((4,), "float32"))
        else:
            y = x
        return y


@I.ir_module
class TupleArgsAndBranchExpected:
    @R.function
    def main(x: R.Tensor((4,), "float32"), flag: R.Tensor((), "bool")):
        t = (x, x)
        if flag:
            arg = t[0]
            arg1 = t[1]
            alloc = R.builtin.alloc_tensor(R.shape([4]), dtype="float32", runtime_device_index=0)
            _: R.Object = R.ExternFunc("env.add")(arg, arg1, alloc)
            ret = alloc
            y: R.Tensor((4,), "float32") = ret
        else:
            y: R.Tensor((4,), "float32") = x
        return y


def test_tuple_variable_arguments_and_calls_inside_if_arms():
    after = relax.transform.CallTIRRewrite()(TupleArgsAndBranch)
    tvm.ir.assert_structural_equal(after, TupleArgsAndBranchExpected)


def test_tir_vars_are_passed_after_the_outputs():
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    gv = tvm.ir.GlobalVar("scale")
    call = relax.call_tir(gv, (x,), relax.TensorStructInfo((4,), "float32"), tir_vars=[3])
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        out = bb.emit(call)
        bb.emit_func_output(out)
    after = relax.transform.CallTIRRewrite()(bb.get())
    kernel_call = after["main"].body.blocks[0].bindings[1].value
    assert kernel_call.op is gv
    assert [type(a).__name__ for a in kernel_call.args] == ["Var", "Var", "ShapeExpr"]


def test_output_of_unknown_shape_is_refused():
    x = relax.Var("x", relax.TensorStructInfo(dtype="float32", ndim=1))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        out = bb.emit(relax.call_dps_packed("env.f", (x,), relax.TensorStructInfo(
            dtype="float32", ndim=1)))
        bb.emit_func_output(out)
    with pytest.raises(IRError, match="known shape and dtype"):
        relax.transform.CallTIRRewrite()(bb.get())
