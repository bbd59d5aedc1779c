"""The WinogradNHWC rule on the transform kernels of ``topi.nn.conv2d_winograd_nhwc``: tiles
across the threads, positions unrolled, channels in the vector lanes, each tile's
patch and passes computed next to their consumer; results match numpy."""
import numpy as np
from hypothesis import given, settings, strategies as st

from mlcbench import te, topi
from mlcbench.target import Target
from mlcbench.topi.testing import conv2d_nhwc_python


def _nest(text, block):
    """The headers of the loops enclosing ``block``, outermost first."""
    lines = text[:text.index(f'T.block("{block}")')].splitlines()
    chain = []
    for line in lines:
        if not line.strip().startswith("for "):
            continue
        depth = len(line) - len(line.lstrip())
        # A loop at the same or a shallower depth closes the ones it follows.
        while chain and depth <= chain[-1][0]:
            chain.pop()
        chain.append((depth, line.strip()))
    return [header for _, header in chain]


def _pack(channels, size, pad=1):
    x = te.placeholder((1, size, size, channels), name="x")
    return x, topi.nn.winograd_nhwc_data_pack(x, pad, 4)


def _inverse_relu(out_c, size):
    tiles = -(-size // 4)
    m = te.placeholder((36, tiles * tiles, out_c), name="m")
    bias = te.placeholder((out_c,), name="bias")
    y = topi.nn.winograd_nhwc_inverse(m, (1, size, size, out_c), 4)
    return m, bias, topi.nn.relu(topi.add(y, bias))


def test_the_rule_is_winograd_nhwc(rule_for):
    x, packed = _pack(16, 8)
    assert rule_for([x], packed) == "WinogradNHWC"
    m, bias, y = _inverse_relu(16, 8)
    assert rule_for([m, bias], y) == "WinogradNHWC"


def test_input_transform_nest(default_schedule, named_target):
    """128 channels at 28x28: 49 tiles across the threads, one vector of channels at a
    time, the 36 positions unrolled; the patch and its column pass under the same
    channel loop."""
    lanes = named_target.vector_lanes(32)
    x, packed = _pack(128, 28)
    text = default_schedule(te.create_prim_func([x, packed]), named_target).script()
    head = ["for p in T.parallel(49):", f"for ci_0 in range({128 // lanes}):"]
    assert _nest(text, "winograd_data_pack") == head + [
        "for e in T.unroll(36):", f"for ci_1 in T.vectorized({lanes}):"]
    for stage in ("winograd_patch", "winograd_patch_rows"):
        assert _nest(text, stage) == head + ["for ax0 in T.unroll(6):",
                                             "for ax1 in T.unroll(6):",
                                             f"for ax2 in T.vectorized({lanes}):"]
    assert "T.parallel(" in _nest(text, "data_pad")[0]


def test_output_transform_nest_takes_its_consumers(default_schedule, named_target):
    """64 channels at 14x14: 4 x 4 tiles (the last half outside the image), the bias and
    relu inlined into the gather's store, which tests the image bound."""
    lanes = named_target.vector_lanes(32)
    m, bias, y = _inverse_relu(64, 14)
    text = default_schedule(te.create_prim_func([m, bias, y]), named_target).script()
    assert 'T.block("T_relu")' not in text and 'T.block("T_add")' not in text
    head = ["for n_h_0_w_0_fused in T.parallel(16):", f"for co_0 in range({64 // lanes}):"]
    assert _nest(text, "winograd_inverse") == head + [
        "for h_1 in T.unroll(4):", "for w_1 in T.unroll(4):",
        f"for co_1 in T.vectorized({lanes}):"]
    assert _nest(text, "winograd_inverse_rows")[2:] == [
        "for ax0 in T.unroll(4):", "for ax1 in T.unroll(6):",
        f"for ax2 in T.vectorized({lanes}):"]
    assert "T.where(" in text


def test_channels_no_multiple_of_the_lanes_keep_a_vector_tile(default_schedule):
    x, packed = _pack(24, 8)
    text = default_schedule(te.create_prim_func([x, packed]), Target("llvm -mcpu=znver4")).script()
    assert _nest(text, "winograd_data_pack")[-1].startswith("for ci_1 in T.vectorized(")


@settings(max_examples=10, deadline=None)
@given(channels=st.integers(1, 20), out_channels=st.integers(1, 20), size=st.integers(3, 13),
       pad=st.integers(0, 1), seed=st.integers(0, 2**16))
def test_scheduled_stages_match_numpy(run_te, channels, out_channels, size, pad, seed):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((1, size, size, channels)).astype("float32")
    kernel = rng.standard_normal((3, 3, channels, out_channels)).astype("float32")
    bias = rng.standard_normal(out_channels).astype("float32")
    x = te.placeholder(data.shape, name="x")
    packed = run_te([x], topi.nn.winograd_nhwc_data_pack(x, pad, 4), [data])
    product = packed @ topi.nn.winograd_nhwc_weight(kernel, 4)          # the batched matmul
    out = size + 2 * pad - 2
    m, b, y = _inverse_relu(out_channels, out)
    got = run_te([m, b], y, [product.astype("float32"), bias])
    conv = conv2d_nhwc_python(data, kernel, 1, (pad,) * 4)
    scale = np.abs(data).max() * np.abs(kernel).max() * channels * 9
    np.testing.assert_allclose(got, np.maximum(conv + bias, 0), rtol=0, atol=1e-5 * scale)
