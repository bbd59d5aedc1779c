"""``check_node``: one ONNX node (or a small graph) run by onnxruntime and by mlcbench
(``from_onnx`` -> ``relax.build`` -> VM), outputs compared."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the ONNX frontend tests need the onnx package")
ort = pytest.importorskip("onnxruntime", reason="the ONNX frontend tests compare with "
                                                 "onnxruntime")
from onnx import helper, numpy_helper  # noqa: E402

import mlcbench  # noqa: E402
from mlcbench import relax  # noqa: E402
from mlcbench.relax.frontend.onnx import from_onnx  # noqa: E402


def make_model(nodes, inputs: dict, outputs: list, initializers=None, opset: int = 17):
    """A model of ``nodes`` whose graph inputs are the arrays of ``inputs`` (by name),
    with ``initializers`` (name -> array) as weights and ``outputs`` as its results."""
    initializers = initializers or {}
    graph = helper.make_graph(
        nodes, "test",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for n, a in inputs.items()],
        [helper.make_empty_tensor_value_info(n) for n in outputs],
        [numpy_helper.from_array(a, n) for n, a in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return _typed_outputs(model)


def _typed_outputs(model):
    """Outputs typed by onnx's shape inference (onnxruntime refuses untyped ones)."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    types = {v.name: v.type for v in inferred.graph.value_info}
    types.update({v.name: v.type for v in inferred.graph.output if v.type.HasField("tensor_type")})
    for out in model.graph.output:
        out.type.CopyFrom(types[out.name])
    return model


def run_ours(model, inputs: dict, **kwargs):
    mod = from_onnx(model, **kwargs)
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), mlcbench.cpu())
    out = vm["main"](*(mlcbench.nd.array(np.ascontiguousarray(a)) for a in inputs.values()))
    return [o.numpy() for o in (out if isinstance(out, (list, tuple)) else [out])]


def run_onnxruntime(model, inputs: dict):
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return session.run(None, inputs)


def check_model(model, inputs: dict, rtol=1e-5, atol=1e-5):
    expected = run_onnxruntime(model, inputs)
    got = run_ours(model, inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return got


def check_node(op_type, inputs: dict, attrs=None, initializers=None, outputs=1, opset=17,
               rtol=1e-5, atol=1e-5):
    """One ``op_type`` node over ``inputs`` (graph inputs) then ``initializers``."""
    names = list(inputs) + list(initializers or {})
    out_names = [f"y{k}" for k in range(outputs)]
    node = helper.make_node(op_type, names, out_names, **(attrs or {}))
    model = make_model([node], inputs, out_names, initializers, opset)
    return check_model(model, inputs, rtol, atol)


@pytest.fixture(scope="session")
def rng():
    return np.random.default_rng(0)
