import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlcbench.ir.errors import RuntimeError_
from mlcbench.runtime import KernelSpec, ParamSpec, decode_metadata, encode_metadata

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
dims = st.one_of(st.integers(0, 4096), names)
params = st.one_of(
    st.builds(ParamSpec, names, st.just("buffer"), st.sampled_from(["float32", "int64", "bool"]),
              st.lists(dims, max_size=4).map(tuple)),
    st.builds(ParamSpec, names, st.just("scalar"), st.sampled_from(["int32", "float64"])),
)
specs = st.builds(KernelSpec, names, names, st.lists(params, max_size=5).map(tuple),
                  st.lists(names, max_size=3).map(tuple))


@given(st.lists(specs, max_size=4))
def test_encode_decode_round_trip(kernel_specs):
    data = encode_metadata(kernel_specs)
    assert data.startswith(b'{"') and data.endswith(b"\0") and data.count(b"\0") == 1
    assert decode_metadata(data) == kernel_specs


def test_decode_ignores_extra_trailing_nuls():
    spec = KernelSpec("f", "f_sym", (ParamSpec("A", "buffer", "float32", (4, "n")),), ("n",))
    assert decode_metadata(encode_metadata([spec]) + b"\0\0") == [spec]


def test_specs_normalize_lists_to_tuples():
    spec = KernelSpec("f", "f", [ParamSpec("A", "buffer", "float32", [2, 3])], ["n"])
    assert spec.params[0].shape == (2, 3) and spec.shape_vars == ("n",)
    assert isinstance(spec.params, tuple)


@pytest.mark.parametrize("make, message", [
    (lambda: ParamSpec("A", "pointer", "float32", ()), "kind must be"),
    (lambda: ParamSpec("s", "scalar", "int32", (3,)), "scalar has shape"),
    (lambda: KernelSpec("f", "f", ("A",)), "must be ParamSpec"),
])
def test_invalid_specs_rejected(make, message):
    with pytest.raises(RuntimeError_, match=message):
        make()


@pytest.mark.parametrize("data", [b"not json\0", b'{"kernels": []}\0', b'{"mlcbench_metadata": 1}'])
def test_malformed_metadata_is_clear_error(data):
    with pytest.raises(RuntimeError_, match="malformed mlcbench metadata"):
        decode_metadata(data)
