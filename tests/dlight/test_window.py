"""The WindowReduction rule: pooling-like kernels reduce their few taps outside a
vectorized output row, and compute what pooling computes."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import te, topi
from mlcbench.dlight.cpu import WindowReduction
from mlcbench.target import Target
from mlcbench.topi import testing as ref


def _max_pool(shape, kernel=3, stride=2, pad=1, kind="max"):
    x = te.placeholder(shape, name="x")
    out = topi.nn.pool2d(x, (kernel, kernel), (stride, stride), (1, 1), (pad,) * 4, kind)
    return x, out


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_applies_to_pooling(rule_for, kind):
    x, out = _max_pool((1, 4, 16, 16), kind=kind)
    assert rule_for([x], out) == "WindowReduction"


def test_leaves_rows_convolutions_and_global_pooling_to_other_rules(rule_for):
    x = te.placeholder((8, 1000), name="x")
    assert rule_for([x], topi.nn.softmax(x)) == "Reduction"
    plane = te.placeholder((1, 8, 7, 7), name="plane")
    assert rule_for([plane], topi.nn.global_avg_pool2d(plane)) == "Reduction"
    w = te.placeholder((8, 1, 3, 3), name="w")
    depthwise = topi.nn.depthwise_conv2d_nchw(plane, w, 1, 1, 1)
    func = te.create_prim_func([plane, w, depthwise])
    assert WindowReduction().apply(func, Target("llvm")) is None


@pytest.mark.parametrize("mcpu, tile", [("znver3", 16), ("znver4", 32)])
def test_taps_run_outside_the_vectorized_row(default_schedule, mcpu, tile):
    x, out = _max_pool((1, 4, 128, 128), kind="avg")   # output rows of 64: two vectors a tile
    text = default_schedule(te.create_prim_func([x, out]), Target(f"llvm -mcpu={mcpu}")).script()
    taps_at = text.index("for rv0, rv1, ax3_0 in T.grid(3, 3, ")
    assert f"T.vectorized({tile})" in text[taps_at:]
    assert "pool_sum_init" in text[:taps_at]        # the row starts at 0 before the taps


def test_large_pools_run_rows_in_parallel_and_small_ones_do_not(default_schedule):
    big = te.create_prim_func(list(_max_pool((1, 64, 112, 112))))
    # 64 channels x 7 blocks of 8 output rows (ROW_BUFFER_BYTES)
    assert "T.parallel(448)" in default_schedule(big).script()
    small = te.create_prim_func(list(_max_pool((1, 4, 16, 16))))
    assert "T.parallel" not in default_schedule(small).script()


def test_average_divides_inside_the_row(default_schedule):
    x, out = _max_pool((1, 64, 112, 112), kind="avg")
    text = default_schedule(te.create_prim_func([x, out])).script()
    row_at = text.index("T.parallel(")
    assert text.count("T.parallel(") == 1 and 'T.block("pool_avg")' in text[row_at:]


@pytest.mark.parametrize("mcpu, tile", [("znver3", 4), ("znver4", 28)])
def test_average_divides_one_row_per_vector(default_schedule, mcpu, tile):
    """The division after the taps is vectorized along each 28-pixel row, under a loop
    over rows: fused over the map, a vector of 16 spans rows and divides its counter
    per lane to find each lane's row and divisor. With 16 lanes the row is one vector
    of 28, as the taps' sums are (not two of 14)."""
    x, out = _max_pool((1, 192, 28, 28), kernel=3, stride=1, pad=1, kind="avg")
    text = default_schedule(te.create_prim_func([x, out]), Target(f"llvm -mcpu={mcpu}")).script()
    avg = text[text.index("for", text.rindex("pool_sum_update")):]
    assert re.search(rf"for \w+, \w+ in T\.grid\(28, {28 // tile}\):\s*"
                     rf"for \w+ in T\.vectorized\({tile}\)", avg), text
    assert "// 28" not in avg and "% 28" not in avg, text
    taps = text[text.index("for rv0, rv1, ax3_0 in T.grid(3, 3, "):]
    assert f"T.vectorized({28 if mcpu == 'znver4' else 4})" in taps[:200], text


@pytest.mark.parametrize("size, mcpu, tile", [(56, "znver4", 28), (112, "znver4", 56),
                                              (112, "znver3", 8), (256, "znver4", 16)])
