"""Transposed 2-D convolution (the gradient of conv2d with respect to its input), NCHW data
and IOHW weights as in PyTorch and ONNX.

It is a convolution of the stride-dilated, re-padded input with the flipped kernel. The
dilation and padding are one ``data_pad`` stage whose element ``(i, j)`` reads
``data[(i - top) / sh, (j - left) / sw]`` where that division is exact and in range::

    out[n, o, y, x] = sum_{c, ky, kx} data_pad[n, c, y + ky * dh, x + kx * dw]
                      * kernel[c, o, kh - 1 - ky, kw - 1 - kx]
"""
from __future__ import annotations

from ...ir.errors import IRError
from ...te import reduce_axis, sum as te_sum
from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir import op as tir_op
from ...tir.expr import const
from ..utils import const_int
from .conv2d import _pair


def conv2d_transpose_out_size(size: int, k: int, stride: int, dilation: int, pad_lo: int,
                              pad_hi: int, output_padding: int) -> int:
    return (size - 1) * stride - pad_lo - pad_hi + dilation * (k - 1) + output_padding + 1


def _dilated_padded(data: Tensor, strides, lead, shape) -> Tensor:
    """``data`` spread ``strides`` apart, shifted by ``lead`` (negative crops), zero-filled."""
    n, c, h, w = data.shape

    def fetch(b, ch, i, j):
        conditions, source = [], []
        for idx, lo, stride, extent in ((i, lead[0], strides[0], h), (j, lead[1], strides[1], w)):
            shifted = idx - lo
            # The stride-dilated input spans (extent - 1) * stride + 1 positions.
            conditions += [shifted >= 0, shifted < (extent - 1) * stride + 1]
            if stride != 1:
                conditions.append(tir_op.floormod(shifted, stride) == 0)
                shifted = tir_op.floordiv(shifted, stride)
            source.append(shifted)
        return tir_op.if_then_else(tir_op.all(*conditions), data[b, ch, source[0], source[1]],
                                   const(0, data.dtype))
    return compute(shape, fetch, name="data_pad", tag="injective")


def conv2d_transpose_nchw(data: Tensor, kernel: Tensor, strides, padding, out_dtype=None,
                          output_padding=(0, 0), dilation=(1, 1), groups: int = 1) -> Tensor:
    """``data`` (N, C, H, W), ``kernel`` (C, O / groups, kh, kw); ``padding`` is
    (top, left, bottom, right) and ``output_padding`` adds rows/columns at the end."""
    out_dtype = out_dtype or data.dtype
    (sh, sw), (dh, dw) = _pair(strides, "strides"), _pair(dilation, "dilation")
    (oph, opw) = _pair(output_padding, "output_padding")
    top, left, bottom, right = padding
    batch, in_c, in_h, in_w = (const_int(s) for s in data.shape)
    w_in, o_per_group, kh, kw = (const_int(s) for s in kernel.shape)
    if None in (batch, in_c, in_h, in_w, w_in, o_per_group, kh, kw):
        raise IRError("conv2d_transpose: data and kernel need constant shapes")
    if w_in != in_c or in_c % groups:
        raise IRError(f"conv2d_transpose: kernel {tuple(kernel.shape)} expects {w_in} input "
                      f"channels (divisible by groups={groups}), data has {in_c}")
    out_h = conv2d_transpose_out_size(in_h, kh, sh, dh, top, bottom, oph)
    out_w = conv2d_transpose_out_size(in_w, kw, sw, dw, left, right, opw)
    # A full convolution pads by the dilated kernel's extent less one; the given padding crops it.
    lead = (dh * (kh - 1) - top, dw * (kw - 1) - left)
    padded = _dilated_padded(data, (sh, sw), lead,
                             (batch, in_c, out_h + dh * (kh - 1), out_w + dw * (kw - 1)))
    c_per_group = in_c // groups
    rc = reduce_axis((0, c_per_group), name="rc")
    ry, rx = reduce_axis((0, kh), name="ry"), reduce_axis((0, kw), name="rx")

    def fcompute(n, o, y, x):
        channel = o // o_per_group * c_per_group + rc
        value = padded[n, channel, y + ry * dh, x + rx * dw] * \
            kernel[channel, o % o_per_group, kh - 1 - ry, kw - 1 - rx]
        return te_sum(value.astype(out_dtype) if out_dtype != data.dtype else value,
                      axis=[rc, ry, rx])
    return compute((batch, o_per_group * groups, out_h, out_w), fcompute,
                   name="conv2d_transpose_nchw", tag="conv2d_transpose_nchw")
