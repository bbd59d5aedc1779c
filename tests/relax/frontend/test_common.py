"""detach_params: the weights an importer kept as parameters, handed out the same way
for every frontend (TVM's relax.frontend.detach_params)."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax.frontend import detach_params

onnx = pytest.importorskip("onnx", reason="the ONNX frontend's tests need the onnx package")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from mlcbench.relax.frontend.onnx import from_onnx  # noqa: E402


def _linear_model(weight):
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        initializer=[numpy_helper.from_array(weight, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_weights_kept_as_parameters_are_detached_and_run():
    rng = np.random.default_rng(0)
    weight, x = rng.random((3, 4), dtype="float32"), rng.random((2, 3), dtype="float32")
    mod, params = detach_params(from_onnx(_linear_model(weight), keep_params_in_input=True))
    assert "params" not in (mod["main"].attrs or {})
    (kept,) = params["main"]
    np.testing.assert_array_equal(kept.numpy(), weight)
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](tvm.nd.array(x), kept).numpy(), x @ weight, rtol=1e-5)


def test_a_module_without_kept_weights_is_unchanged():
    mod = from_onnx(_linear_model(np.ones((3, 4), "float32")))
    again, params = detach_params(mod)
    assert params == {} and again["main"] is mod["main"]


def test_frontends_are_reached_as_attributes_and_load_on_first_use():
    """As in TVM, ``relax.frontend.onnx.from_onnx`` works after ``from tvm import relax``."""
    import subprocess
    import sys
    code = ("import sys\nfrom mlcbench import relax\n"
            "assert 'mlcbench.relax.frontend.onnx' not in sys.modules\n"
            "assert callable(relax.frontend.onnx.from_onnx)\n"
            "assert 'torch' not in sys.modules\n"
            "assert relax.frontend.nn.Module and relax.frontend.detach_params\n"
            "try:\n    relax.frontend.tflite\nexcept AttributeError as err:\n"
            "    assert 'tflite' in str(err)\nelse:\n    raise SystemExit('no error')\n")
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert child.returncode == 0, child.stderr
