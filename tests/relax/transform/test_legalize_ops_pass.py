"""LegalizeOps: high-level op calls become call_tir of TE/TOPI PrimFuncs."""
import warnings

import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax, topi
from mlcbench.ir.transform import PassContext
from mlcbench.relax import op
from mlcbench.script import ir as I, relax as R, tir as T


@I.ir_module
class AddRelu:
    @R.function
    def main(x: R.Tensor((2, 3), "float32"), b: R.Tensor((3,), "float32")):
        with R.dataflow():
            lv = R.add(x, b)
            gv = R.nn.relu(lv)
            R.output(gv)
        return gv


@I.ir_module
class AddReluLegalized:
    @T.prim_func
    def add(A: T.Buffer((2, 3), "float32"), B: T.Buffer((3,), "float32"),
            T_add: T.Buffer((2, 3), "float32")):
        T.func_attr({"global_symbol": "add", "tir.noalias": True})
        for ax0, ax1 in T.grid(2, 3):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v_ax0, v_ax1], B[v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = A[v_ax0, v_ax1] + B[v_ax1]

    @T.prim_func
    def relu(A: T.Buffer((2, 3), "float32"), compute: T.Buffer((2, 3), "float32")):
        T.func_attr({"global_symbol": "relu", "tir.noalias": True})
        for i0, i1 in T.grid(2, 3):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(A[v_i0, v_i1])
                T.writes(compute[v_i0, v_i1])
                compute[v_i0, v_i1] = T.max(A[v_i0, v_i1], T.float32(0))

    @R.function
    def main(x: R.Tensor((2, 3), "float32"), b: R.Tensor((3,), "float32")):
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, b), out_sinfo=R.Tensor((2, 3), "float32"))
            gv = R.call_tir(cls.relu, (lv,), out_sinfo=R.Tensor((2, 3), "float32"))
            R.output(gv)
        return gv


def tensor(name, shape, dtype="float32"):
    return relax.Var(name, relax.TensorStructInfo(shape, dtype))


def build_main(params, body):
    """A module whose main binds ``body(*params)`` (a list of calls) in one dataflow block."""
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            out = body(bb, *params)
            gv = bb.emit_output(out)
        bb.emit_func_output(gv)
    return bb.get()


def prim_func_names(mod):
    return sorted(gv.name_hint for gv, f in mod.items() if isinstance(f, tvm.tir.PrimFunc))


def test_add_relu_legalizes_to_the_expected_module():
    tvm.ir.assert_structural_equal(relax.transform.LegalizeOps()(AddRelu), AddReluLegalized)


def test_mlp_legalized_matches_numpy(run_kernels):
    x, w0, b0, w1, b1 = (tensor("x", (1, 8)), tensor("w0", (8, 6)), tensor("b0", (6,)),
                         tensor("w1", (6, 3)), tensor("b1", (3,)))

    def mlp(bb, x, w0, b0, w1, b1):
        hidden = bb.emit(op.nn.relu(bb.emit(op.add(bb.emit(op.matmul(x, w0)), b0))))
        return bb.emit(op.add(bb.emit(op.matmul(hidden, w1)), b1))

    mod = relax.transform.LegalizeOps()(build_main([x, w0, b0, w1, b1], mlp))
    assert prim_func_names(mod) == ["add", "add1", "matmul", "matmul1", "relu"]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(v.struct_info.static_shape()).astype("float32")
              for v in (x, w0, b0, w1, b1)]
    got, calls = run_kernels(mod, *arrays)
    xa, w0a, b0a, w1a, b1a = arrays
    np.testing.assert_allclose(got, np.maximum(xa @ w0a + b0a, 0) @ w1a + b1a,
                               rtol=1e-5, atol=1e-5)
    assert calls == 5


def test_equal_prim_funcs_are_added_once():
    x, y = tensor("x", (2, 3)), tensor("y", (2, 3))
    mod = relax.transform.LegalizeOps()(build_main(
        [x, y], lambda bb, x, y: bb.emit(op.add(bb.emit(op.add(x, y)), y))))
    assert prim_func_names(mod) == ["add"]


def test_a_prim_func_already_in_the_module_is_reused():
    first = relax.transform.LegalizeOps()(AddRelu)
    # a second, still high-level function legalizes to the same kernels
    again = first.with_function("again", AddRelu["main"].without_attr("global_symbol"))
    mod = relax.transform.LegalizeOps()(again)
    assert prim_func_names(mod) == ["add", "relu"]
    callees = [b.value.args[0].name_hint for b in mod["again"].body.blocks[0].bindings]
    assert callees == ["add", "relu"]


def test_customized_legalization_replaces_the_registry_entry():
    def my_relu(bb, call):
        return bb.call_te(topi.nn.relu, call.args[0], primfunc_name_hint="my_relu")

    mod = relax.transform.LegalizeOps({"relax.nn.relu": my_relu})(AddRelu)
    assert prim_func_names(mod) == ["add", "my_relu"]


def test_a_custom_rule_may_answer_with_other_high_level_ops():
    def relu_as_maximum(bb, call):
        return op.maximum(call.args[0], relax.const(np.zeros((3,), "float32")))

    mod = relax.transform.LegalizeOps({"relax.nn.relu": relu_as_maximum})(AddRelu)
    ops = [b.value.op.name for b in mod["main"].body.blocks[0].bindings]
    assert ops == ["relax.call_tir", "relax.call_tir"]
    assert prim_func_names(mod) == ["add", "maximum"]


def test_unknown_shapes_stay_high_level():
    x = relax.Var("x", relax.TensorStructInfo(None, "float32", ndim=2))
    mod = build_main([x], lambda bb, x: bb.emit(op.nn.relu(x)))
    out = relax.transform.LegalizeOps()(mod)
    assert out["main"].body.blocks[0].bindings[0].value.op.name == "relax.nn.relu"
    assert out is mod


def test_ops_without_legalization_warn_when_asked():
    relax.op.register_op("relax.test_identity_without_legalization",
                         lambda call: call.args[0].struct_info)
    x = tensor("x", (2,))
    mod = build_main([x], lambda bb, x: bb.emit(relax.op.registry.make_call(
        "relax.test_identity_without_legalization", (x,))))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert relax.transform.LegalizeOps(enable_warning=True)(mod) is mod
    assert any("test_identity_without_legalization" in str(w.message) for w in caught)


def test_legalize_ops_is_an_instrumented_pass():
    seen = []

    class Recorder:
        def run_after_pass(self, mod, info):
            seen.append(info.name)

    with PassContext(instruments=[Recorder()]):
        relax.transform.LegalizeOps()(AddRelu)
    assert seen == ["LegalizeOps"]


@pytest.mark.parametrize("build, expected_callee", [
    (lambda x, w: op.nn.conv2d(x, w, padding=1), "conv2d"),
    (lambda x, w: op.nn.max_pool2d(x, 2, 2), "max_pool2d"),
    (lambda x, w: op.flatten(x), "reshape"),     # flatten is a reshape
    (lambda x, w: op.nn.softmax(x, axis=1), "softmax"),
])
def test_cnn_ops_become_call_tir(build, expected_callee):
    x, w = tensor("x", (1, 3, 4, 4)), tensor("w", (2, 3, 3, 3))
    mod = build_main([x, w], lambda bb, x, w: bb.emit(build(x, w)))
    out = relax.transform.LegalizeOps()(mod)
    call = out["main"].body.blocks[0].bindings[0].value
    assert call.op.name == "relax.call_tir"
    assert call.args[0].name_hint == expected_callee
    assert isinstance(out[expected_callee], tvm.tir.PrimFunc)
