"""BindParams: parameters become constants, symbolic extents become numbers."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir import IRError
from mlcbench.script import ir as I, relax as R, tir as T

W = np.arange(8, dtype="float32").reshape(4, 2)


@I.ir_module
class Linear:
    @R.function
    def main(x: R.Tensor((1, 4), "float32"), w: R.Tensor((4, 2), "float32")):
        with R.dataflow():
            gv = R.matmul(x, w)
            R.output(gv)
        return gv


@I.ir_module
class LinearBound:
    @R.function
    def main(x: R.Tensor((1, 4), "float32")):
        R.func_attr({"global_symbol": "main"})
        with R.dataflow():
            gv = R.matmul(x, R.const([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]], "float32"))
            R.output(gv)
        return gv


@I.ir_module
class Symbolic:
    @R.function
    def main(x: R.Tensor(("n", "k"), "float32"), w: R.Tensor(("k", "m"), "float32")):
        with R.dataflow():
            lv = R.matmul(x, w)
            y = R.match_cast(lv, R.Tensor(("n", "m"), "float32"))
            gv = R.reshape(y, R.shape(["n * 2", "m // 2"]))
            R.output(gv)
        return gv


@I.ir_module
class SymbolicBound:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32")) -> R.Tensor(("n * 2", 1), "float32"):
        R.func_attr({"global_symbol": "main"})
        with R.dataflow():
            lv = R.matmul(x, R.const([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]], "float32"))
            y = R.match_cast(lv, R.Tensor(("n", 2), "float32"))
            gv = R.reshape(y, R.shape(["n * 2", 1]))
            R.output(gv)
        return gv


def test_bind_by_name():
    tvm.ir.assert_structural_equal(relax.transform.BindParams("main", {"w": W})(Linear),
                                   LinearBound)


def test_bind_by_var_and_ndarray():
    w_var = Linear["main"].params[1]
    after = relax.transform.BindParams("main", {w_var: tvm.nd.array(W)})(Linear)
    tvm.ir.assert_structural_equal(after, LinearBound)


def test_symbolic_extent_takes_the_array_extent():
    after = relax.transform.BindParams("main", {"w": W})(Symbolic)
    tvm.ir.assert_structural_equal(after, SymbolicBound)


def test_bound_constant_holds_the_array():
    after = relax.transform.BindParams("main", {"w": W})(Linear)
    constant = after["main"].body.blocks[0].bindings[0].value.args[1]
    np.testing.assert_array_equal(constant.data.numpy(), W)


def test_nothing_to_bind_returns_the_same_module():
    assert relax.transform.BindParams("main", {})(Linear) is Linear


def test_other_functions_are_untouched():
    @I.ir_module
    class Two:
        @T.prim_func
        def copy(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.remap("S", [i])
                    B[vi] = A[vi]

        @R.function
        def main(x: R.Tensor((4,), "float32")):
            gv = R.call_tir(cls.copy, (x,), R.Tensor((4,), "float32"))
            return gv

    after = relax.transform.BindParams("main", {"x": np.ones(4, "float32")})(Two)
    assert after["copy"] is Two["copy"] and not after["main"].params


@pytest.mark.parametrize("params, message", [
    ({"w": np.zeros((4, 3), "float32")}, r"parameter 'w' is Tensor\(\(4, 2\), float32\), but "
                                         r"it is bound to an array of shape \(4, 3\).*axis 1"),
    ({"w": np.zeros((4, 2), "float64")}, r"dtype float64 != float32"),
    ({"w": np.zeros((8,), "float32")}, r"1 dimensions, expected 2"),
    ({"v": W}, r"no parameter named 'v'; its parameters are \['x', 'w'\]"),
    ({"w": W.tolist()}, r"numpy array or an NDArray, found list"),
])
def test_mismatches_are_reported(params, message):
    with pytest.raises(IRError, match=message):
        relax.transform.BindParams("main", params)(Linear)


def test_symbolic_extent_must_agree_between_parameters():
    params = {"x": np.zeros((2, 3), "float32"), "w": np.zeros((4, 5), "float32")}
    with pytest.raises(IRError, match="symbolic dimension 'k' would be 4 here but is 3"):
        relax.transform.BindParams("main", params)(Symbolic)


def test_unknown_function_and_prim_func_are_refused():
    with pytest.raises(IRError, match="no function 'forward'"):
        relax.transform.BindParams("forward", {"w": W})(Linear)
    mod = tvm.IRModule({"f": tvm.te.create_prim_func(_te_copy())})
    with pytest.raises(IRError, match="only the parameters of a Relax function"):
        relax.transform.BindParams("f", {"A": W})(mod)


def _te_copy():
    a = tvm.te.placeholder((4,), name="A")
    return [a, tvm.te.compute((4,), lambda i: a[i], name="B")]


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 6), k=st.integers(1, 6), m=st.integers(1, 6),
       dtype=st.sampled_from(["float32", "int32"]))
def test_random_shapes_fix_every_symbolic_dimension(n, k, m, dtype):
    bb = relax.BlockBuilder()
    dims = {name: tvm.tir.Var(name, "int64") for name in "nkm"}
    x = relax.Var("x", relax.TensorStructInfo((dims["n"], dims["k"]), dtype))
    w = relax.Var("w", relax.TensorStructInfo((dims["k"], dims["m"]), dtype))
    with bb.function("main", [x, w]):
        gv = bb.emit(relax.op.matmul(x, w))
        bb.emit_func_output(gv)
    array = np.arange(k * m).reshape(k, m).astype(dtype)
    after = relax.transform.BindParams("main", {"w": array})(bb.get())["main"]
    (x_after,) = after.params
    assert x_after.struct_info.dims[1].value == k
    assert after.ret_struct_info.dims[1].value == m
    assert after.ret_struct_info.dims[0] is x_after.struct_info.dims[0]
    np.testing.assert_array_equal(after.body.blocks[0].bindings[0].value.args[1].data.numpy(),
                                  array)
