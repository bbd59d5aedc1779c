"""The Winograd rule on ``topi.nn.conv2d_winograd_nchw``: every transform stage runs its
channels across the threads with its position loop unrolled, the input transform's
second stage and the output transform's first with the tiles in the vector lanes, and
the result matches numpy."""
import re

import numpy as np
from hypothesis import given, settings, strategies as st

from mlcbench import te, topi
from mlcbench.target import Target
from mlcbench.topi.testing import conv2d_nchw_python


def _winograd(channels, out_channels, size, pad=1, tile_multiple=8):
    x = te.placeholder((1, channels, size, size), name="x")
    w = te.placeholder((out_channels, channels, 3, 3), name="w")
    y = topi.nn.relu(topi.nn.conv2d_winograd_nchw(x, w, 1, pad, 1, tile_size=4,
                                                  tile_multiple=tile_multiple))
    return x, w, y


def _nest(text, block):
    """The loop headers from the top of ``block``'s nest down to it."""
    lines = text[:text.index(f'T.block("{block}")')].splitlines()
    loops = [(k, len(ln) - len(ln.lstrip())) for k, ln in enumerate(lines)
             if ln.strip().startswith("for ")]
    outermost = min(depth for _, depth in loops)
    top = max(k for k, depth in loops if depth == outermost)
    return [ln.strip() for ln in lines[top:] if ln.strip().startswith("for ")]


def test_the_rule_is_winograd(rule_for):
    x, w, y = _winograd(4, 8, 8)
    assert rule_for([x, w], y) == "Winograd"


def test_transforms_run_channels_in_parallel_and_tiles_in_vector_lanes(default_schedule):
    """64 -> 64 channels at 56x56: 196 tiles of 4x4, rounded up to 200."""
    x, w, y = _winograd(64, 64, 56)
    text = default_schedule(te.create_prim_func([x, w, y]), Target("llvm -mcpu=znver4")).script()
    assert _nest(text, "data_pad") == ["for i0_i1_fused in T.parallel(64):",
                                       "for i2, i3_0 in T.grid(58, 4):",
                                       "for i3_1 in T.vectorized(16):"]
    assert _nest(text, "data_pack_rows") == ["for ci in T.parallel(64):",
                                             "for b, p in T.grid(6, 200):",
                                             "for eps in T.unroll(6):"]
    assert _nest(text, "data_pack") == ["for ci in T.parallel(64):",
                                        "for eps, p_0 in T.grid(6, 20):",
                                        "for nu in T.unroll(6):",
                                        "for p_1 in T.vectorized(10):"]
    assert _nest(text, "inverse_rows") == ["for co in T.parallel(64):",
                                           "for b, p_0 in T.grid(6, 14):",
                                           "for vh in T.unroll(4):",
                                           "for p_1 in T.vectorized(14):"]
    assert _nest(text, "inverse") == ["for co in T.parallel(64):",
                                      "for p, vh in T.grid(196, 4):",
                                      "for vw in T.unroll(4):"]
    assert re.search(r"for \w+ in T\.parallel\(36\):", text)       # the batched product


def test_eight_lanes_take_an_eight_lane_tile_of_the_tiles(default_schedule):
    x, w, y = _winograd(16, 16, 16)          # 16 tiles
    text = default_schedule(te.create_prim_func([x, w, y]), Target("llvm -mcpu=znver3")).script()
    assert _nest(text, "data_pack")[-1] == "for p_1 in T.vectorized(8):"


@settings(max_examples=15, deadline=None)
@given(channels=st.integers(1, 6), out_channels=st.integers(1, 6), size=st.integers(3, 13),
       pad=st.integers(0, 1), tile_multiple=st.sampled_from([1, 8]),
       seed=st.integers(0, 2**16))
def test_scheduled_winograd_matches_numpy(run_te, channels, out_channels, size, pad,
                                          tile_multiple, seed):
    x, w, y = _winograd(channels, out_channels, size, pad, tile_multiple)
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((1, channels, size, size)).astype("float32")
    k = rng.standard_normal((out_channels, channels, 3, 3)).astype("float32")
    expected = np.maximum(conv2d_nchw_python(a, k, 1, (pad,) * 4), 0)
    np.testing.assert_allclose(run_te([x, w], y, [a, k]), expected, rtol=1e-4, atol=1e-4)
