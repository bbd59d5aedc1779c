"""relax.frontend.nn: modules export to the Relax the course shows, and compute what the
trained digits models compute in numpy.

Numerics run each high-level call of the exported function through its registry
legalization (``legalize_call``), build the resulting PrimFuncs once and call them in
binding order, so the check depends only on the op registry and the TIR compiler.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import datasets, relax
from mlcbench.ir import IRError
from mlcbench.ir.module import GlobalVar
from mlcbench.relax import op as R_op
from mlcbench.relax.frontend import nn
from mlcbench.relax.op import legalize_call
from mlcbench.script import from_source, ir as I, relax as R


# -- expected modules ----------------------------------------------------------------------

@I.ir_module
class ExpectedMLP:
    @R.function
    def forward(x: R.Tensor((1, 64), "float32"),
                fc1_weight: R.Tensor((128, 64), "float32"),
                fc1_bias: R.Tensor((128,), "float32"),
                fc2_weight: R.Tensor((10, 128), "float32"),
                fc2_bias: R.Tensor((10,), "float32")) -> R.Tensor((1, 10), "float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            permute_dims = R.permute_dims(fc1_weight)
            matmul = R.matmul(x, permute_dims)
            add = R.add(matmul, fc1_bias)
            relu = R.nn.relu(add)
            permute_dims1 = R.permute_dims(fc2_weight)
            matmul1 = R.matmul(relu, permute_dims1)
            add1 = R.add(matmul1, fc2_bias)
            gv = add1
            R.output(gv)
        return gv


@I.ir_module
class ExpectedCNN:
    @R.function
    def forward(x: R.Tensor((1, 1, 8, 8), "float32"),
                conv_weight: R.Tensor((8, 1, 3, 3), "float32"),
                conv_bias: R.Tensor((8,), "float32"),
                fc1_weight: R.Tensor((64, 128), "float32"),
                fc1_bias: R.Tensor((64,), "float32"),
                fc2_weight: R.Tensor((10, 64), "float32"),
                fc2_bias: R.Tensor((10,), "float32")) -> R.Tensor((1, 10), "float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            conv2d = R.nn.conv2d(x, conv_weight, strides=(1, 1), padding=(1, 1, 1, 1),
                                 dilation=(1, 1), groups=1)
            reshape = R.reshape(conv_bias, R.shape([1, 8, 1, 1]))
            add = R.add(conv2d, reshape)
            relu = R.nn.relu(add)
            pool = R.nn.max_pool2d(relu, pool_size=(2, 2), strides=(2, 2),
                                   padding=(0, 0, 0, 0), dilation=(1, 1), ceil_mode=False,
                                   count_include_pad=False)
            flat = R.reshape(pool, R.shape([1, 128]))
            permute_dims = R.permute_dims(fc1_weight)
            matmul = R.matmul(flat, permute_dims)
            add1 = R.add(matmul, fc1_bias)
            relu1 = R.nn.relu(add1)
            permute_dims1 = R.permute_dims(fc2_weight)
            matmul1 = R.matmul(relu1, permute_dims1)
            add2 = R.add(matmul1, fc2_bias)
            softmax = R.nn.softmax(add2, axis=-1)
            gv = softmax
            R.output(gv)
        return gv


# -- the models ------------------------------------------------------------------------------

class MLP(nn.Module):
    """The course's MLP; parameter names map to the course's w0/b0/w1/b1."""

    def __init__(self, features=64, hidden=128):
        self.fc1 = nn.Linear(features, hidden)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(hidden, 10)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class CNN(nn.Module):
    """The digits CNN; its parameter names are those of datasets/cnn_digits.npz."""

    def __init__(self):
        self.conv = nn.Conv2D(1, 8, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(128, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = self.pool(nn.op.relu(self.conv(x)))
        x = nn.op.relu(self.fc1(x.reshape(x.shape[0], -1)))
        return nn.op.softmax(self.fc2(x))


COURSE_NAMES = {"fc1.weight": "w0", "fc1.bias": "b0", "fc2.weight": "w1", "fc2.bias": "b1"}


def trained_mlp():
    model = MLP()
    course = datasets.load_mlp_params()
    model.load_state_dict({name: course[key] for name, key in COURSE_NAMES.items()})
    return model


def trained_cnn():
    model = CNN()
    model.load_state_dict(datasets.load_cnn_params())
    return model


def spec_of(shape):
    return {"forward": {"x": nn.spec.Tensor(shape, "float32")}}


def run_legalized(mod, inputs, name="forward"):
    """Run a Relax function: legalize each high-level call (``call_tir`` runs as it is),
    build the module's PrimFuncs once and call them in binding order."""
    builder = relax.BlockBuilder(mod)
    func, steps = mod[name], []
    for block in func.body.blocks:
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, relax.Call) and value.op.name != "relax.call_tir":
                value = legalize_call(builder, value)
            steps.append((binding.var, value))
    prim_funcs = {gv.name_hint: f for gv, f in builder.get().functions.items()
                  if isinstance(f, tvm.tir.PrimFunc)}
    lib = tvm.build(tvm.IRModule(prim_funcs), target="llvm")
    env = {param: tvm.nd.array(np.asarray(value)) for param, value in zip(func.params, inputs)}
    for var, value in steps:
        if isinstance(value, relax.Var):
            env[var] = env[value]
            continue
        assert value.op.name == "relax.call_tir", value
        out_sinfo = value.sinfo_args[0]
        env[var] = tvm.nd.empty(out_sinfo.static_shape(), out_sinfo.dtype)
        lib[value.args[0].name_hint](*(env[a] for a in value.args[1].fields), env[var])
    return env[func.body.body].numpy()


