"""relax.frontend.torch.from_fx: a torch.fx graph becomes the Relax the course shows, and
computes what torch computes."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the PyTorch frontends need torch "
                                            "(pip install mlcbench[torch])")
from torch import nn  # noqa: E402

import mlcbench as tvm  # noqa: E402
from mlcbench import relax  # noqa: E402
from mlcbench.ir import IRError  # noqa: E402
from mlcbench.relax.frontend.torch import detach_params, from_fx  # noqa: E402
from mlcbench.script import ir as I, relax as R  # noqa: E402


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


@I.ir_module
class ExpectedMLP:
    @R.function
    def main(x: R.Tensor((2, 16), "float32"), fc1_weight: R.Tensor((32, 16), "float32"),
             fc1_bias: R.Tensor((32,), "float32"), fc2_weight: R.Tensor((4, 32), "float32"),
             fc2_bias: R.Tensor((4,), "float32")) -> R.Tensor((2, 4), "float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            lv = R.permute_dims(fc1_weight, axes=[1, 0])
            lv1 = R.matmul(x, lv)
            lv2 = R.add(lv1, fc1_bias)
            lv3 = R.nn.relu(lv2)
            lv4 = R.permute_dims(fc2_weight, axes=[1, 0])
            lv5 = R.matmul(lv3, lv4)
            lv6 = R.add(lv5, fc2_bias)
            gv = lv6
            R.output(gv)
        return gv


def mlp():
    torch.manual_seed(0)
    return MLP().eval()


def run(mod, *inputs):
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
    return vm["main"](*(tvm.nd.array(np.ascontiguousarray(x)) for x in inputs))


def test_mlp_with_params_as_input_is_the_course_module():
    mod = from_fx(torch.fx.symbolic_trace(mlp()), [((2, 16), "float32")],
                  keep_params_as_input=True)
    mod, params = detach_params(mod)
    tvm.ir.assert_structural_equal(mod, ExpectedMLP)
    assert [p.shape for p in params["main"]] == [(32, 16), (32,), (4, 32), (4,)]


def test_mlp_weights_as_constants_compute_like_torch():
    model, x = mlp(), np.random.default_rng(0).standard_normal((2, 16)).astype("float32")
    mod = from_fx(torch.fx.symbolic_trace(model), [((2, 16), "float32")])
    assert [p.name_hint for p in mod["main"].params] == ["x"]
    np.testing.assert_allclose(run(mod, x).numpy(), model(torch.from_numpy(x)).detach(),
                               rtol=1e-5, atol=1e-5)


def test_detached_params_feed_the_vm():
    model, x = mlp(), np.ones((2, 16), "float32")
    mod, params = detach_params(from_fx(torch.fx.symbolic_trace(model),
                                        [((2, 16), "float32")], keep_params_as_input=True))
    np.testing.assert_allclose(run(mod, x, *(p.numpy() for p in params["main"])).numpy(),
                               model(torch.from_numpy(x)).detach(), rtol=1e-5, atol=1e-5)


def test_input_info_must_match_the_inputs():
    gm = torch.fx.symbolic_trace(mlp())
    with pytest.raises(IRError, match=r"one \(shape, dtype\) per input.*1 input"):
        from_fx(gm, [((2, 16), "float32"), ((2, 16), "float32")])
    with pytest.raises(IRError, match="expected a torch.fx.GraphModule"):
        from_fx(mlp(), [((2, 16), "float32")])


class Unsupported(nn.Module):
    def forward(self, x):
        y = torch.cumsum(x, 0) + torch.cumsum(x, 1)
        return torch.flip(y, [0]).roll(1)


def test_every_unsupported_op_is_listed_once_with_its_count():
    gm = torch.fx.symbolic_trace(Unsupported())
    with pytest.raises(IRError, match=r"3 unsupported operators: "
                                      r"Tensor\.roll \(x1\), cumsum \(x2\), flip \(x1\)"):
        from_fx(gm, [((2, 3), "float32")])


def test_a_failing_converter_names_the_node():
    class Train(nn.Module):
        def forward(self, x):
            return torch.nn.functional.dropout(x, 0.5, training=True)
    with pytest.raises(IRError, match=r"node 'dropout' \(dropout\): .*eval\(\) mode"):
        from_fx(torch.fx.symbolic_trace(Train()), [((2, 3), "float32")])


def test_importing_the_frontend_does_not_import_torch():
    import subprocess
    import sys
    code = ("import sys, mlcbench, mlcbench.relax.frontend.torch; "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_arguments_a_converter_does_not_understand_name_the_node():
    class OddPooling(nn.Module):
        def forward(self, x):
            return torch.nn.functional.adaptive_avg_pool2d(x, (3, 3))
    with pytest.raises(IRError, match=r"node 'adaptive_avg_pool2d'.*does not divide"):
        from_fx(torch.fx.symbolic_trace(OddPooling()), [((1, 2, 8, 8), "float32")])

    class BadIndex(nn.Module):
        def forward(self, x):
            return x[:, 5]
    with pytest.raises(IRError, match=r"node 'getitem' \(getitem\): index 5 is out of "
                                      r"range for axis 1 of extent 3"):
        from_fx(torch.fx.symbolic_trace(BadIndex()), [((2, 3), "float32")])


def test_custom_convert_map_adds_and_replaces_rows():
    from mlcbench.relax import op as R_op

    class Swish(nn.Module):
        def forward(self, x):
            return torch.cumsum(x, 0) * torch.relu(x)

    def cumsum_as_identity(t, input, dim):
        return input

    def relu_as_sigmoid(t, input):
        return t.emit(R_op.sigmoid(input))

    x = np.linspace(-2, 2, 6, dtype="float32").reshape(2, 3)
    mod = from_fx(torch.fx.symbolic_trace(Swish()), [((2, 3), "float32")],
                  custom_convert_map={torch.cumsum: cumsum_as_identity,
                                      "relu": relu_as_sigmoid})
    np.testing.assert_allclose(run(mod, x).numpy(), x / (1 + np.exp(-x)), rtol=1e-5)
    with pytest.raises(IRError, match=r"custom_convert_map\['relu'\] must be a function"):
        from_fx(torch.fx.symbolic_trace(Swish()), [((2, 3), "float32")],
                custom_convert_map={"relu": 1})
