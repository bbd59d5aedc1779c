"""pool2d's two-stage max pool: the max over each column's kernel rows (pool_row_max),
then over neighbours along that row of maxes (pool_max), for overlapping NCHW windows."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import te, topi


def _blocks(out, inputs):
    text = te.create_prim_func(list(inputs) + [out]).script()
    return [name for name in ("pad_temp", "pool_row_max", "pool_row_pad", "pool_max")
            if f'T.block("{name}")' in text]


def _out_extent(size, k, s, d, lo, hi, ceil):
    span = size + lo + hi - ((k - 1) * d + 1)
    return (-(-span // s) if ceil else span // s) + 1


def numpy_max_pool(a, kernel, stride, dilation, padding, ceil):
    """Max over every tap's strided slice of the input padded with -inf (a window that
    lies wholly in the padding is -inf, as pool2d's)."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    top, left, bottom, right = padding
    out_h = _out_extent(a.shape[2], kh, sh, dh, top, bottom, ceil)
    out_w = _out_extent(a.shape[3], kw, sw, dw, left, right, ceil)
    need_h, need_w = (out_h - 1) * sh + (kh - 1) * dh + 1, (out_w - 1) * sw + (kw - 1) * dw + 1
    padded = np.pad(a, [(0, 0), (0, 0), (top, max(bottom, need_h - top - a.shape[2])),
                        (left, max(right, need_w - left - a.shape[3]))],
                    constant_values=-np.inf)
    taps = [padded[:, :, ty * dh:ty * dh + (out_h - 1) * sh + 1:sh,
                   tx * dw:tx * dw + (out_w - 1) * sw + 1:sw]
            for ty in range(kh) for tx in range(kw)]
    return np.max(taps, axis=0)


@pytest.mark.parametrize("kernel, stride, layout, kind, two_stage", [
    ((3, 3), (2, 2), "NCHW", "max", True),      # ResNet's first pool
    ((3, 3), (1, 1), "NCHW", "max", True),
    ((2, 3), (2, 2), "NCHW", "max", True),
    ((2, 2), (2, 2), "NCHW", "max", False),     # windows do not overlap
    ((3, 1), (1, 1), "NCHW", "max", False),     # one column: no row of maxes to share
    ((1, 3), (1, 1), "NCHW", "max", False),     # one row: no row stage
    ((3, 3), (2, 2), "NHWC", "max", False),     # W is not innermost: channels vectorize
    ((3, 3), (2, 2), "NCHW", "avg", False),
])
def test_overlapping_nchw_max_pools_run_in_two_stages(kernel, stride, layout, kind,
                                                      two_stage):
    shape = (1, 4, 12, 12)
    x = te.placeholder(shape, name="x")
    out = topi.nn.pool2d(x, kernel, stride, (1, 1), (1, 1, 1, 1), kind, layout=layout)
    blocks = _blocks(out, [x])
    assert ("pool_row_max" in blocks) == two_stage
    if two_stage:       # H padded before the row stage, W between the two stages
        assert blocks == ["pad_temp", "pool_row_max", "pool_row_pad", "pool_max"]


def test_two_stage_keeps_infinities_and_nan(run_te):
    a = np.zeros((1, 1, 6, 9), "float32")
    a[0, 0, 0, 0], a[0, 0, 5, 8], a[0, 0, 3, 4] = -np.inf, np.inf, np.nan
    x = te.placeholder(a.shape, name="x")
    out = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
    got = run_te([x], out, [a])
    assert got[0, 0, 0, 0] == 0.0 and got[0, 0, 2, 4] == np.inf
    assert np.isnan(got[0, 0, 1, 2]) and np.isnan(got[0, 0, 2, 2])


@settings(max_examples=30, deadline=None)
@given(height=st.integers(1, 9), width=st.integers(1, 20), kh=st.integers(2, 4),
       kw=st.integers(3, 4), sh=st.integers(1, 3), dh=st.integers(1, 2),
       dw=st.integers(1, 2), ceil=st.booleans(), data=st.data())
def test_two_stage_max_pool_matches_numpy(run_te, height, width, kh, kw, sh, dh, dw, ceil,
                                          data):
    sw = data.draw(st.integers(1, kw - 1))          # overlapping windows: two stages
    pads = [data.draw(st.integers(0, k - 1)) for k in (kh, kw, kh, kw)]
    top, left, bottom, right = pads
    # at least one window: the padded input is as large as the kernel's span
    height = max(height, (kh - 1) * dh + 1 - top - bottom)
    width = max(width, (kw - 1) * dw + 1 - left - right)
    a = np.random.default_rng(height * 31 + width).standard_normal(
        (1, 2, height, width)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    args = ((kh, kw), (sh, sw), (dh, dw), tuple(pads))
    out = topi.nn.pool2d(x, *args, "max", ceil)
    assert "pool_row_max" in _blocks(out, [x])
    np.testing.assert_array_equal(run_te([x], out, [a]), numpy_max_pool(a, *args, ceil))
