"""relax.frontend.torch.from_exported_program: torch.export's ATen graph becomes Relax, as
TVM's importer makes it (a tuple of outputs, weights as constants or parameters)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the PyTorch frontends need torch "
                                            "(pip install mlcbench[torch])")
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import mlcbench as tvm  # noqa: E402
from mlcbench import relax  # noqa: E402
from mlcbench.ir import IRError  # noqa: E402
from mlcbench.relax.frontend.torch import (detach_params,  # noqa: E402
                                           exported_program_translator,
                                           from_exported_program)
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
             fc2_bias: R.Tensor((4,), "float32")) -> R.Tuple(R.Tensor((2, 4), "float32")):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            lv = R.permute_dims(fc1_weight, axes=[1, 0])
            lv1 = R.matmul(x, lv)
            lv2 = R.add(lv1, fc1_bias)
            lv3 = R.nn.relu(lv2)
            lv4 = R.permute_dims(fc2_weight, axes=[1, 0])
            lv5 = R.matmul(lv3, lv4)
            lv6 = R.add(lv5, fc2_bias)
            gv = (lv6,)
            R.output(gv)
        return gv


def export(model, *inputs):
    return torch.export.export(model.eval(), tuple(torch.from_numpy(x) for x in inputs))


def run(mod, *inputs):
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
    return vm["main"](*(tvm.nd.array(np.ascontiguousarray(x)) for x in inputs))


X = np.random.default_rng(0).standard_normal((2, 16)).astype("float32")


def test_mlp_is_tvms_module_with_a_tuple_output():
    torch.manual_seed(0)
    model = MLP()
    mod, params = detach_params(from_exported_program(export(model, X),
                                                      keep_params_as_input=True))
    tvm.ir.assert_structural_equal(mod, ExpectedMLP)
    for value, (name, expected) in zip(params["main"], model.state_dict().items()):
        np.testing.assert_array_equal(value.numpy(), expected.numpy(), err_msg=name)


def test_unwrap_unit_return_tuple_returns_the_tensor():
    torch.manual_seed(0)
    model = MLP()
    mod = from_exported_program(export(model, X), unwrap_unit_return_tuple=True)
    assert mod["main"].params[0].name_hint == "x" and len(mod["main"].params) == 1
    np.testing.assert_allclose(run(mod, X).numpy(), model(torch.from_numpy(X)).detach(),
                               rtol=1e-5, atol=1e-5)


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.fc, self.norm = nn.Linear(8 * 4 * 4, 16), nn.LayerNorm(16)

    def forward(self, x):
        y = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        y = self.norm(self.fc(y.flatten(1))).view(1, 2, 2, 4)
        return F.scaled_dot_product_attention(y, y, y, is_causal=True), F.gelu(y)


def test_decomposed_core_aten_program_computes_like_torch():
    """run_decompositions() lowers to core ATen: convolution, the no-training batch
    norm, max_pool2d_with_indices, addmm, native_layer_norm, and attention as
    bmm/softmax/where."""
    torch.manual_seed(0)
    model, x = SmallNet().eval(), np.random.default_rng(1).standard_normal((1, 3, 8, 8))
    x = x.astype("float32")
    program = export(model, x).run_decompositions()
    targets = {str(n.target) for n in program.graph.nodes if n.op == "call_function"}
    assert {"aten.convolution.default", "aten.addmm.default",
            "aten._native_batch_norm_legit_no_training.default"} <= targets
    got = run(from_exported_program(program), x)
    with torch.no_grad():
        expected = model(torch.from_numpy(x))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-4, atol=1e-5)


def test_every_unsupported_aten_op_is_listed_with_its_count():
    class Unsupported(nn.Module):
        def forward(self, x):
            return torch.cumsum(x, 0) + torch.cumsum(x, 1) + torch.flip(x, [0])
    with pytest.raises(IRError, match=r"from_exported_program: 2 unsupported operators: "
                                      r"cumsum\.default \(x2\), flip\.default \(x1\)"):
        from_exported_program(export(Unsupported(), np.ones((2, 2), "float32")))


def test_dynamic_shapes_are_refused_with_the_input_named():
    batch = torch.export.Dim("batch", min=2)
    program = torch.export.export(MLP().eval(), (torch.randn(2, 16),),
                                  dynamic_shapes={"x": {0: batch}})
    with pytest.raises(IRError, match=r"input 'x' has a dynamic shape"):
        from_exported_program(program)


def test_not_an_exported_program():
    with pytest.raises(IRError, match="expected a torch.export.ExportedProgram"):
        from_exported_program(MLP())


def test_the_table_is_keyed_by_aten_overloads():
    table = exported_program_translator.TABLE
    assert {"linear.default", "conv2d.default", "scaled_dot_product_attention.default",
            "batch_norm.default", "layer_norm.default", "getitem"} <= set(table)
