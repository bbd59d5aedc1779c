"""The Conv2D rule: direct NCHW / NHWC convolutions get the register-blocked kernel."""
import re

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import mlcbench
from mlcbench import te, topi
from mlcbench.dlight.cpu import Conv2D
from mlcbench.dlight.cpu import tiling
from mlcbench.dlight.cpu.tiling import choose_conv_tile
from mlcbench.topi import testing as ref

from mlcbench.target import Target

TARGET = Target("llvm")


def _func(*tensors):
    return te.create_prim_func(list(tensors))


def test_applies_to_nchw_and_nhwc():
    x, w = te.placeholder((1, 3, 9, 9)), te.placeholder((4, 3, 3, 3))
    assert Conv2D().apply(_func(x, w, topi.nn.conv2d_nchw(x, w, 1, 1, 1)), TARGET) is not None
    xh, wh = te.placeholder((1, 9, 9, 3)), te.placeholder((3, 3, 3, 4))
    assert Conv2D().apply(_func(xh, wh, topi.nn.conv2d_nhwc(xh, wh, 1, 1, 1)),
                          TARGET) is not None


def test_does_not_apply_to_dense_or_pool():
    x, w = te.placeholder((4, 8)), te.placeholder((5, 8))
    assert Conv2D().apply(_func(x, w, topi.nn.dense(x, w)), TARGET) is None
    img = te.placeholder((1, 2, 7, 7))
    pool = topi.nn.pool2d(img, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), "max")
    assert Conv2D().apply(_func(img, pool), TARGET) is None


@pytest.mark.parametrize("c_in, c_out, size, kernel, stride, pad", [
    (3, 7, 13, 3, 1, 1), (5, 16, 7, 1, 1, 0), (4, 13, 11, 3, 2, 1),
    # tiles that divide the row: 7 x 8 at 14 and 7 (7 x 16 for 1x1), 13 x 8 (1x1) at 13,
    # 5 x 16 at 55; on AVX-512 a partial 8 x 32 tile at 111 (SqueezeNet's stem) and 11 x 16 at 33
    (6, 32, 14, 3, 1, 1), (4, 32, 7, 3, 1, 1), (8, 32, 14, 1, 1, 0), (9, 24, 13, 1, 1, 0),
    (3, 16, 55, 3, 1, 1), (3, 64, 224, 3, 2, 0), (5, 32, 33, 3, 1, 1)])
def test_nchw_with_bias_relu_matches_numpy(c_in, c_out, size, kernel, stride, pad,
                                           run_te, rng, rule_for):
    a = rng.standard_normal((1, c_in, size, size)).astype("float32")
    wt = rng.standard_normal((c_out, c_in, kernel, kernel)).astype("float32")
    bias = rng.standard_normal((c_out, 1, 1)).astype("float32")
    x, w, b = (te.placeholder(v.shape, name=n) for v, n in [(a, "x"), (wt, "w"), (bias, "b")])
    y = topi.nn.relu(topi.add(topi.nn.conv2d_nchw(x, w, stride, pad, 1), b))
    assert rule_for([x, w, b], y) == "Conv2D"
    expected = np.maximum(ref.conv2d_nchw_python(a, wt, stride, (pad,) * 4) + bias, 0)
    np.testing.assert_allclose(run_te([x, w, b], y, [a, wt, bias]), expected,
                               rtol=1e-4, atol=1e-4)


