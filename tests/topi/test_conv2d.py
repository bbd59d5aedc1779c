"""Convolutions (NCHW, NHWC, grouped, depthwise) against a direct numpy loop."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import te, topi
from mlcbench.ir.errors import IRError
from mlcbench.topi import testing as ref

CASES = [  # (batch, in_c, size, out_c, kernel, stride, padding, dilation)
    (1, 3, 7, 4, 3, 1, 1, 1),
    (2, 2, 13, 3, 3, 2, 0, 1),
    (1, 4, 9, 2, 1, 1, 0, 1),
    (1, 2, 7, 3, 3, 1, (1, 2, 0, 1), 2),
]


def _pads(padding):
    return topi.nn.get_pad_tuple(padding, (0, 0))


@pytest.mark.parametrize("n, c, size, o, k, stride, padding, dilation", CASES)
def test_conv2d_nchw(n, c, size, o, k, stride, padding, dilation, run_te, rng):
    a = rng.standard_normal((n, c, size, size)).astype("float32")
    w = rng.standard_normal((o, c, k, k)).astype("float32")
    x, kt = te.placeholder(a.shape, name="x"), te.placeholder(w.shape, name="w")
    y = topi.nn.conv2d_nchw(x, kt, stride, padding, dilation)
    expected = ref.conv2d_nchw_python(a, w, stride, _pads(padding), dilation)
    np.testing.assert_allclose(run_te([x, kt], y, [a, w]), expected, rtol=1e-4, atol=1e-4)


def test_conv2d_nhwc_matches_nchw_reference(run_te, rng):
    a = rng.standard_normal((1, 7, 7, 3)).astype("float32")     # NHWC
    w = rng.standard_normal((3, 3, 3, 5)).astype("float32")     # HWIO
    x, kt = te.placeholder(a.shape, name="x"), te.placeholder(w.shape, name="w")
    y = topi.nn.conv2d_nhwc(x, kt, 2, 1, 1)
    assert y.op.name == "conv2d_nhwc"
    expected = ref.conv2d_nchw_python(a.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), 2,
                                      (1, 1, 1, 1)).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(run_te([x, kt], y, [a, w]), expected, rtol=1e-4, atol=1e-4)


def test_group_conv2d(run_te, rng):
    a = rng.standard_normal((1, 4, 7, 7)).astype("float32")
    w = rng.standard_normal((6, 2, 3, 3)).astype("float32")
    x, kt = te.placeholder(a.shape, name="x"), te.placeholder(w.shape, name="w")
    y = topi.nn.conv2d(x, kt, 1, 1, 1, groups=2)
    expected = ref.conv2d_nchw_python(a, w, 1, (1, 1, 1, 1), groups=2)
    np.testing.assert_allclose(run_te([x, kt], y, [a, w]), expected, rtol=1e-4, atol=1e-4)


def test_depthwise_conv2d(run_te, rng):
    a = rng.standard_normal((1, 3, 13, 13)).astype("float32")
    w = rng.standard_normal((3, 2, 3, 3)).astype("float32")
    x, kt = te.placeholder(a.shape, name="x"), te.placeholder(w.shape, name="w")
    y = topi.nn.depthwise_conv2d_nchw(x, kt, 2, 1, 1)
    expected = ref.depthwise_conv2d_nchw_python(a, w, 2, (1, 1, 1, 1))
    np.testing.assert_allclose(run_te([x, kt], y, [a, w]), expected, rtol=1e-4, atol=1e-4)


def test_conv2d_blocks_are_named_like_tvm():
    x = te.placeholder((1, 2, 5, 5), name="x")
    w = te.placeholder((4, 2, 3, 3), name="w")
    text = te.create_prim_func([x, w, topi.nn.conv2d_nchw(x, w, 1, 1, 1)]).script()
    assert 'with T.block("pad_temp"):' in text
    assert 'with T.block("conv2d_nchw"):' in text
    assert "for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 4, 5, 5, 2, 3, 3):" in text
    assert "pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx]" in text


def test_group_conv2d_nhwc_matches_the_nchw_reference(run_te, rng):
    a = rng.standard_normal((1, 7, 7, 4)).astype("float32")     # NHWC
    w = rng.standard_normal((3, 3, 2, 6)).astype("float32")     # HWIO, 2 channels per group
    x, kt = te.placeholder(a.shape, name="x"), te.placeholder(w.shape, name="w")
    y = topi.nn.conv2d(x, kt, 2, 1, 1, groups=2, data_layout="NHWC")
    assert y.op.name == "group_conv2d_nhwc"
    expected = ref.conv2d_nchw_python(a.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), 2,
                                      (1, 1, 1, 1), groups=2).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(run_te([x, kt], y, [a, w]), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("layout, data_shape, kernel_shape, name", [
    ("NCHW", (1, 5, 7, 7), (6, 2, 3, 3), "group_conv2d_nchw"),
    ("NHWC", (1, 7, 7, 5), (3, 3, 2, 6), "group_conv2d_nhwc"),
])
def test_grouped_conv2d_refuses_channels_the_groups_do_not_split(layout, data_shape,
                                                                  kernel_shape, name):
    from mlcbench.ir.errors import IRError
    x, w = te.placeholder(data_shape, name="x"), te.placeholder(kernel_shape, name="w")
    with pytest.raises(IRError, match=f"{name}: data has 5 channels, kernel expects 2 per "
                       "group x 2 groups"):
        topi.nn.conv2d(x, w, 1, 1, 1, groups=2, data_layout=layout)


@settings(max_examples=10, deadline=None)
@given(groups=st.integers(2, 4), in_per_group=st.integers(1, 5), out_per_group=st.integers(1, 5),
       kernel=st.sampled_from([1, 3]), stride=st.integers(1, 2), padding=st.integers(0, 1),
       extra=st.integers(0, 3), data=st.data())
def test_groups_as_an_axis_then_ungrouped_equal_the_grouped_convolution(
        groups, in_per_group, out_per_group, kernel, stride, padding, extra, data, run_te):
    """Each group's weight padded with ``extra`` zero rows, the groups an output axis,
    then ungroup_channels: the grouped convolution, for any group count and shape."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a = rng.standard_normal((1, groups * in_per_group, 6, 6)).astype("float32")
    w = rng.standard_normal((groups * out_per_group, in_per_group, kernel, kernel)
                            ).astype("float32")
    rows = w.reshape(groups, out_per_group, in_per_group, kernel, kernel)
    padded = np.concatenate([rows, np.zeros((groups, extra, *rows.shape[2:]), "float32")], 1)
    x, k = te.placeholder(a.shape, name="x"), te.placeholder(padded.shape, name="k")
    grouped = topi.nn.group_conv2d_nchw_by_group(x, k, stride, padding, 1)
    assert [int(d) for d in grouped.shape[:3]] == [1, groups, out_per_group + extra]
    y = topi.nn.ungroup_channels(grouped, out_per_group)
    expected = ref.conv2d_nchw_python(a, w, stride, (padding,) * 4, 1, groups)
    np.testing.assert_allclose(run_te([x, k], y, [a, padded]), expected, rtol=1e-4, atol=1e-4)


