"""relay.frontend: from_onnx -> (Relax module, params); retired frameworks say what to do."""
import numpy as np
import pytest

from mlcbench import relay
from mlcbench.relax import Function
from mlcbench.relay.frontend import FrontendError
from mlcbench.relay.testing import light_model_path, tiny_cnn

onnx = pytest.importorskip("onnx")


def test_from_onnx_returns_the_weights_as_params():
    model = tiny_cnn()
    mod, params = relay.frontend.from_onnx(model, {"data": (1, 3, 8, 8)})
    main = mod["main"]
    assert isinstance(main, Function) and "params" not in main.attrs
    assert [p.name_hint for p in main.params] == ["data", "conv_w", "conv_b", "fc_w", "fc_b"]
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    assert list(params) == list(weights)
    for name, value in weights.items():
        np.testing.assert_array_equal(params[name].numpy(), value)


def test_freeze_params_makes_constants():
    mod, params = relay.frontend.from_onnx(tiny_cnn(), {"data": (1, 3, 8, 8)},
                                           freeze_params=True)
    assert params == {} and [p.name_hint for p in mod["main"].params] == ["data"]


def test_a_light_model_from_the_wheel_imports():
    mod, params = relay.frontend.from_onnx(onnx.load(light_model_path("squeezenet")))
    assert mod["main"].params[0].name_hint == "data_0"
    assert all(name in {p.name_hint for p in mod["main"].params} for name in params)


@pytest.mark.parametrize("name, advice", [
    ("from_mxnet", "MXNet is retired.*from_onnx"),
    ("from_pytorch", "from_fx or from_exported_program"),
    ("from_tensorflow", "from_onnx"),
    ("from_tflite", "from_onnx"),
])
def test_other_frameworks_say_what_to_use_instead(name, advice):
    with pytest.raises(FrontendError, match=advice):
        getattr(relay.frontend, name)(object(), {"data": (1, 3, 224, 224)})


def test_unknown_model_input_is_the_onnx_frontends_error():
    with pytest.raises(Exception, match="not inputs of the graph"):
        relay.frontend.from_onnx(tiny_cnn(), {"image": (1, 3, 8, 8)})