def test_nhwc_matches_numpy(run_te, rng):
    a = rng.standard_normal((1, 7, 7, 5)).astype("float32")
    wt = rng.standard_normal((3, 3, 5, 13)).astype("float32")
    x, w = te.placeholder(a.shape, name="x"), te.placeholder(wt.shape, name="w")
    got = run_te([x, w], topi.nn.conv2d_nhwc(x, w, 1, 1, 1), [a, wt])
    expected = ref.conv2d_nchw_python(a.transpose(0, 3, 1, 2), wt.transpose(3, 2, 0, 1), 1,
                                      (1, 1, 1, 1)).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def _lowered_conv(default_schedule, c_in, c_out, size, kernel, target=TARGET):
    x = te.placeholder((1, c_in, size, size), name="x")
    w = te.placeholder((c_out, c_in, kernel, kernel), name="w")
    func = default_schedule(_func(x, w, topi.nn.conv2d_nchw(x, w, 1, kernel // 2, 1)), target)
    return func, mlcbench.lower(func).script()


def _tile_shape(target) -> tuple:
    """``(rows, cols)`` of the register tile: accumulators fill half the vector registers,
    two vectors per row (4 x 16 with AVX2, 8 x 32 with AVX-512)."""
    return target.vector_registers // 4, 2 * target.vector_lanes(32)


@pytest.mark.parametrize("kernel", [1, 3])
def test_accumulator_shrinks_to_the_register_tile(default_schedule, kernel):
    """The fused tile loop and the writeback spell the output-channel index differently
    (``f % n // m`` and ``f // m``); the accumulator must still shrink to one tile,
    else every multiply-add goes through a buffer the size of the output."""
    _, text = _lowered_conv(default_schedule, 16, 32, 14, kernel)
    sizes = [int(s) for s in re.findall(r'T.allocate\(\[(\d+)\], "float32", "local"\)', text)]
    assert sizes and max(sizes) <= 16 * TARGET.vector_registers


def test_rows_are_parallel_and_channel_tiles_outside_width_tiles(default_schedule,
                                                                 named_target):
    """Each thread takes whole output rows; inside a row the channel tile is outer and
    the width tiles inner, so the row's input and one weight panel stay in L1. (A 3x3
    kernel: 1x1 ones at 56x56 put pixels in the lanes on 16-lane targets, see
    test_pointwise.py.)"""
    rows, cols = _tile_shape(named_target)
    func, _ = _lowered_conv(default_schedule, 64, 64, 56, 3, named_target)
    nest = (rf"for nn_yy_fused in T\.parallel\(56\):\s*"
            rf"for ff_0, xx_0 in T\.grid\({64 // cols}, {56 // rows}\):")
    assert re.search(nest, func.script()), func.script()


def test_short_output_spreads_channel_tiles_over_threads(default_schedule, named_target):
    """An output of 7 rows also spreads its channel tiles over the threads; one tile
    covers the row of this 1x1 kernel (7 x 16 with AVX2, 7 x 32 with AVX-512)."""
    func, _ = _lowered_conv(default_schedule, 64, 512, 7, 1, named_target)
    rows, cols = _register_tile(func)
    assert (rows, cols) == (7, 16 if named_target.vector_registers == 16 else 32)
    nest = rf"for nn_yy_ff_0_fused in T\.parallel\({7 * 512 // cols}\):"
    assert re.search(nest, func.script()), func.script()


def test_transposed_writeback_is_unrolled(default_schedule, named_target):
    """NCHW stores channel vectors along width: with constant accumulator offsets the
    transpose becomes shuffles, not a spill and computed-index loads."""
    func, _ = _lowered_conv(default_schedule, 16, 32, 14, 1, named_target)
    _, cols = _register_tile(func)
    assert re.search(rf'for ax0 in T.unroll\({cols}\):\s*for ax1 in T.vectorized\(\d+\):\s*'
                     r'with T.block\("conv2d_nchw_local"\)', func.script()), func.script()


def _conv_nchw(c_in, c_out, size, kernel, stride=1, pad=None, dilation=1, groups=1):
    x = te.placeholder((1, c_in, size, size), name="x")
    w = te.placeholder((c_out, c_in // groups, kernel, kernel), name="w")
    pad = kernel // 2 if pad is None else pad
    if groups == 1:
        return x, w, topi.nn.conv2d_nchw(x, w, stride, pad, dilation)
    return x, w, topi.nn.group_conv2d_nchw(x, w, stride, pad, dilation, groups)


def _register_tile(func) -> tuple:
    """``(rows, cols)``: the unrolled and vectorized loops around the update block."""
    found = re.search(r"T\.unroll\((\d+)\):\s*for \w+ in T\.vectorized\((\d+)\):\s*"
                      r'with T\.block\("\w+_update"\)', func.script())
    assert found, func.script()
    return int(found.group(1)), int(found.group(2))


@pytest.mark.parametrize("mcpu, tile", [("znver3", (4, 16)), ("znver4", (8, 32))])
def test_register_tile_follows_the_target(mcpu, tile):
    """Accumulators fill half the vector registers: 4 x 16 (8 ymm of 16) with AVX2,
    8 x 32 (16 zmm of 32) with AVX-512; the schedule is made without running it."""
    target = Target(f"llvm -mcpu={mcpu}")
    x, w, y = _conv_nchw(64, 64, 56, 3)
    sch = Conv2D().apply(_func(x, w, y), target)
    rows, cols = _register_tile(sch.mod["main"])
    assert (rows, cols) == tile
    assert rows * cols // target.vector_lanes(32) == target.vector_registers // 2


@pytest.mark.parametrize("mcpu, extent, pointwise, tile", [
    ("znver3", 56, False, (4, 16)), ("znver3", 55, False, (5, 16)),
    ("znver3", 27, False, (3, 16)), ("znver3", 14, False, (7, 8)),
    ("znver3", 7, False, (7, 8)), ("znver3", 7, True, (7, 16)),
    ("znver3", 14, True, (7, 16)), ("znver3", 56, True, (4, 16)),
    ("znver3", 13, False, (4, 16)),
    ("znver3", 13, True, (13, 8)), ("znver3", 2, False, (2, 16)),
    ("znver4", 56, False, (8, 32)), ("znver4", 14, False, (7, 32)),
    ("znver4", 13, False, (13, 16)), ("znver4", 55, False, (5, 32)),
    ("znver3", 111, False, (3, 16)), ("znver4", 111, False, (8, 32)),
    ("znver4", 111, True, (8, 32)), ("znver4", 33, False, (11, 16)),
    ("znver4", 27, False, (9, 32))])
def test_conv_tile_divides_the_output_row(mcpu, extent, pointwise, tile):
    """Rows divide the output row where they can (a partial tile tests its bound on every
    multiply-add): two vectors of channels with 3 or more rows, 4 or more on AVX-512
    (up to 14 accumulators for a 1x1 kernel on AVX2), else one vector with up to half
    the registers of rows (all but three for a 1x1 kernel), else a partial tile. On
    AVX-512 the 111-pixel rows of SqueezeNet's stem (3 x 37) get 8 x 32 with a partial
    tile, not 3 x 32 (6 accumulators)."""
    target = Target(f"llvm -mcpu={mcpu}")
    lanes = target.vector_lanes(32)
    assert choose_conv_tile(extent, 2 * lanes, lanes, target.vector_registers,
                            pointwise) == tile


def test_conv_tile_keeps_a_vector_axis_shorter_than_two_vectors_whole():
    """A depthwise layer's vector axis is its output width: 14 lanes stay one tile
    (2 x 14), not 7 x 8 with a partial second vector."""
    assert choose_conv_tile(14, 14, 8, 16) == (2, 14)


@pytest.mark.parametrize("kernel, tile", [(1, (13, 8)), (3, (4, 16))])
def test_rule_uses_the_dividing_tile(kernel, tile):
    """Through the rule, for an AVX2 target: a 13-pixel row gets 13 x 8 for a 1x1 kernel,
    4 x 16 with a partial tile for a 3x3 one."""
    x, w, y = _conv_nchw(16, 64, 13, kernel)
    sch = Conv2D().apply(_func(x, w, y), Target("llvm -mcpu=znver3"))
    assert _register_tile(sch.mod["main"]) == tile

def test_resnet_layer_is_parallel_with_channels_in_vectors(default_schedule):
    """ResNet-50's 3x3 layer: one parallel loop over the output tiles, output channels
    in the vector lanes (weights packed into panels of the vector tile's width), and
    the padding and the packing loops vectorized too."""
    x, w, y = _conv_nchw(64, 64, 56, 3)
    text = default_schedule(_func(x, w, y)).script()
    lanes = TARGET.vector_lanes(32)
    assert len(re.findall(r"T\.parallel\(", text)) >= 1
    assert re.search(rf"w_global = T\.alloc_buffer\(\(\d+, 64, 3, 3, {2 * lanes}\)\)", text)
    for block in ("pad_temp", "w_global", "conv2d_nchw_init", "conv2d_nchw_update"):
        assert re.search(rf'T\.vectorized\(\d+\):\s*with T\.block\("{block}"\)', text), block


@settings(max_examples=12, deadline=None)
@given(c_in=st.integers(1, 9), c_out=st.integers(1, 20), size=st.integers(5, 15),
       kernel=st.sampled_from([1, 3, 5]), stride=st.integers(1, 2), pad=st.integers(0, 2),
       dilation=st.integers(1, 2), groups=st.sampled_from([1, 2]), relu=st.booleans())
def test_nchw_matches_numpy_for_any_shape(c_in, c_out, size, kernel, stride, pad, dilation,
                                         groups, relu, run_te):
    c_in, c_out = c_in * groups, c_out * groups
    assume((kernel - 1) * dilation + 1 <= size + 2 * pad)
    rng = np.random.default_rng(c_in * 97 + c_out * 13 + size)
    a = rng.standard_normal((1, c_in, size, size)).astype("float32")
    wt = rng.standard_normal((c_out, c_in // groups, kernel, kernel)).astype("float32")
    x, w, y = _conv_nchw(c_in, c_out, size, kernel, stride, pad, dilation, groups)
    y = topi.nn.relu(y) if relu else y
    expected = ref.conv2d_nchw_python(a, wt, stride, (pad,) * 4, dilation, groups)
    np.testing.assert_allclose(run_te([x, w], y, [a, wt]),
                               np.maximum(expected, 0) if relu else expected,
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("size, c_in, c_out, kernel, stride", [
    (13, 3, 7, 3, 2), (7, 16, 40, 1, 1), (9, 5, 32, 5, 1)])
def test_nhwc_odd_shapes_match_numpy(size, c_in, c_out, kernel, stride, run_te, rng):
    a = rng.standard_normal((1, size, size, c_in)).astype("float32")
    wt = rng.standard_normal((kernel, kernel, c_in, c_out)).astype("float32")
    x, w = te.placeholder(a.shape, name="x"), te.placeholder(wt.shape, name="w")
    pad = kernel // 2
    got = run_te([x, w], topi.nn.conv2d_nhwc(x, w, stride, pad, 1), [a, wt])
    expected = ref.conv2d_nchw_python(a.transpose(0, 3, 1, 2), wt.transpose(3, 2, 0, 1),
                                      stride, (pad,) * 4).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("c_out, size, kernel", [(64, 56, 3), (256, 56, 1), (512, 7, 1)])
def test_trace_replays_from_the_unscheduled_function(c_out, size, kernel):
    """Tuning starts from the rule's schedule as a trace: every step is a primitive.
    (An AVX2 target: there the 1x1 layer at 56x56 keeps the register tile.)"""
    from mlcbench.ir import structural_hash
    from mlcbench.meta_schedule.default_schedule import default_schedule
    from mlcbench.tir import Schedule
    x, w, y = _conv_nchw(64, c_out, size, kernel)
    mod = mlcbench.IRModule({"main": _func(x, w, y)})
    sch = default_schedule(mod, Target("llvm -mcpu=znver3 --num-cores=2"))
    assert sch is not None
    assert "w_global" in sch.mod["main"].script() and "T.parallel" in sch.mod["main"].script()
    replayed = sch.trace.apply_to_schedule(Schedule(mod), remove_postproc=False)
    assert structural_hash(replayed.mod) == structural_hash(sch.mod)


@pytest.mark.parametrize("kernel, kept", [(1, []), (3, ["pad_temp"])])
def test_a_window_is_kept_only_where_it_pads(default_schedule, kernel, kept):
    """A convolution by group reads its group's channels at an offset: a padding stage
    stays, so the kernel tests no bounds per tap; without padding it reads the input."""
    x = te.placeholder((1, 16, 14, 14), name="x")
    w = te.placeholder((4, 8, 4, kernel, kernel), name="w")
    y = topi.nn.group_conv2d_nchw_by_group(x, w, 1, kernel // 2, 1)
    text = default_schedule(_func(x, w, y)).script()
    allocated = re.findall(r"(\w+) = T\.alloc_buffer", text)
    assert [b for b in allocated if b == "pad_temp"] == kept, text
    reads_at_offset = re.search(r"x\[v_\w+, v_gg \* 4 \+ v_rc,", text) is not None
    assert reads_at_offset == (not kept), text


def test_convolution_by_group_matches_numpy(run_te, rng):
    a = rng.standard_normal((1, 12, 9, 9)).astype("float32")
    wt = rng.standard_normal((12, 4, 3, 3)).astype("float32")
    x, w = te.placeholder(a.shape, name="x"), te.placeholder((3, 4, 4, 3, 3), name="w")
    y = topi.nn.group_conv2d_nchw_by_group(x, w, 1, 1, 1)
    expected = ref.conv2d_nchw_python(a, wt, 1, (1,) * 4, 1, 3)
    got = run_te([x, w], y, [a, wt.reshape(3, 4, 4, 3, 3)])
    np.testing.assert_allclose(got.reshape(expected.shape), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("channels, size, parallel", [(8, 14, False), (256, 56, True)])
def test_depthwise_at_stride_two_is_left_as_plain_loops_on_avx2(channels, size, parallel,
                                                                default_schedule):
    """Its only vector axis is the output width, read at stride 2: on 8 lanes the padding
    is inlined and the loops left to LLVM, rows in parallel when large."""
    x, w, y = _conv_nchw(channels, channels, size, 3, stride=2, groups=channels)
    text = default_schedule(_func(x, w, y), Target("llvm -mcpu=znver3")).script()
    assert "T.vectorized" not in text and "pad_temp" not in text, text
    assert ("T.parallel" in text) == parallel, text


def test_depthwise_at_stride_two_keeps_the_register_tile_on_avx512(default_schedule):
    """With 16 lanes the strided rows load as contiguous vectors and shuffles, and the
    tile ran ShuffleNet's stride-2 layers 1.2-4x faster than plain loops (Zen 4)."""
    x, w, y = _conv_nchw(136, 136, 28, 3, stride=2, groups=136)
    text = default_schedule(_func(x, w, y), Target("llvm -mcpu=znver4")).script()
    assert "pad_temp" in text, text
    assert re.search(r'T\.unroll\(14\):\s*for \w+ in T\.vectorized\(14\):\s*'
                     r'with T\.block\("\w+_update"\)', text), text
    assert re.search(r"\w+ \* 2 \+ v_rx\]", text), text


def test_depthwise_at_stride_one_keeps_the_register_tile(default_schedule, named_target):
    x, w, y = _conv_nchw(16, 16, 14, 3, groups=16)
    text = default_schedule(_func(x, w, y), named_target).script()
    assert re.search(r'T\.vectorized\(\d+\):\s*with T\.block\("\w+_update"\)', text), text


def test_depthwise_pads_each_channel_in_its_task(default_schedule, named_target):
    """Each task of a depthwise convolution pads its own channel's plane, into a buffer of
    one plane (on the stack) that its taps then read: no pass over the whole input."""
    x, w, y = _conv_nchw(272, 272, 14, 3, groups=272)
    func = default_schedule(_func(x, w, y), named_target)
    text = func.script()
    assert re.search(r'for nn_ff_fused in T\.parallel\(272\):\s*'
                     r'for ax0, ax1_0 in T\.grid\(16, 1\):\s*for ax1_1 in T\.vectorized\(16\):'
                     r'\s*with T\.block\("pad_temp"\)', text), text
    assert not re.search(r"\n    for ", text[text.index("pad_temp\")"):text.index('_init")')])
    lowered = mlcbench.lower(func).script()
    assert re.search(r'for nn_ff_fused in T\.parallel\(272\):\s*'
                     r'pad_temp = T\.allocate\(\[256\], "float32"', lowered), lowered


@pytest.mark.parametrize("c_in, c_out, groups", [(64, 64, 1), (16, 32, 16)])
def test_a_padding_tasks_would_share_stays_a_pass(default_schedule, named_target, c_in, c_out,
                                                  groups):
    """A dense 3x3 convolution's rows each read three padded rows, and with a channel
    multiplier of 2 two output channels read one plane: padded in the tasks, planes would
    be padded more than once, so the padding stays a pass of its own before them."""
    x, w, y = _conv_nchw(c_in, c_out, 28, 3, groups=groups)
    text = default_schedule(_func(x, w, y), named_target).script()
    pad, conv = text.index('T.block("pad_temp")'), text.index('_init")')
    assert pad < conv, text
    # A loop nest of its own: a new loop opens at the root between the two blocks.
    assert re.search(r"\n    for ", text[pad:conv]), text


@pytest.mark.parametrize("stride", [1, 2])
def test_depthwise_with_a_channel_multiplier_matches_numpy(stride, run_te, rng):
    a = rng.standard_normal((1, 6, 13, 13)).astype("float32")
    wt = rng.standard_normal((12, 1, 3, 3)).astype("float32")
    x, w, y = _conv_nchw(6, 12, 13, 3, stride, groups=6)
    expected = ref.conv2d_nchw_python(a, wt, stride, (1,) * 4, 1, 6)
    np.testing.assert_allclose(run_te([x, w], y, [a, wt]), expected, rtol=1e-4, atol=1e-4)


@settings(max_examples=10, deadline=None)
@given(channels=st.integers(1, 12), size=st.integers(3, 16), kernel=st.sampled_from([1, 3, 5]),
       stride=st.integers(1, 3), pad=st.integers(0, 2))
def test_depthwise_matches_numpy_for_any_stride(channels, size, kernel, stride, pad, run_te):
    assume(kernel <= size + 2 * pad)
    rng = np.random.default_rng(channels * 31 + size * 7 + stride)
    a = rng.standard_normal((1, channels, size, size)).astype("float32")
    wt = rng.standard_normal((channels, 1, kernel, kernel)).astype("float32")
    x, w, y = _conv_nchw(channels, channels, size, kernel, stride, pad, groups=channels)
    expected = ref.conv2d_nchw_python(a, wt, stride, (pad,) * 4, 1, channels)
    np.testing.assert_allclose(run_te([x, w], y, [a, wt]), expected, rtol=1e-4, atol=1e-4)


def test_weights_beyond_l2_put_channel_tiles_outside_the_rows(default_schedule, named_target):
    """ResNet's 3x3 512->512 layer at 7x7: 9.4 MB of weights, far beyond
    ``PANEL_GROUP_BYTES``, so the channel tiles go outermost (groups of panels that fit,
    here one panel each) and every output row reuses the panel from L2, instead of each
    row streaming all the weights (2 Zen 1 cores: 33 -> 45 GFLOPS, panel_groups.py)."""
    func, _ = _lowered_conv(default_schedule, 512, 512, 7, 3, named_target)
    rows, cols = _register_tile(func)
    panel = 512 * 9 * cols * 4
    assert panel > tiling.PANEL_GROUP_BYTES // 2      # no two panels fit: groups of one
    nest = (rf"for ff_0 in T\.parallel\({512 // cols}\):\s*"
            rf"for nn, yy, xx_0 in T\.grid\(1, 7, {-(-7 // rows)}\):")
    assert re.search(nest, func.script()), func.script()


@settings(max_examples=10, deadline=None)
@given(c_in=st.integers(1, 12), c_out=st.integers(1, 40), size=st.integers(3, 12),
       kernel=st.sampled_from([1, 3]), stride=st.integers(1, 2),
       budget=st.sampled_from([256, 2 << 10, 8 << 10]), groups=st.sampled_from([1, 2]))
def test_grouped_channel_tiles_match_numpy(c_in, c_out, size, kernel, stride, budget, groups,
                                           run_te):
    """Small budgets put any convolution's channel tiles into groups (of one or more
    panels) outside the output rows."""
    c_in, c_out = c_in * groups, c_out * groups
    rng = np.random.default_rng(c_in * 97 + c_out * 13 + size * 5 + budget)
    a = rng.standard_normal((1, c_in, size, size)).astype("float32")
    wt = rng.standard_normal((c_out, c_in // groups, kernel, kernel)).astype("float32")
    x, w, y = _conv_nchw(c_in, c_out, size, kernel, stride, groups=groups)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tiling, "PANEL_GROUP_BYTES", budget)
        got = run_te([x, w], topi.nn.relu(y), [a, wt])
    expected = ref.conv2d_nchw_python(a, wt, stride, (kernel // 2,) * 4, 1, groups)
    np.testing.assert_allclose(got, np.maximum(expected, 0), rtol=1e-4, atol=1e-4)
