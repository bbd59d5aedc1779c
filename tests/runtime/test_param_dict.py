"""save_param_dict / load_param_dict: an .npz archive, read without unpickling."""
import io

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from mlcbench import nd
from mlcbench.ir.errors import MLCBenchError
from mlcbench.runtime import load_param_dict, save_param_dict

DTYPES = st.sampled_from(["float32", "float64", "int32", "int64", "uint8"])


@given(arrays=st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
                              DTYPES.flatmap(lambda d: hnp.arrays(d, hnp.array_shapes(
                                  min_dims=0, max_dims=3, max_side=4))), max_size=4))
def test_round_trip_keeps_names_order_values_and_dtypes(arrays):
    loaded = load_param_dict(save_param_dict(arrays))
    assert list(loaded) == list(arrays)
    for name, value in arrays.items():
        assert loaded[name].dtype == str(value.dtype)
        np.testing.assert_array_equal(loaded[name].numpy(), value)


def test_ndarrays_save_and_a_bytearray_or_path_loads(tmp_path):
    blob = save_param_dict({"w": nd.array(np.arange(6, dtype="float32").reshape(2, 3))})
    path = tmp_path / "deploy.params"
    path.write_bytes(blob)
    for source in (bytearray(blob), path, str(path)):
        np.testing.assert_array_equal(load_param_dict(source)["w"].numpy(),
                                      np.arange(6, dtype="float32").reshape(2, 3))


def test_the_bytes_are_a_plain_npz_archive():
    blob = save_param_dict({"conv_w": np.ones((2, 2), "float32")})
    with np.load(io.BytesIO(blob), allow_pickle=False) as archive:
        assert archive.files == ["conv_w"]


def test_object_arrays_are_refused_when_saving():
    with pytest.raises(TypeError, match="parameter 'x' holds Python objects"):
        save_param_dict({"x": np.array([{"a": 1}], dtype=object)})


def test_a_pickled_object_array_is_refused_when_loading():
    buffer = io.BytesIO()
    np.savez(buffer, x=np.array([{"a": 1}], dtype=object))   # only a pickle can hold it
    with pytest.raises(MLCBenchError, match="not a parameter dict"):
        load_param_dict(buffer.getvalue())


@pytest.mark.parametrize("blob", [b"", b"not an archive", np.ones(3).tobytes()])
def test_bytes_that_are_not_an_archive_get_one_clear_error(blob):
    with pytest.raises(ValueError, match="not a parameter dict written by save_param_dict"):
        load_param_dict(blob)


def test_bad_arguments_name_what_was_expected():
    with pytest.raises(TypeError, match="expected a dict"):
        save_param_dict([np.ones(2)])
    with pytest.raises(ValueError, match="non-empty strings"):
        save_param_dict({"": np.ones(2)})
    with pytest.raises(TypeError, match="expected bytes or a path"):
        load_param_dict(3)
