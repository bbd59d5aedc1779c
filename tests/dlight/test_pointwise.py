"""Pointwise NCHW convolutions: output pixels in the vector lanes on 16-lane targets.

Schedules are made for named targets; the numeric checks build the scheduled function
for the host (the schedule is plain TIR), so they run on AVX2 and AVX-512 hosts alike.
"""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench
from mlcbench import te, tir, topi
from mlcbench.dlight.cpu import Conv2D
from mlcbench.dlight.cpu.pointwise import CHANNEL_ROWS, PANEL_VECTORS, pixel_lanes
from mlcbench.target import Target
from mlcbench.topi import testing as ref

AVX512 = Target("llvm -mcpu=znver4")
AVX2 = Target("llvm -mcpu=znver3")


def _conv(c_in, c_out, height, width, stride=1, kernel=1, bias_relu=True, residual=False):
    x = te.placeholder((1, c_in, height, width), name="x")
    w = te.placeholder((c_out, c_in, kernel, kernel), name="w")
    inputs = [x, w]
    y = topi.nn.conv2d_nchw(x, w, stride, kernel // 2, 1)
    if bias_relu:
        b = te.placeholder((c_out, 1, 1), name="b")
        inputs.append(b)
        y = topi.add(y, b)
        if residual:
            r = te.placeholder([int(s) for s in y.shape], name="r")
            inputs.append(r)
            y = topi.add(y, r)
        y = topi.nn.relu(y)
    return inputs, y, te.create_prim_func(inputs + [y])


def test_pixels_go_in_the_lanes_with_channels_as_broadcast_rows():
    _, _, func = _conv(64, 256, 56, 56)
    text = Conv2D().apply(func, AVX512).mod["main"].script()
    cols = 16 * PANEL_VECTORS
    # 3136 / 32 pixel tiles in parallel, each copying its pixels of the 64 input channels
    # into a panel; inside, 256 / 8 channel tiles, the channels unrolled and the pixels
    # vectorized; the weight read in place (no packed copy).
    assert re.search(rf"for nn_yy_xx_0_fused in T\.parallel\({3136 // cols}\):\s*"
                     rf"for ax0 in range\(64\):\s*for ax1 in T\.vectorized\({cols}\):", text), text
    assert f"x_global = T.alloc_buffer((1, {3136 // cols}, 64, {cols}))" in text, text
    assert re.search(r"x_global\[v0, v2_v3 // 32, v1, v2_v3 % 32\] = "
                     r"x\[v0, v1, v2_v3 // 56, v2_v3 % 56\]", text), text
    assert re.search(rf"for ff_0 in range\({256 // CHANNEL_ROWS}\):", text), text
    assert re.search(rf"for rc_ry_rx in range\(64\):\s*for ff_1 in T\.unroll\({CHANNEL_ROWS}\):"
                     rf"\s*for yy_xx_1 in T\.vectorized\({cols}\):", text), text
    assert "x_global[v_nn, v_yy_xx // 32, v_rc_ry_rx, v_yy_xx % 32] * w[v_ff, v_rc_ry_rx, 0, 0]" \
        in text, text
    assert "w_global" not in text
    assert re.search(r'alloc_buffer\(\(1, 256, 3136\), scope="local"\)', text), text
    # the epilogue stores whole pixel vectors of the NCHW output, once per tile
    assert re.search(r"compute\[v0, v1, v2_v3 // 56, v2_v3 % 56\] = T\.max\(", text), text


def test_pixels_that_fill_one_vector_per_row_take_panels_one_vector_wide():
    _, _, func = _conv(128, 512, 28, 28, bias_relu=False)
    text = pixel_lanes(func, AVX512).mod["main"].script()
    assert "x_global = T.alloc_buffer((1, 49, 128, 16))" in text, text
    assert re.search(r"for ff_1 in T\.unroll\(8\):\s*for yy_xx_1 in T\.vectorized\(16\):",
                     text), text


def test_few_pixel_tiles_read_the_input_in_place_with_channel_tiles_in_parallel():
    """8x8 pixels make two tiles of 32: a panel per task would be copied for each
    channel tile, so the input is read where it lies and the channel tiles join the
    parallel loop."""
    _, _, func = _conv(256, 256, 8, 8)
    text = pixel_lanes(func, AVX512).mod["main"].script()
    assert "x_global" not in text
    assert re.search(rf"in T\.parallel\({256 // CHANNEL_ROWS * 64 // 16}\):", text), text
    assert re.search(r"x\[v_nn, v_rc, v_yy_xx // 8 \+ v_ry, v_yy_xx % 8 \+ v_rx\]", text), text


def test_the_schedule_is_a_trace_of_primitives():
    from mlcbench.ir import structural_hash
    from mlcbench.tir import Schedule
    _, _, func = _conv(32, 64, 28, 28, residual=True)
    sch = pixel_lanes(func, AVX512)
    assert "transform_block_layout" in str(sch.trace)
    replayed = sch.trace.apply_to_schedule(Schedule(func), remove_postproc=False)
    assert structural_hash(replayed.mod) == structural_hash(sch.mod)


def test_register_tile_where_the_pixels_do_not_fill_whole_vectors_or_lanes_are_8():
    for target, args in [(AVX512, (256, 1024, 14, 14)), (AVX512, (512, 2048, 7, 7)),
                         (AVX2, (64, 256, 56, 56)), (AVX512, (64, 256, 56, 56, 2)),
                         (AVX512, (64, 64, 56, 56, 1, 3))]:
        _, _, func = _conv(*args)
        assert pixel_lanes(func, target) is None, args
        assert "w_global" in Conv2D().apply(func, target).mod["main"].script(), args


def test_a_symbolic_batch_is_left_to_the_other_schedules():
    n = tir.Var("n", "int64")
    x, w = te.placeholder((n, 16, 8, 8), name="x"), te.placeholder((32, 16, 1, 1), name="w")
    func = te.create_prim_func([x, w, topi.nn.conv2d_nchw(x, w, 1, 0, 1)])
    assert pixel_lanes(func, AVX512) is None
    Conv2D().apply(func, AVX512)       # refuses or schedules, never raises


def test_channels_that_no_tile_height_divides_keep_the_register_tile():
    _, _, func = _conv(16, 3 * 11, 16, 16)
    assert pixel_lanes(func, AVX512) is None


def _run_host(func, arrays, out_shape):
    lib = mlcbench.build(func, target="llvm")
    nd = [mlcbench.nd.array(a) for a in arrays] + [mlcbench.nd.array(np.zeros(out_shape,
                                                                              "float32"))]
    lib["main"](*nd)
    return nd[-1].numpy()


@settings(max_examples=12, deadline=None)
@given(c_in=st.integers(2, 24), rows=st.sampled_from([4, 5, 6, 8]),
       tiles=st.integers(1, 3),
       pixels=st.sampled_from([(4, 4), (2, 8), (8, 6), (3, 16), (16, 32), (28, 28), (24, 24)]),
       epilogue=st.sampled_from(["none", "bias_relu", "residual"]))
def test_matches_numpy(c_in, rows, tiles, pixels, epilogue):
    height, width = pixels
    c_out = rows * tiles
    inputs, y, func = _conv(c_in, c_out, height, width, bias_relu=epilogue != "none",
                            residual=epilogue == "residual")
    sch = pixel_lanes(func, AVX512)
    assert sch is not None
    rng = np.random.default_rng(c_in * 100 + c_out)
    arrays = [rng.standard_normal([int(s) for s in t.shape]).astype("float32") for t in inputs]
    expected = ref.conv2d_nchw_python(arrays[0], arrays[1], 1, (0, 0, 0, 0))
    if epilogue != "none":
        expected = expected + arrays[2]
        if epilogue == "residual":
            expected = expected + arrays[3]
        expected = np.maximum(expected, 0)
    got = _run_host(sch.mod["main"], arrays, expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("c_in, c_out, pixels", [(16, 24, (16, 32)), (5, 8, (28, 28)),
                                                 (12, 16, (24, 24))])
def test_packed_panels_match_numpy(c_in, c_out, pixels):
    inputs, y, func = _conv(c_in, c_out, *pixels, residual=True)
    sch = pixel_lanes(func, AVX512)
    assert "x_global" in sch.mod["main"].script()
    rng = np.random.default_rng(c_in)
    arrays = [rng.standard_normal([int(s) for s in t.shape]).astype("float32") for t in inputs]
    expected = ref.conv2d_nchw_python(arrays[0], arrays[1], 1, (0, 0, 0, 0))
    expected = np.maximum(expected + arrays[2] + arrays[3], 0)
    got = _run_host(sch.mod["main"], arrays, expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def _by_group(groups, in_per_group, per_group, height, width):
    x = te.placeholder((1, groups * in_per_group, height, width), name="x")
    w = te.placeholder((groups, per_group, in_per_group, 1, 1), name="w")
    y = topi.nn.group_conv2d_nchw_by_group(x, w, 1, 0, 1)
    return x, w, y, te.create_prim_func([x, w, y])


def test_groups_join_the_parallel_tiles():
    """ShuffleNet's 28x28 layer of 4 groups of 34 channels (padded to 40): the group is
    one more outer axis, fused into the parallel loop before the pixel tiles, and each
    task packs its own group's input channels."""
    *_, func = _by_group(4, 34, 40, 28, 28)
    text = pixel_lanes(func, AVX512).mod["main"].script()
    assert re.search(rf"for nn_gg_yy_xx_0_fused in T\.parallel\({4 * 784 // 16}\):", text), text
    # each task copies its group's 34 input channels of its 16 pixels
    assert re.search(r"for ax0 in range\(34\):\s*for ax1 in T\.vectorized\(16\):", text), text
    assert re.search(r"v1 = T\.axis\.spatial\(136, nn_gg_yy_xx_0_fused // 49 \* 34 \+ ax0\)",
                     text), text
    assert "x_global[v_nn, v_yy_xx // 16, v_gg * 34 + v_rc_ry_rx, v_yy_xx % 16]" in text, text
    assert pixel_lanes(_by_group(4, 34, 40, 14, 14)[-1], AVX512) is None


@settings(max_examples=8, deadline=None)
@given(groups=st.integers(2, 4), in_per_group=st.integers(2, 9), rows=st.sampled_from([4, 8]),
       pixels=st.sampled_from([(4, 4), (2, 8), (3, 16), (8, 16), (14, 16)]))
def test_groups_match_numpy(groups, in_per_group, rows, pixels):
    x, w, y, func = _by_group(groups, in_per_group, rows, *pixels)
    sch = pixel_lanes(func, AVX512)
    assert sch is not None
    rng = np.random.default_rng(groups * 100 + in_per_group)
    a = rng.standard_normal([int(s) for s in x.shape]).astype("float32")
    k = rng.standard_normal([int(s) for s in w.shape]).astype("float32")
    expected = ref.conv2d_nchw_python(a, k.reshape(groups * rows, in_per_group, 1, 1), 1,
                                      (0, 0, 0, 0), 1, groups)
    got = _run_host(sch.mod["main"], [a, k], [int(s) for s in y.shape])
    np.testing.assert_allclose(got.reshape(expected.shape), expected, rtol=1e-4, atol=1e-4)
