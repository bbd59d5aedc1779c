"""Whole networks from the onnx wheel (``onnx/backend/test/data/light``): imported, built
and run, matching the outputs stored beside them and onnxruntime's. The small ones run
here; ``benchmarks/models.py`` runs all nine."""
import numpy as np
import pytest

from mlcbench.relay.testing import light_model_case, with_varied_weights

from .conftest import run_onnxruntime, run_ours


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet"])
def test_light_model_matches_stored_output_and_onnxruntime(name):
    model, inputs, stored = light_model_case(name)
    got = run_ours(model, inputs)[0]
    np.testing.assert_allclose(got, stored, rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(got, run_onnxruntime(model, inputs)[0], rtol=1e-3, atol=1e-6)


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet"])
def test_light_model_with_varied_weights_matches_onnxruntime(name):
    # the stored weights are fills (one value per tensor): vary them so that a weight
    # read at the wrong index changes the result
    model, inputs, _ = light_model_case(name)
    varied = with_varied_weights(model, seed=1)
    assert len(varied.graph.initializer) > len(model.graph.initializer)
    expected = run_onnxruntime(varied, inputs)[0]
    assert not np.allclose(expected, run_onnxruntime(model, inputs)[0], rtol=1e-3)
    np.testing.assert_allclose(run_ours(varied, inputs)[0], expected, rtol=1e-3, atol=1e-6)
