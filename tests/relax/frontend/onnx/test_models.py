"""Whole networks from the onnx wheel (``onnx/backend/test/data/light``): imported, built
and run, matching the outputs stored beside them and onnxruntime's. The small ones run
here; ``benchmarks/models.py`` runs all nine."""
import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from .conftest import run_onnxruntime, run_ours

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def light_case(name: str):
    """(model, inputs, stored output): the input is the ramp onnx's backend test feeds."""
    model = onnx.load(os.path.join(LIGHT, f"light_{name}.onnx"))
    initializers = {t.name for t in model.graph.initializer}
    info = next(i for i in model.graph.input if i.name not in initializers)
    shape = tuple(d.dim_value for d in info.type.tensor_type.shape.dim)
    count = int(np.prod(shape))
    data = (np.arange(count).reshape(shape) / count).astype("float32")
    stored = numpy_helper.to_array(onnx.load_tensor(
        os.path.join(LIGHT, f"light_{name}_output_0.pb")))
    return model, {info.name: data}, stored


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet"])
def test_light_model_matches_stored_output_and_onnxruntime(name):
    model, inputs, stored = light_case(name)
    got = run_ours(model, inputs)[0]
    np.testing.assert_allclose(got, stored, rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(got, run_onnxruntime(model, inputs)[0], rtol=1e-3, atol=1e-6)