def run_exported(model, x):
    mod, params = model.export_tvm(spec=spec_of(x.shape))
    return run_legalized(mod, [x] + [p.data for _, p in params])


# -- structure --------------------------------------------------------------------------------

def test_mlp_exports_as_the_course_shows():
    mod, params = MLP().export_tvm(spec=spec_of((1, 64)))
    tvm.ir.assert_structural_equal(mod, ExpectedMLP)
    assert [(name, p.shape) for name, p in params] == [
        ("fc1.weight", [128, 64]), ("fc1.bias", [128]), ("fc2.weight", [10, 128]),
        ("fc2.bias", [10])]
    text = mod.script()
    assert ('permute_dims: R.Tensor((64, 128), dtype="float32") = '
            'R.permute_dims(fc1_weight)') in text
    assert 'matmul: R.Tensor((1, 128), dtype="float32") = R.matmul(x, permute_dims)' in text
    assert 'R.func_attr({"num_input": 1})' in text


def test_cnn_exports_conv_bias_as_reshape_and_add():
    mod, params = CNN().export_tvm(spec=spec_of((1, 1, 8, 8)))
    tvm.ir.assert_structural_equal(mod, ExpectedCNN)
    forward = mod["forward"]
    assert [p.name_hint for p in forward.params] == ["x"] + [name for name, _ in params]
    ret = forward.ret_struct_info
    assert ret.static_shape() == (1, 10) and ret.dtype == "float32"
    assert forward.attrs["num_input"] == 1


