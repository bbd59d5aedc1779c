import numpy as np
import pytest
from hypothesis import given, strategies as st

from mlcbench.ir import dtype

SUPPORTED = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64"]


@pytest.mark.parametrize("name", SUPPORTED)
def test_supported_dtypes_parse_and_map_to_numpy(name):
    dt = dtype(name)
    assert dt == name and str(dt) == name
    assert dt.lanes == 1
    assert dt.to_numpy() == np.dtype(name if name != "bool" else np.bool_)


def test_vector_dtype_parts():
    dt = dtype("float32x16")
    assert (dt.code, dt.bits, dt.lanes) == ("float", 32, 16)
    assert dt.element == "float32"
    assert dtype("float32").with_lanes(8) == "float32x8"
    assert dt.with_lanes(1) == "float32"


def test_classification():
    assert dtype("float16").is_float and not dtype("float16").is_integer
    assert dtype("uint8").is_uint and dtype("uint8").is_integer
    assert dtype("bool").is_bool and dtype("bool").itemsize == 1
    assert dtype("int64").itemsize == 8


def test_numpy_and_python_types_normalize():
    assert dtype(np.float32) == "float32"
    assert dtype(np.dtype("int64")) == "int64"
    assert dtype(np.bool_) == "bool"
    assert dtype(bool) == "bool"


@pytest.mark.parametrize("bad", ["float33", "complex64", "int", "f32", ""])
def test_unknown_dtype_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="dtype"):
        dtype(bad)


@given(st.sampled_from(SUPPORTED[1:]), st.integers(1, 64))
def test_lanes_round_trip(name, lanes):
    vec = dtype(name).with_lanes(lanes)
    assert vec.lanes == lanes and vec.element == name
    assert dtype(str(vec)) == vec
