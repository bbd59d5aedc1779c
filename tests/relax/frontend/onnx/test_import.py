"""from_onnx itself: bad input gets one clear error; initializers as constants or as
parameters; every missing operator named once with its count."""
import subprocess
import sys

import numpy as np
import pytest
from onnx import helper

from mlcbench.relax.frontend.onnx import OnnxImportError, from_onnx, supported_operators

from .conftest import make_model, run_ours


def small_model(opset=17):
    x = np.zeros((2, 3), "float32")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Add", ["h", "b"], ["y"])]
    inits = {"w": np.arange(12, dtype="float32").reshape(3, 4),
             "b": np.ones(4, "float32")}
    return make_model(nodes, {"x": x}, ["y"], inits, opset), inits


def test_refuses_what_is_not_a_model(tmp_path):
    with pytest.raises(OnnxImportError, match="expected an onnx.ModelProto.*found int"):
        from_onnx(3)
    with pytest.raises(OnnxImportError, match="no ONNX file at"):
        from_onnx(str(tmp_path / "missing.onnx"))
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00not a protobuf\xff" * 3)
    with pytest.raises(OnnxImportError, match="is not an ONNX model"):
        from_onnx(garbage)


def test_shape_dict_names_must_be_inputs_and_symbolic_shapes_need_it():
    model, _ = small_model()
    with pytest.raises(OnnxImportError, match=r"shape_dict names \['z'\].*inputs are \['x'\]"):
        from_onnx(model, {"z": (1, 3)})
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    with pytest.raises(OnnxImportError, match="symbolic shape \\['batch', 3\\]"):
        from_onnx(model)
    mod = from_onnx(model, {"x": (5, 3)})
    assert mod["main"].params[0].struct_info.static_shape() == (5, 3)


def test_every_missing_operator_is_listed_once_with_its_count():
    x = np.zeros((2, 2), "float32")
    nodes = [helper.make_node("Sign", ["x"], ["a"]), helper.make_node("Sign", ["a"], ["b"]),
             helper.make_node("Relu", ["b"], ["c"]), helper.make_node("Mod", ["c", "c"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [2, 2])],
                              [helper.make_tensor_value_info("y", 1, [2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match=r"2 unsupported operator\(s\): Mod \(1\), "
                                              r"Sign \(2\)"):
        from_onnx(model)


def test_opset_out_of_range_and_operators_newer_than_the_model():
    model, _ = small_model()
    model.opset_import[0].version = 22
    with pytest.raises(OnnxImportError, match="opset 22; supported opsets are 6 to 21"):
        from_onnx(model)
    assert "LayerNormalization       17 .. 21" in supported_operators()


def test_initializers_are_constants_or_parameters():
    model, inits = small_model()
    x = {"x": np.arange(6, dtype="float32").reshape(2, 3)}
    expected = x["x"] @ inits["w"] + inits["b"]
    np.testing.assert_allclose(run_ours(model, x)[0], expected)
    assert len(from_onnx(model)["main"].params) == 1
    mod = from_onnx(model, keep_params_in_input=True)
    func = mod["main"]
    assert [p.name_hint for p in func.params] == ["x", "w", "b"]
    values = [p.numpy() for p in func.attrs["params"]]
    np.testing.assert_array_equal(values[0], inits["w"])
    np.testing.assert_array_equal(values[1], inits["b"])


def test_a_failing_converter_names_the_node():
    x = np.zeros((1, 2, 3, 4, 5), "float32")
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2], name="pool3d")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, x.shape)],
                              [helper.make_tensor_value_info("y", 1, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match="'pool3d' \\(MaxPool, opset 17\\): 3-D data"):
        from_onnx(model)


def test_importing_mlcbench_does_not_import_onnx():
    code = "import sys, mlcbench, mlcbench.relax; print('onnx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