def test_a_group_reads_only_its_channels(run_te):
    """Group 2 of 3 with a kernel that picks its second input channel: the output is
    the input's channel 2 * 2 + 1."""
    a = np.arange(6 * 25, dtype="float32").reshape(1, 6, 5, 5)
    k = np.zeros((3, 1, 2, 1, 1), "float32")
    k[2, 0, 1] = 1
    x, w = te.placeholder(a.shape, name="x"), te.placeholder(k.shape, name="w")
    y = topi.nn.group_conv2d_nchw_by_group(x, w, 1, 0, 1)
    assert y.op.name == "group_conv2d_nchw"
    got = run_te([x, w], y, [a, k])
    np.testing.assert_array_equal(got[0, 2, 0], a[0, 5])
    assert not got[0, :2].any()


@pytest.mark.parametrize("data, kernel, match", [
    ((1, 6, 5, 5), (3, 4, 3, 1, 1), "data has 6 channels, kernel expects 3 per group x 3 groups"),
    ((1, 6, 5, 5), (12, 2, 1, 1), r"kernel \(groups, out, in, kh, kw\) \(5\)")])
def test_grouped_convolution_refusals(data, kernel, match):
    with pytest.raises(IRError, match=match):
        topi.nn.group_conv2d_nchw_by_group(te.placeholder(data, name="x"),
                                           te.placeholder(kernel, name="w"), 1, 0, 1)


def test_ungroup_refuses_a_group_with_too_few_channels():
    grouped = te.placeholder((1, 2, 2, 3, 3), name="g")
    with pytest.raises(IRError, match=r"at least 3 channels per group, found shape "
                                      r"\[1, 2, 2, 3, 3\]"):
        topi.nn.ungroup_channels(grouped, 3)
