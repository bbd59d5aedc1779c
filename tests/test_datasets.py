"""mlcbench.datasets: the committed digits split, the trained weights and the numpy
references that compiled models are checked against."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import datasets
from mlcbench.ir.errors import MLCBenchError
from mlcbench.topi import testing as ref


def test_digits_split_shapes_dtypes_and_range():
    x_train, y_train, x_test, y_test = datasets.load_digits()
    assert x_train.shape == (1437, 1, 8, 8) and x_test.shape == (360, 1, 8, 8)
    assert x_train.dtype == x_test.dtype == np.float32
    assert y_train.shape == (1437,) and y_test.dtype == np.int64
    assert x_train.min() == 0.0 and x_train.max() == 1.0
    # 17 grey levels scaled by 1/16: every pixel is a multiple of 1/16.
    np.testing.assert_array_equal(x_train * 16, np.round(x_train * 16))
    assert set(np.unique(y_train)) == set(range(10)) == set(np.unique(y_test))


def test_flat_digits_are_the_nchw_images_row_by_row():
    nchw = datasets.load_digits()
    flat = datasets.load_digits(flat=True)
    assert flat[0].shape == (1437, 64) and flat[2].shape == (360, 64)
    np.testing.assert_array_equal(flat[2], nchw[2].reshape(360, 64))
    np.testing.assert_array_equal(flat[1], nchw[1])


def test_parameter_files_have_course_names_and_shapes():
    mlp = datasets.load_mlp_params()
    assert {k: v.shape for k, v in mlp.items()} == {
        "w0": (128, 64), "b0": (128,), "w1": (10, 128), "b1": (10,)}
    cnn = datasets.load_cnn_params()
    assert {k: v.shape for k, v in cnn.items()} == {
        "conv.weight": (8, 1, 3, 3), "conv.bias": (8,), "fc1.weight": (64, 128),
        "fc1.bias": (64,), "fc2.weight": (10, 64), "fc2.bias": (10,)}
    assert all(v.dtype == np.float32 for v in [*mlp.values(), *cnn.values()])


def test_trained_models_classify_the_test_split():
    _, _, x_flat, y_test = datasets.load_digits(flat=True)
    _, _, x_nchw, _ = datasets.load_digits()
    mlp = (datasets.mlp_forward(x_flat, datasets.load_mlp_params()).argmax(1) == y_test).mean()
    probs = datasets.cnn_forward(x_nchw, datasets.load_cnn_params())
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)
    cnn = (probs.argmax(1) == y_test).mean()
    # The README records 357/360 and 353/360; retraining must not silently regress.
    assert mlp > 0.98 and cnn > 0.97, (mlp, cnn)


@settings(max_examples=20, deadline=None)
@given(batch=st.integers(1, 3), channels=st.integers(1, 3), out=st.integers(1, 4),
       size=st.sampled_from([2, 4, 6]), seed=st.integers(0, 2**16))
def test_conv_and_pool_references_match_topi_references(batch, channels, out, size, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, channels, size, size)).astype(np.float32)
    w = rng.standard_normal((out, channels, 3, 3)).astype(np.float32)
    b = rng.standard_normal(out).astype(np.float32)
    expected = ref.conv2d_nchw_python(x, w, 1, (1, 1, 1, 1)) + b.reshape(1, -1, 1, 1)
    np.testing.assert_allclose(datasets.conv2d_same_3x3(x, w, b), expected, rtol=1e-4,
                               atol=1e-4)
    pooled = ref.pool2d_python(x, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max")
    np.testing.assert_array_equal(datasets.max_pool_2x2(x), pooled)


def test_missing_folder_names_the_path_and_the_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv(datasets.ENV_VAR, str(tmp_path))
    assert datasets.datasets_dir() == tmp_path
    with pytest.raises(datasets.DatasetNotFound, match="MLCBENCH_DATASETS") as info:
        datasets.load_mlp_params()
    assert str(tmp_path / "mlp_digits.npz") in str(info.value)
    assert isinstance(info.value, MLCBenchError) and isinstance(info.value, FileNotFoundError)
