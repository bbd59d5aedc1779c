"""The TVMC Python API: load, compile, run (tune runs in test_seed_programs.py)."""
import numpy as np
import onnx
import pytest

from mlcbench.driver import tvmc
from mlcbench.relay.testing import light_model_path, reference_outputs, tiny_mlp


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("tvmc") / "my_model.onnx"
    onnx.save(tiny_mlp(), path)
    return path


@pytest.fixture(scope="module")
def package(model_path, tmp_path_factory):
    model = tvmc.load(str(model_path))
    return tvmc.compile(model, target="llvm",
                        package_path=tmp_path_factory.mktemp("pkg") / "module.tar")


def test_load_keeps_the_weights_as_params(model_path):
    model = tvmc.load(str(model_path))
    assert model.name == "my_model" and sorted(model.params) == ["b1", "b2", "w1", "w2"]
    assert "def main(input: R.Tensor((1, 10)" in model.summary()


def test_run_matches_the_reference(package):
    x = np.random.default_rng(0).standard_normal((1, 10)).astype("float32")
    result = tvmc.run(package, inputs={"input": x}, device="cpu")
    assert list(result.outputs) == ["output_0"] and result.times is None
    np.testing.assert_allclose(result.outputs["output_0"],
                               reference_outputs(tiny_mlp(), {"input": x})[0], rtol=1e-5,
                               atol=1e-5)


def test_run_a_package_path_filled_with_ones_and_timed(package, tmp_path):
    result = tvmc.run(package.package_path, fill_mode="ones", repeat=3, number=2)
    expected = reference_outputs(tiny_mlp(), {"input": np.ones((1, 10), "float32")})[0]
    np.testing.assert_allclose(result.outputs["output_0"], expected, rtol=1e-5, atol=1e-5)
    assert len(result.times.results) == 3 and "mean (ms)" in result.format_times()
    result.save(tmp_path / "out.npz")
    with np.load(tmp_path / "out.npz", allow_pickle=False) as saved:
        np.testing.assert_array_equal(saved["output_0"], result.outputs["output_0"])


def test_package_describes_inputs_and_outputs(package):
    assert package.inputs == [{"name": "input", "shape": [1, 10], "dtype": "float32"}]
    assert package.outputs == [{"name": "output_0", "shape": [1, 4], "dtype": "float32"}]


def test_a_light_model_from_the_wheel_loads():
    model = tvmc.load(light_model_path("squeezenet"))
    assert model.mod["main"].params[0].name_hint == "data_0"


@pytest.mark.parametrize("path, message", [
    ("model.pb", "imports ONNX models"), ("missing.onnx", "no such file")])
def test_load_refuses_what_it_cannot_read(tmp_path, path, message):
    with pytest.raises(tvmc.TVMCException, match=message):
        tvmc.load(str(tmp_path / path))


def test_run_refuses_unknown_inputs_and_fill_modes(package):
    with pytest.raises(tvmc.TVMCException, match=r"no input\(s\) \['image'\]"):
        tvmc.run(package, inputs={"image": np.ones((1, 10), "float32")})
    with pytest.raises(tvmc.TVMCException, match="fill_mode is one of"):
        tvmc.run(package, fill_mode="noise")
    with pytest.raises(Exception, match="shape"):
        tvmc.run(package, inputs={"input": np.ones((2, 10), "float32")})


def test_compile_refuses_missing_records_and_gpu_targets(model_path, tmp_path):
    model = tvmc.load(str(model_path))
    with pytest.raises(tvmc.TVMCException, match="no tuning records"):
        tvmc.compile(model, tuning_records=tmp_path / "none.json")
    with pytest.raises(Exception, match="no GPU runtime"):
        tvmc.compile(model, target="cuda")
    with pytest.raises(tvmc.TVMCException, match="trials must be a positive int"):
        tvmc.tune(model, trials=0)