def test_linear_is_the_composition_relax_op_nn_linear_builds():
    x = relax.Var("x", relax.TensorStructInfo((2, 5), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((3, 5), "float32"))
    b = relax.Var("b", relax.TensorStructInfo((3,), "float32"))
    builder = relax.BlockBuilder()
    with builder.function("forward", [x, w, b], attrs={"num_input": 1}):
        with builder.dataflow():
            gv = builder.emit_output(builder.emit(R_op.nn.linear(x, w, b)))
        builder.emit_func_output(gv)
    mod, _ = nn.Linear(5, 3).export_tvm(spec=spec_of((2, 5)))
    tvm.ir.assert_structural_equal(mod, builder.get())


@pytest.mark.parametrize("model, shape", [(MLP(), (1, 64)), (CNN(), (1, 1, 8, 8))],
                         ids=["mlp", "cnn"])
def test_exported_modules_round_trip_through_text(model, shape):
    mod, _ = model.export_tvm(spec=spec_of(shape))
    tvm.ir.assert_structural_equal(from_source(mod.script()), mod)


def test_symbolic_batch_is_one_variable_through_the_function():
    mod, _ = CNN().export_tvm(spec=spec_of(("n", 1, 8, 8)))
    forward = mod["forward"]
    (n, *_), (m, classes) = forward.params[0].struct_info.dims, forward.ret_struct_info.dims
    assert isinstance(n, tvm.tir.Var) and n.name == "n" and m is n and classes.value == 10
    flatten = forward.body.blocks[0].bindings[5].value
    assert flatten.args[1].values[0] is n and flatten.args[1].values[1].value == 128


def test_each_method_gets_its_own_parameter_variables():
    class TwoHeads(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)

        def scaled(self, x, y):
            return self.fc(x) * 2.0 + y

    model = TwoHeads()
    mod, params = model.export_tvm(spec={
        "forward": {"x": nn.spec.Tensor((1, 4))},
        "scaled": {"x": nn.spec.Tensor((3, 4)), "y": nn.spec.Tensor((3, 2))}})
    forward, scaled = mod["forward"], mod["scaled"]
    assert scaled.attrs["num_input"] == 2 and len(scaled.params) == 4
    assert not set(map(id, forward.params[1:])) & set(map(id, scaled.params[2:]))
    mul = scaled.body.blocks[0].bindings[3].value
    assert mul.op.name == "relax.multiply" and float(mul.args[1].data.numpy()) == 2.0
    assert mul.args[1].struct_info.dtype == "float32"
    # Export leaves the parameters as they were (placeholders, not function variables).
    assert model.fc.weight._expr not in forward.params + scaled.params


# -- numerics against the trained digits models ---------------------------------------------

def test_exported_mlp_computes_the_trained_mlp():
    _, _, x_test, y_test = datasets.load_digits(flat=True)
    logits = run_exported(trained_mlp(), x_test)
    expected = datasets.mlp_forward(x_test, datasets.load_mlp_params())
    np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-4)
    assert (logits.argmax(1) == y_test).mean() > 0.98


def test_exported_cnn_computes_the_trained_cnn():
    _, _, x_test, y_test = datasets.load_digits()
    probs = run_exported(trained_cnn(), x_test)
    expected = datasets.cnn_forward(x_test, datasets.load_cnn_params())
    np.testing.assert_allclose(probs, expected, rtol=1e-4, atol=1e-5)
    assert (probs.argmax(1) == y_test).mean() > 0.97


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), features=st.integers(1, 6), out=st.integers(1, 6),
       bias=st.booleans(), seed=st.integers(0, 2**16))
def test_sequential_linear_relu_matches_numpy(batch, features, out, bias, seed):
    rng = np.random.default_rng(seed)
    model = nn.Sequential(nn.Linear(features, out, bias=bias), nn.ReLU())
    values = {name: rng.standard_normal(p.shape).astype("float32")
              for name, p in model.named_parameters()}
    model.load_state_dict(values)
    x = rng.standard_normal((batch, features)).astype("float32")
    expected = x @ values["0.weight"].T + values.get("0.bias", 0)
    np.testing.assert_allclose(run_exported(model, x), np.maximum(expected, 0), rtol=1e-5,
                               atol=1e-5)


@settings(max_examples=30, deadline=None)
@given(size=st.integers(4, 12), kernel=st.integers(1, 3), stride=st.integers(1, 3),
       padding=st.integers(0, 2), channels=st.integers(1, 4))
def test_conv2d_output_shape_follows_the_usual_formula(size, kernel, stride, padding,
                                                       channels):
    conv = nn.Conv2D(2, channels, kernel, stride=stride, padding=padding, bias=False)
    mod, params = conv.export_tvm(spec=spec_of((1, 2, size, size)))
    extent = (size + 2 * padding - kernel) // stride + 1
    assert mod["forward"].ret_struct_info.static_shape() == (1, channels, extent, extent)
    assert [p.shape for _, p in params] == [[channels, 2, kernel, kernel]]


# -- modules and parameters -------------------------------------------------------------------

def test_parameters_are_named_by_attribute_and_position():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2, bias=False))
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight"]

    class Tied(nn.Module):
        def __init__(self):
            self.layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
            self.layers[1].weight = self.layers[0].weight      # shared: listed once

    assert [n for n, _ in Tied().named_parameters()] == [
        "layers.0.weight", "layers.0.bias", "layers.1.bias"]


