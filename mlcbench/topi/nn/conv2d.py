"""2-D convolutions in NCHW and NHWC layouts, grouped and depthwise.

Each pads its input in a ``pad_temp`` stage (skipped when there is no padding), then
reduces over input channels and the kernel window in one block named after the op::

    conv2d_nchw[nn, ff, yy, xx] += pad_temp[nn, rc, yy * sh + ry * dh, xx * sw + rx * dw]
                                    * kernel[ff, rc, ry, rx]
"""
from __future__ import annotations

from typing import NamedTuple

from ...ir.errors import IRError
from ...te import reduce_axis, sum as te_sum
from ...te.operation import compute
from ...te.tensor import Tensor
from ..utils import const_int
from .pad import pad


def _pair(value, what: str) -> tuple:
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise IRError(f"conv2d: {what} is one int or a pair, found {value!r}")
        return tuple(value)
    return (value, value)


def get_pad_tuple(padding, kernel) -> tuple:
    """``(top, left, bottom, right)`` from an int, a pair (h, w), a 4-tuple, or
    ``"SAME"``/``"VALID"`` for a (dilated) kernel of size ``kernel = (kh, kw)``."""
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return (0, 0, 0, 0)
        if padding.upper() == "SAME":
            kh, kw = kernel
            # An even window pads one more after than before, as TensorFlow's SAME does.
            return ((kh - 1) // 2, (kw - 1) // 2, kh // 2, kw // 2)
        raise IRError(f"padding string is 'SAME' or 'VALID', found {padding!r}")
    if isinstance(padding, int):
        return (padding,) * 4
    padding = tuple(padding)
    if len(padding) == 2:
        return (padding[0], padding[1], padding[0], padding[1])
    if len(padding) == 4:
        return padding
    raise IRError(f"padding is an int, a pair or a 4-tuple, found {padding!r}")


def _padded(data: Tensor, top, left, bottom, right, layout: str) -> Tensor:
    if all(const_int(p) == 0 for p in (top, left, bottom, right)):
        return data
    h, w = layout.index("H"), layout.index("W")
    before, after = [0] * 4, [0] * 4
    before[h], before[w], after[h], after[w] = top, left, bottom, right
    return pad(data, before, after, name="pad_temp")


def _out_size(size, k, dilation, stride, pad_lo, pad_hi):
    dilated = (k - 1) * dilation + 1
    out = (size - dilated + pad_lo + pad_hi) // stride + 1
    # A symbolic size cannot be checked here; it fails when the shape is bound.
    if const_int(out) is not None and const_int(out) <= 0:
        raise IRError(f"conv2d: the window ({dilated} after dilation) does not fit the padded "
                      f"input ({size} + {pad_lo} + {pad_hi})")
    return out


class _Window(NamedTuple):
    """The sliding window every layout shares: the padded input, the output size, and
    the input row/column an output position and a kernel tap read."""
    temp: Tensor
    out_h: object
    out_w: object
    stride: tuple
    dilation: tuple

    def row(self, yy, ry):
        return yy * self.stride[0] + ry * self.dilation[0]

    def col(self, xx, rx):
        return xx * self.stride[1] + rx * self.dilation[1]


def _window(data: Tensor, kh, kw, stride, padding, dilation, layout: str) -> _Window:
    (sh, sw), (dh, dw) = _pair(stride, "stride"), _pair(dilation, "dilation")
    in_h, in_w = data.shape[layout.index("H")], data.shape[layout.index("W")]
    # SAME pads for the dilated window's extent, not the kernel's.
    top, left, bottom, right = get_pad_tuple(padding, ((int(kh) - 1) * dh + 1,
                                                       (int(kw) - 1) * dw + 1))
    return _Window(_padded(data, top, left, bottom, right, layout),
                   _out_size(in_h, kh, dh, sh, top, bottom),
                   _out_size(in_w, kw, dw, sw, left, right), (sh, sw), (dh, dw))


def _group_channel(name: str, in_c, group_in_c, out_c, groups: int):
    """``channel(ff, rc)``: the input channel output channel ``ff`` reads at reduction
    step ``rc`` (its group's block of ``group_in_c`` channels when ``groups > 1``)."""
    if const_int(in_c) is not None and const_int(in_c) != const_int(group_in_c) * groups:
        raise IRError(f"{name}: data has {in_c} channels, kernel expects {group_in_c} per "
                      f"group x {groups} groups")
    if groups == 1:
        # Without groups the channel is rc itself, so no floordiv reaches the index analyses.
        return lambda ff, rc: rc
    out_per_group = out_c // groups
    return lambda ff, rc: ff // out_per_group * group_in_c + rc


def group_conv2d_nchw(data: Tensor, kernel: Tensor, stride, padding, dilation, groups: int,
                      out_dtype=None, name: str = "group_conv2d_nchw") -> Tensor:
    """Grouped NCHW convolution; ``kernel`` is (out_channels, in_channels / groups, kh, kw)."""
    out_dtype = out_dtype or data.dtype
    batch, in_c = data.shape[:2]
    out_c, group_in_c, kh, kw = kernel.shape
    channel = _group_channel(name, in_c, group_in_c, out_c, groups)
    win = _window(data, kh, kw, stride, padding, dilation, "NCHW")
    rc = reduce_axis((0, group_in_c), name="rc")
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    return compute((batch, out_c, win.out_h, win.out_w), lambda nn, ff, yy, xx: te_sum(
        win.temp[nn, channel(ff, rc), win.row(yy, ry), win.col(xx, rx)].astype(out_dtype)
        * kernel[ff, rc, ry, rx].astype(out_dtype), axis=[rc, ry, rx]), name=name, tag=name)


def group_conv2d_nchw_by_group(data: Tensor, kernel: Tensor, stride, padding, dilation,
                               out_dtype=None) -> Tensor:
    """A grouped NCHW convolution with the group as an output axis: ``kernel`` is
    (groups, out_channels / groups, in_channels / groups, kh, kw) and the output
    (batch, groups, out_channels / groups, out_h, out_w)::

        group_conv2d_nchw[nn, gg, ff, yy, xx] +=
            pad_temp[nn, gg * in_channels / groups + rc, yy + ry, xx + rx]
            * kernel[gg, ff, rc, ry, rx]

    Within a group the output channel does not choose the input channel, so the
    schedules keep whole vectors of one group's channels (in ``group_conv2d_nchw`` a
    vector may straddle two groups), and all groups run in one kernel. A group's kernel
    may hold zero rows past its real channels (a multiple of a vector), which
    :func:`ungroup_channels` skips."""
    out_dtype = out_dtype or data.dtype
    if data.ndim != 4 or kernel.ndim != 5:
        raise IRError(f"group_conv2d_nchw_by_group: data is NCHW (4 dimensions) and kernel "
                      f"(groups, out, in, kh, kw) (5), found {list(data.shape)} and "
                      f"{list(kernel.shape)}")
    batch, in_c = data.shape[:2]
    groups, per_group, group_in_c, kh, kw = kernel.shape
    _group_channel("group_conv2d_nchw_by_group", in_c, group_in_c, per_group * groups,
                   const_int(groups))
    win = _window(data, kh, kw, stride, padding, dilation, "NCHW")
    rc = reduce_axis((0, group_in_c), name="rc")
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    return compute((batch, groups, per_group, win.out_h, win.out_w),
                   lambda nn, gg, ff, yy, xx: te_sum(
                       win.temp[nn, gg * group_in_c + rc, win.row(yy, ry), win.col(xx, rx)]
                       .astype(out_dtype) * kernel[gg, ff, rc, ry, rx].astype(out_dtype),
                       axis=[rc, ry, rx]),
                   name="group_conv2d_nchw", tag="group_conv2d_nchw")


def ungroup_channels(grouped: Tensor, per_group: int) -> Tensor:
    """The first ``per_group`` channels of each group of ``grouped`` (batch, groups,
    channels, h, w), as NCHW channels (the output of
    :func:`group_conv2d_nchw_by_group`, whose groups may hold zero-padded channels)::

        out[n, c, y, x] = grouped[n, c // per_group, c % per_group, y, x]
    """
    if grouped.ndim != 5 or const_int(grouped.shape[2]) < per_group:
        raise IRError(f"ungroup_channels: expected (batch, groups, channels, h, w) with at "
                      f"least {per_group} channels per group, found shape "
                      f"{list(grouped.shape)}")
    batch, groups, _, height, width = grouped.shape
    return compute((batch, const_int(groups) * per_group, height, width),
                   lambda nn, cc, yy, xx: grouped[nn, cc // per_group, cc % per_group, yy, xx],
                   name="T_ungroup", tag="injective")


def conv2d_nchw(data: Tensor, kernel: Tensor, stride, padding, dilation,
                out_dtype=None) -> Tensor:
    """NCHW convolution with an OIHW ``kernel`` (block ``conv2d_nchw``)."""
    return group_conv2d_nchw(data, kernel, stride, padding, dilation, 1, out_dtype,
                             name="conv2d_nchw")


def depthwise_conv2d_nchw(data: Tensor, kernel: Tensor, stride, padding, dilation,
                          out_dtype=None) -> Tensor:
    """Depthwise convolution; ``kernel`` is (channels, multiplier, kh, kw) as in TVM."""
    out_dtype = out_dtype or data.dtype
    batch, in_c = data.shape[:2]
    _, multiplier, kh, kw = kernel.shape
    win = _window(data, kh, kw, stride, padding, dilation, "NCHW")
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    return compute((batch, in_c * multiplier, win.out_h, win.out_w), lambda b, c, i, j: te_sum(
        win.temp[b, c // multiplier, win.row(i, ry), win.col(j, rx)].astype(out_dtype)
        * kernel[c // multiplier, c % multiplier, ry, rx].astype(out_dtype), axis=[ry, rx]),
        name="DepthwiseConv2d", tag="depthwise_conv2d_nchw")


def conv2d_nhwc(data: Tensor, kernel: Tensor, stride, padding, dilation, out_dtype=None,
                groups: int = 1) -> Tensor:
    """NHWC convolution with an HWIO ``kernel`` (block ``conv2d_nhwc``)."""
    out_dtype = out_dtype or data.dtype
    name = "conv2d_nhwc" if groups == 1 else "group_conv2d_nhwc"
    batch, in_c = data.shape[0], data.shape[3]
    kh, kw, group_in_c, out_c = kernel.shape
    channel = _group_channel(name, in_c, group_in_c, out_c, groups)
    win = _window(data, kh, kw, stride, padding, dilation, "NHWC")
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    rc = reduce_axis((0, group_in_c), name="rc")
    return compute((batch, win.out_h, win.out_w, out_c), lambda nn, yy, xx, ff: te_sum(
        win.temp[nn, win.row(yy, ry), win.col(xx, rx), channel(ff, rc)].astype(out_dtype)
        * kernel[ry, rx, rc, ff].astype(out_dtype), axis=[ry, rx, rc]),
        name=name, tag="conv2d_nhwc")


def conv2d(data: Tensor, kernel: Tensor, strides, padding, dilation, groups: int = 1,
           data_layout: str = "NCHW", kernel_layout: str = "", out_dtype=None) -> Tensor:
    """Dispatch on layout and groups: NCHW/OIHW or NHWC/HWIO, grouped when ``groups > 1``."""
    if data_layout == "NCHW":
        if groups == 1:
            return conv2d_nchw(data, kernel, strides, padding, dilation, out_dtype)
        return group_conv2d_nchw(data, kernel, strides, padding, dilation, groups, out_dtype)
    if data_layout == "NHWC":
        return conv2d_nhwc(data, kernel, strides, padding, dilation, out_dtype, groups)
    raise IRError(f"conv2d: data layout is 'NCHW' or 'NHWC', found {data_layout!r}")
