"""``relay.frontend``: model importers of the Relay-era tutorials, returning Relax.

``from_onnx(model, shape_dict) -> (mod, params)``: ``mod["main"]`` takes the graph's
inputs and then its weights, whose values are in ``params`` (name -> NDArray); pass
both to ``relay.build``. ``freeze_params=True`` makes the weights constants instead
(``params`` is then empty).

The other frameworks' importers of TVM are not here; each says what to do instead.
MXNet is retired (its last release was in 2022 and it no longer installs): export the
model to ONNX, or take the same network from the ONNX model zoo, and use ``from_onnx``.
"""
from __future__ import annotations

import dataclasses

from ...ir.errors import MLCBenchError


class FrontendError(MLCBenchError):
    """A model format or framework mlcbench does not import."""


def from_onnx(model, shape=None, dtype="float32", opset=None, freeze_params: bool = False,
              convert_config=None):
    """``(mod, params)`` of an ONNX model (a ModelProto, a ``.onnx`` path, or its bytes).

    ``shape`` maps input names to static shapes (TVM's ``shape_dict``); ``dtype`` and
    ``opset`` are accepted for TVM's signature (the model's own are used).
    """
    from ...relax.frontend.onnx import from_onnx as relax_from_onnx
    mod = relax_from_onnx(model, shape, keep_params_in_input=not freeze_params)
    gv = mod.get_global_var("main")
    main = mod[gv]
    values = list(main.attrs.get("params", ()))
    if not values:
        return mod, {}
    # The importer puts the weights after the graph's inputs, in the order of their values.
    weights = main.params[len(main.params) - len(values):]
    params = {var.name_hint: value for var, value in zip(weights, values)}
    attrs = {k: v for k, v in main.attrs.items() if k != "params"}
    mod[gv] = dataclasses.replace(main, attrs=attrs)
    return mod, params


def _retired(framework: str, advice: str):
    def importer(*args, **kwargs):
        raise FrontendError(f"relay.frontend.from_{framework}: {advice}")
    importer.__name__ = f"from_{framework}"
    importer.__doc__ = f"Not available: {advice}"
    return importer


_ONNX_ADVICE = "export the model to ONNX and use relay.frontend.from_onnx"
from_mxnet = _retired("mxnet", "MXNet is retired (Apache MXNet was archived in 2023 and "
                               "does not install with current Python); " + _ONNX_ADVICE +
                      " (the ONNX model zoo has the same networks, e.g. ResNet-50)")
from_pytorch = _retired("pytorch", "TorchScript import is not supported; use "
                                   "mlcbench.relax.frontend.torch.from_fx or "
                                   "from_exported_program, or " + _ONNX_ADVICE)
from_tensorflow = _retired("tensorflow", "TensorFlow import is not supported; " + _ONNX_ADVICE
                           + " (tf2onnx)")
from_keras = _retired("keras", "Keras import is not supported; " + _ONNX_ADVICE + " (tf2onnx)")
from_tflite = _retired("tflite", "TFLite import is not supported; " + _ONNX_ADVICE
                       + " (tflite2onnx)")
from_caffe2 = _retired("caffe2", "Caffe2 is retired; " + _ONNX_ADVICE)
from_coreml = _retired("coreml", "CoreML import is not supported; " + _ONNX_ADVICE)
from_darknet = _retired("darknet", "Darknet import is not supported; " + _ONNX_ADVICE)

__all__ = ["FrontendError", "from_caffe2", "from_coreml", "from_darknet", "from_keras",
           "from_mxnet", "from_onnx", "from_pytorch", "from_tensorflow", "from_tflite"]