def test_parameter_data_is_checked_and_converted_by_to():
    linear = nn.Linear(3, 2)
    with pytest.raises(IRError, match=r"expected data of shape \(2, 3\) and dtype float32, "
                                      r"found shape \(3, 2\)"):
        linear.weight.data = np.zeros((3, 2), "float32")
    linear.weight.data = np.arange(6, dtype="float32").reshape(2, 3)
    linear.to("float16")
    assert linear.weight.dtype == linear.bias.dtype == "float16"
    assert linear.weight.data.numpy().dtype == np.float16 and linear.bias.data is None
    mod, _ = linear.export_tvm(spec={"forward": {"x": nn.spec.Tensor((1, 3), "float16")}})
    assert mod["forward"].params[1].struct_info.dtype == "float16"


def test_load_state_dict_reports_missing_and_unexpected_names():
    model = MLP()
    with pytest.raises(IRError, match=r"missing \['fc2.weight', 'fc2.bias'\], "
                                      r"unexpected \['w1'\]"):
        model.load_state_dict({"fc1.weight": np.zeros((128, 64), "float32"),
                               "fc1.bias": np.zeros(128, "float32"),
                               "w1": np.zeros(1, "float32")})
    missing, unexpected = model.load_state_dict({"fc2.bias": np.ones(10, "float32")},
                                                strict=False)
    assert missing == ["fc1.weight", "fc1.bias", "fc2.weight"] and unexpected == []
    np.testing.assert_array_equal(model.fc2.bias.data.numpy(), np.ones(10))


# -- errors -------------------------------------------------------------------------------------

def test_spec_must_name_the_inputs_of_the_method():
    with pytest.raises(IRError, match=r"MLP.forward takes \['x'\], but its spec names \['y'\]"):
        MLP().export_tvm(spec={"forward": {"y": nn.spec.Tensor((1, 64))}})
    with pytest.raises(IRError, match="spec names method 'predict'"):
        MLP().export_tvm(spec={"predict": {"x": nn.spec.Tensor((1, 64))}})
    with pytest.raises(IRError, match="input 'x' of 'forward': expected an nn.spec.Tensor"):
        MLP().export_tvm(spec={"forward": {"x": (1, 64)}})


def test_shape_errors_surface_while_exporting():
    with pytest.raises(IRError, match="relax.matmul: inner dimensions differ"):
        MLP().export_tvm(spec=spec_of((1, 63)))


def test_ops_outside_export_say_how_to_use_them():
    with pytest.raises(IRError, match=r"nn.op.matmul: ops build IR while a module is "
                                      r"exported \(model.export_tvm"):
        nn.op.matmul(nn.Parameter((1, 2)), nn.Parameter((2, 2)))


def test_forward_must_return_tensors():
    class Broken(nn.Module):
        def forward(self, x):
            return 3

    with pytest.raises(IRError, match="forward must return an nn.Tensor .*found int"):
        Broken().export_tvm(spec=spec_of((1,)))


# -- through the Relax passes and the virtual machine ----------------------------------------------

def test_legalize_ops_pass_turns_the_exported_cnn_into_call_tir():
    _, _, x_test, _ = datasets.load_digits()
    mod, params = trained_cnn().export_tvm(spec=spec_of(x_test.shape))
    lowered = relax.transform.LegalizeOps()(mod)
    values = [b.value for b in lowered["forward"].body.blocks[0].bindings]
    assert all(v.op.name == "relax.call_tir" for v in values[:-1])
    probs = run_legalized(lowered, [x_test] + [p.data for _, p in params])
    np.testing.assert_allclose(probs, datasets.cnn_forward(x_test, datasets.load_cnn_params()),
                               rtol=1e-4, atol=1e-5)


def test_course_flow_through_the_virtual_machine():
    _, _, x_test, _ = datasets.load_digits()
    mod, params = trained_cnn().export_tvm(spec=spec_of(x_test.shape))
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
    probs = vm["forward"](tvm.nd.array(x_test), *(p.data for _, p in params)).numpy()
    np.testing.assert_allclose(probs, datasets.cnn_forward(x_test, datasets.load_cnn_params()),
                               rtol=1e-4, atol=1e-5)
