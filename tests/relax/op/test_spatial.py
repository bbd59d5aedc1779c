"""relax.op.nn.pad, nn.conv2d_transpose and nn.lrn: shape rules and numeric results."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import relax
from mlcbench.ir.errors import IRError
from mlcbench.relax import op
from mlcbench.topi import testing as ref


def sinfo_of(expr):
    return relax.BlockBuilder().normalize(expr).struct_info


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_matches_numpy(run_relax, rng, mode):
    a = rng.standard_normal((2, 3, 4)).astype("float32")
    widths = [(0, 1), (2, 1), (1, 3)]
    got = run_relax(lambda x: op.nn.pad(x, widths, 1.5, mode), a)
    kwargs = {"constant_values": 1.5} if mode == "constant" else {}
    np.testing.assert_array_equal(got, np.pad(a, widths, mode=mode, **kwargs))


def test_pad_negative_widths_crop(run_relax, rng):
    a = rng.standard_normal((4, 5)).astype("float32")
    got = run_relax(lambda x: op.nn.pad(x, [-1, 2, 0, -2]), a)
    np.testing.assert_array_equal(got, np.pad(a[1:, :3], [(0, 2), (0, 0)]))


def test_pad_refusals():
    x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    with pytest.raises(IRError, match="for each of the 2 axes"):
        sinfo_of(op.nn.pad(x, [1, 1]))
    with pytest.raises(IRError, match="pad_mode"):
        op.nn.pad(x, [1, 1, 1, 1], pad_mode="wrap")
    with pytest.raises(IRError, match="remove more"):
        sinfo_of(op.nn.pad(x, [-2, -1, 0, 0]))


def conv2d_transpose_python(x, w, stride, pad, output_padding, dilation, groups):
    """Scatter form: every input pixel adds its kernel-weighted patch to the output."""
    n, c, h, wd = x.shape
    _, o_g, kh, kw = w.shape
    full_h = (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1 + output_padding[0]
    full_w = (wd - 1) * stride[1] + dilation[1] * (kw - 1) + 1 + output_padding[1]
    out = np.zeros((n, o_g * groups, full_h, full_w), dtype="float64")
    c_g = c // groups
    for ci in range(c):
        g = ci // c_g
        for ky in range(kh):
            for kx in range(kw):
                ys = ky * dilation[0] + stride[0] * np.arange(h)
                xs = kx * dilation[1] + stride[1] * np.arange(wd)
                out[:, g * o_g:(g + 1) * o_g][:, :, ys[:, None], xs[None, :]] += \
                    x[:, ci, None] * w[ci, :, ky, kx][None, :, None, None]
    top, left, bottom, right = pad
    return out[:, :, top:full_h - bottom, left:full_w - right]


@settings(max_examples=6, deadline=None)
@given(stride=st.integers(1, 3), k=st.integers(1, 3), pad=st.integers(0, 2),
       dilation=st.integers(1, 2), groups=st.sampled_from([1, 2]), out_pad=st.integers(0, 2))
def test_conv2d_transpose_matches_scatter_reference(run_relax, stride, k, pad, dilation,
                                                    groups, out_pad):
    out_pad = min(out_pad, stride - 1)
    rng = np.random.default_rng(stride * 100 + k * 10 + pad)
    x = rng.standard_normal((1, 4, 5, 4)).astype("float32")
    w = rng.standard_normal((4, 3, k, k)).astype("float32")
    expected = conv2d_transpose_python(x, w, (stride, stride), (pad, pad, pad, pad),
                                       (out_pad, out_pad), (dilation, dilation), groups)
    if min(expected.shape[2:]) <= 0:
        with pytest.raises(IRError, match="no output"):
            sinfo_of(op.nn.conv2d_transpose(
                relax.Var("x", relax.TensorStructInfo(x.shape, "float32")),
                relax.Var("w", relax.TensorStructInfo(w.shape, "float32")), stride, pad,
                out_pad, dilation, groups))
        return
    got = run_relax(lambda a, b: op.nn.conv2d_transpose(a, b, stride, pad, out_pad, dilation,
                                                        groups), x, w)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_conv2d_transpose_refuses_channel_mismatch():
    x = relax.Var("x", relax.TensorStructInfo((1, 3, 4, 4), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((4, 2, 3, 3), "float32"))
    with pytest.raises(IRError, match="expects 4 input channels"):
        sinfo_of(op.nn.conv2d_transpose(x, w))


def test_lrn_matches_reference(run_relax, rng):
    a = rng.standard_normal((1, 6, 3, 3)).astype("float32")
    got = run_relax(lambda x: op.nn.lrn(x, 3, alpha=1e-2, beta=0.75, bias=1.0), a)
    np.testing.assert_allclose(got, ref.lrn_python(a, 3, 1, 1e-2, 0.75, 1.0), rtol=1e-5)