def test_two_stage_max_pool_window_row_is_one_vector_on_16_lanes(default_schedule, size,
                                                                  mcpu, tile):
    """On 16 lanes the window stage's row of outputs is one vector up to four registers
    (28 and 56 outputs; 128 are tiles of 16); on 8 lanes it keeps the register tiles."""
    x, out = _max_pool((1, 8, size, size), kernel=3, stride=2, pad=1)
    text = default_schedule(te.create_prim_func([x, out]), Target(f"llvm -mcpu={mcpu}")).script()
    window = text[text.index("pool_row_max_update"):]
    assert re.search(rf"for \w+, \w+ in T\.grid\(\d+, {size // 2 // tile}\):\s*"
                     rf"for \w+ in T\.vectorized\({tile}\):\s*"
                     r'with T\.block\("pool_max_init"\)', window), text


@settings(max_examples=25, deadline=None)
@given(channels=st.integers(1, 3), height=st.integers(3, 12), width=st.integers(3, 40),
       kernel=st.integers(1, 3), stride=st.integers(1, 2), pad=st.integers(0, 1),
       kind=st.sampled_from(["max", "avg"]), include=st.booleans(), ceil=st.booleans())
def test_pooling_matches_reference(run_te, channels, height, width, kernel, stride, pad,
                                   kind, include, ceil):
    pad = min(pad, kernel - 1)
    a = np.random.default_rng(height * width).standard_normal(
        (1, channels, height, width)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    args = ((kernel, kernel), (stride, stride), (1, 1), (pad,) * 4, kind, ceil)
    y = topi.nn.pool2d(x, *args, "NCHW", include)
    np.testing.assert_allclose(run_te([x], y, [a]), ref.pool2d_python(a, *args, include),
                               rtol=1e-5, atol=1e-6)


def test_max_pool_keeps_infinities_and_nan(run_te):
    a = np.zeros((1, 1, 4, 20), "float32")
    a[0, 0, 0, 3], a[0, 0, 2, 7], a[0, 0, 3, 12] = np.inf, -np.inf, np.nan
    x, out = _max_pool(a.shape, kernel=2, stride=2, pad=0)
    got = run_te([x], out, [a])
    assert got[0, 0, 0, 1] == np.inf and np.isnan(got[0, 0, 1, 6])
    assert got[0, 0, 1, 3] == 0.0


def test_nhwc_pooling_vectorizes_channels(default_schedule, run_te, rng):
    a = rng.standard_normal((1, 9, 9, 32)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    y = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max", layout="NHWC")
    text = default_schedule(te.create_prim_func([x, y])).script()
    assert "T.grid(3, 3, " in text and "T.vectorized(" in text
    expected = ref.pool2d_python(a.transpose(0, 3, 1, 2), (3, 3), (2, 2), (1, 1),
                                 (1, 1, 1, 1), "max").transpose(0, 2, 3, 1)
    np.testing.assert_allclose(run_te([x], y, [a]), expected, rtol=1e-6)



def test_padding_read_many_times_is_a_plane_per_channel(default_schedule):
    """A 3x3/1 window reads each padded element about eight times: the padding is copied
    into one plane per channel (guarded once per element) and the taps read it unguarded;
    a 3x3/2 window reads each about twice and keeps the guard on its taps."""
    x, out = _max_pool((1, 192, 28, 28), kernel=3, stride=1, pad=1, kind="avg")
    text = default_schedule(te.create_prim_func([x, out]), Target("llvm -mcpu=znver3")).script()
    row_at = text.index("T.parallel(192)")
    assert text.index('T.block("pad_temp")') > row_at
    assert "T.if_then_else" not in text[text.index('T.block("pool_sum_update")'):]
    x, out = _max_pool((1, 64, 112, 112), kind="avg")
    text = default_schedule(te.create_prim_func([x, out]), Target("llvm -mcpu=znver3")).script()
    assert 'T.block("pad_temp")' not in text and "T.parallel(3584)" in text


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("kind, include, ceil", [("avg", True, False), ("avg", False, True),
                                                 ("max", True, True)])
def test_padded_stride_one_pooling_matches_reference(run_te, rng, layout, kind, include, ceil):
    a = rng.standard_normal((1, 3, 13, 12)).astype("float32")
    a[0, 1, 0, 0], a[0, 2, 12, 11] = 40.0, -np.inf     # corners: taps that meet the padding
    data = a if layout == "NCHW" else a.transpose(0, 2, 3, 1)
    x = te.placeholder(data.shape, name="x")
    args = ((3, 3), (1, 1), (1, 1), (1, 1, 1, 1), kind, ceil)
    got = run_te([x], topi.nn.pool2d(x, *args, layout, include), [data])
    if layout == "NHWC":
        got = got.transpose(0, 3, 1, 2)
    with np.errstate(invalid="ignore"):
        expected = ref.pool2d_python(a, *args, include)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
