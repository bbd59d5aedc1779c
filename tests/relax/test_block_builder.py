"""BlockBuilder: the course MLP from TE operators and from high-level ops."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax, topi
from mlcbench.ir import IRError
from mlcbench.relax import op
from mlcbench.script import relax as R


def mlp_params():
    x = relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))
    w0 = relax.Var("w0", relax.TensorStructInfo((128, 784), "float32"))
    b0 = relax.Var("b0", relax.TensorStructInfo((128,), "float32"))
    w1 = relax.Var("w1", relax.TensorStructInfo((10, 128), "float32"))
    b1 = relax.Var("b1", relax.TensorStructInfo((10,), "float32"))
    return x, w0, b0, w1, b1


def build_te_mlp():
    x, w0, b0, w1, b1 = params = mlp_params()
    bb = relax.BlockBuilder()
    with bb.function("main", list(params)):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.nn.dense, x, w0)
            lv1 = bb.emit_te(topi.add, lv0, b0)
            lv2 = bb.emit_te(topi.nn.relu, lv1)
            lv3 = bb.emit_te(topi.nn.dense, lv2, w1)
            lv4 = bb.emit_te(topi.add, lv3, b1)
            gv = bb.emit_output(lv4)
        bb.emit_func_output(gv)
    return bb.get()


def test_emit_te_adds_prim_funcs_with_unique_names():
    mod = build_te_mlp()
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == \
        ["add", "add1", "dense", "dense1", "main", "relu"]
    main = mod["main"]
    assert main.attrs["global_symbol"] == "main"
    assert main.ret_struct_info.static_shape() == (1, 10)
    (block,) = main.body.blocks
    assert isinstance(block, relax.DataflowBlock) and len(block.bindings) == 6
    first = block.bindings[0].value
    assert first.op.name == "relax.call_tir" and first.args[0].name_hint == "dense"
    assert isinstance(block.bindings[0].var, relax.DataflowVar)
    assert not isinstance(block.bindings[-1].var, relax.DataflowVar)


def test_emit_te_prim_funcs_compute_the_mlp():
    mod = build_te_mlp()
    prims = tvm.IRModule({gv.name_hint: f for gv, f in mod.items()
                          if isinstance(f, tvm.tir.PrimFunc)})
    lib = tvm.build(prims, target="llvm")
    rng = np.random.default_rng(1)
    x, w0, b0 = rng.normal(size=(1, 784)), rng.normal(size=(128, 784)), rng.normal(size=128)
    values = {"x": x, "w0": w0, "b0": b0}
    env = {p: tvm.nd.array(values.get(p.name_hint, np.zeros(1)).astype("float32"))
           for p in mod["main"].params[:3]}
    for binding in mod["main"].body.blocks[0].bindings[:3]:
        call = binding.value
        out = tvm.nd.empty(call.struct_info.static_shape(), "float32")
        lib[call.args[0].name_hint](*(env[a] for a in call.args[1].fields), out)
        env[binding.var] = out
    hidden = env[mod["main"].body.blocks[0].bindings[2].var].numpy()
    np.testing.assert_allclose(hidden, np.maximum(x @ w0.T + b0, 0), rtol=1e-4, atol=1e-3)


def test_identical_prim_funcs_are_added_once():
    x = relax.Var("x", relax.TensorStructInfo((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        a = bb.emit_te(topi.nn.relu, x)
        b = bb.emit_te(topi.nn.relu, a)
        bb.emit_func_output(b)
    mod = bb.get()
    assert sorted(g.name_hint for g in mod.get_global_vars()) == ["main", "relu"]


def test_high_level_ops_and_normal_form():
    x, w0, b0, w1, b1 = params = mlp_params()
    bb = relax.BlockBuilder()
    with bb.function("main", list(params)):
        with bb.dataflow():
            hidden = bb.emit(op.nn.relu(op.add(op.matmul(x, op.permute_dims(w0)), b0)))
            out = bb.emit(op.nn.linear(hidden, w1, b1))
            gv = bb.emit_output(out)
        bb.emit_func_output(gv)
    main = bb.get()["main"]
    bindings = main.body.blocks[0].bindings
    # every nested call got its own binding: permute, matmul, add, relu, permute, matmul, add, out
    assert [b.value.op.name for b in bindings[:-1]] == [
        "relax.permute_dims", "relax.matmul", "relax.add", "relax.nn.relu",
        "relax.permute_dims", "relax.matmul", "relax.add"]
    assert all(isinstance(a, relax.Var) for b in bindings[:-1] for a in b.value.args)
    assert main.ret_struct_info.static_shape() == (1, 10)


def test_params_at_emit_func_output_and_bindings_lookup():
    x = relax.Var("x", relax.TensorStructInfo((2, 2), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("f"):
        y = bb.emit(op.exp(x))
        bb.emit_func_output([y, x], params=[x])
    func = bb.get()["f"]
    assert func.params == (x,)
    assert isinstance(func.body.body, relax.Tuple)
    assert bb.lookup_binding(y).op.name == "relax.exp"


def test_builder_errors_are_explained():
    x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
    bb = relax.BlockBuilder()
    with pytest.raises(IRError, match="open a function first"):
        bb.emit(op.exp(x))
    with pytest.raises(IRError, match="leave the `with bb.dataflow\\(\\):` scope"):
        with bb.function("f", [x]):
            with bb.dataflow():
                bb.emit_func_output(bb.emit(op.exp(x)))
    with pytest.raises(IRError, match="ended without bb.emit_func_output"):
        with relax.BlockBuilder().function("g", [x]):
            pass


def test_const_and_var():
    c = relax.const(1.5)
    assert c.struct_info.dtype == "float32" and c.struct_info.ndim == 0
    assert relax.const([1, 2], "int64").struct_info.static_shape() == (2,)
    assert relax.const(np.ones((2, 3), "float16")).struct_info.dtype == "float16"
    v = relax.Var("v", R.Tensor((2, "n"), "float32"))
    assert v.struct_info.ndim == 2
    with pytest.raises(IRError, match="struct_info must be a StructInfo"):
        relax.Var("bad", (2, 3))
