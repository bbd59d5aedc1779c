"""Winograd convolution in NHWC: the three stages (input transform, batched matmul, output
transform) and the weight transform, against numpy's direct convolution; refusals."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import te, topi
from mlcbench.ir.errors import InvalidValueError
from mlcbench.topi.testing import conv2d_nhwc_python


def _nhwc_reference(data, kernel_hwio, pads):
    return conv2d_nhwc_python(data.astype("float64"), kernel_hwio.astype("float64"), 1, pads)


def _tolerance(data, kernel, tile):
    # The transforms add and subtract scaled copies: the error grows with the tile size.
    return 2e-6 * tile * np.abs(data).max() * np.abs(kernel).max() * kernel.shape[2] * 9


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 2), in_c=st.integers(1, 6), out_c=st.integers(1, 5),
       height=st.integers(3, 10), width=st.integers(3, 10),
       pads=st.tuples(*[st.integers(0, 2)] * 4), tile=st.sampled_from([2, 4, 6]),
       seed=st.integers(0, 2**16))
def test_whole_convolution_matches_numpy(run_te, batch, in_c, out_c, height, width, pads,
                                         tile, seed):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((batch, height, width, in_c)).astype("float32")
    kernel = rng.standard_normal((3, 3, in_c, out_c)).astype("float32")
    x = te.placeholder(data.shape, name="x")
    w = te.placeholder(kernel.shape, name="w")
    y = topi.nn.conv2d_winograd_nhwc(x, w, 1, pads, 1, tile_size=tile)
    expected = _nhwc_reference(data, kernel, pads)
    assert tuple(int(d) for d in y.shape) == expected.shape
    np.testing.assert_allclose(run_te([x, w], y, [data, kernel]), expected, rtol=0,
                               atol=_tolerance(data, kernel, tile))


@pytest.mark.parametrize("tile", [2, 4])
def test_constant_weight_equals_the_te_transform(run_te, tile):
    rng = np.random.default_rng(tile)
    kernel = rng.standard_normal((3, 3, 5, 7)).astype("float32")
    w = te.placeholder(kernel.shape, name="w")
    transformed = run_te([w], topi.nn.conv2d_winograd_nhwc_weight_transform(w, tile), [kernel])
    constant = topi.nn.winograd_nhwc_weight(kernel, tile)
    assert constant.shape == ((tile + 2) ** 2, 5, 7) and constant.dtype == np.float32
    np.testing.assert_allclose(constant, transformed, rtol=1e-5, atol=1e-5)


def test_stages_with_a_constant_weight_match_numpy(run_te):
    """What relax.nn.conv2d legalizes to: data_pack, batch_matmul(transform_b=False) with
    the constant transformed weight, inverse; 14x14 leaves half a tile at the edge."""
    rng = np.random.default_rng(3)
    data = rng.standard_normal((1, 14, 14, 8)).astype("float32")
    kernel = rng.standard_normal((3, 3, 8, 16)).astype("float32")
    x = te.placeholder(data.shape, name="x")
    u = te.placeholder(((4 + 2) ** 2, 8, 16), name="u")
    packed = topi.nn.winograd_nhwc_data_pack(x, 1, 4)
    assert tuple(int(d) for d in packed.shape) == (36, 16, 8)      # 4 x 4 tiles
    product = topi.nn.batch_matmul(packed, u, transpose_b=False)
    y = topi.nn.winograd_nhwc_inverse(product, (1, 14, 14, 16), 4)
    got = run_te([x, u], y, [data, topi.nn.winograd_nhwc_weight(kernel, 4)])
    np.testing.assert_allclose(got, _nhwc_reference(data, kernel, (1, 1, 1, 1)), rtol=0,
                               atol=_tolerance(data, kernel, 4))


def test_refusals():
    x = te.placeholder((1, 8, 8, 4), name="x")
    w = te.placeholder((3, 3, 4, 6), name="w")
    with pytest.raises(InvalidValueError, match="stride 1"):
        topi.nn.conv2d_winograd_nhwc(x, w, 2, 1, 1)
    with pytest.raises(InvalidValueError, match="expected NHWC data, found rank 3"):
        topi.nn.winograd_nhwc_data_pack(te.placeholder((8, 8, 4), name="x3"), 1)
    with pytest.raises(InvalidValueError, match=r"\(3, 3, 4, out_c\)"):
        topi.nn.conv2d_winograd_nhwc(x, te.placeholder((3, 3, 5, 6), name="w5"), 1, 1, 1)
    with pytest.raises(InvalidValueError, match="tile size must be one of"):
        topi.nn.winograd_nhwc_data_pack(x, 1, tile_size=3)
    with pytest.raises(InvalidValueError, match=r"expected a product of shape \(36, 4, 6\)"):
        topi.nn.winograd_nhwc_inverse(te.placeholder((36, 5, 6), name="m"), (1, 8, 8, 6), 4)
    with pytest.raises(InvalidValueError, match=r"HWIO weight of shape \(3, 3, in_c, out_c\)"):
        topi.nn.winograd_nhwc_weight(np.zeros((5, 5, 4, 6), "float32"))
    with pytest.raises(InvalidValueError, match="does not fit"):
        topi.nn.winograd_nhwc_data_pack(te.placeholder((1, 1, 1, 4), name="tiny"), 0)
