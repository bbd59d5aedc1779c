"""numpy references for the operators, used by the tests (and handy in notebooks)."""
from __future__ import annotations

import math

import numpy as np


def pad_python(x, before, after, value=0.0):
    return np.pad(x, list(zip(before, after)), constant_values=value)


def conv2d_nchw_python(data, kernel, stride, padding, dilation=1, groups=1):
    """Direct convolution; ``padding`` is (top, left, bottom, right)."""
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    top, left, bottom, right = padding
    x = pad_python(data, (0, 0, top, left), (0, 0, bottom, right))
    n, c, h, w = x.shape
    o, cg, kh, kw = kernel.shape
    out_h = (h - (kh - 1) * dh - 1) // sh + 1
    out_w = (w - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, o, out_h, out_w), dtype=np.result_type(data, kernel))
    per_group = o // groups
    for f in range(o):
        g = f // per_group
        for ky in range(kh):
            for kx in range(kw):
                patch = x[:, g * cg:(g + 1) * cg, ky * dh:ky * dh + (out_h - 1) * sh + 1:sh,
                          kx * dw:kx * dw + (out_w - 1) * sw + 1:sw]
                out[:, f] += np.einsum("nchw,c->nhw", patch, kernel[f, :, ky, kx])
    return out


def conv2d_nhwc_python(data, kernel, stride, padding, dilation=1):
    """:func:`conv2d_nchw_python` for NHWC ``data`` and an HWIO ``kernel``, NHWC out."""
    return conv2d_nchw_python(data.transpose(0, 3, 1, 2), kernel.transpose(3, 2, 0, 1),
                              stride, padding, dilation).transpose(0, 2, 3, 1)


def depthwise_conv2d_nchw_python(data, kernel, stride, padding, dilation=1):
    """``kernel`` is (channels, multiplier, kh, kw)."""
    c, m, kh, kw = kernel.shape
    grouped = kernel.reshape(c * m, 1, kh, kw)
    return conv2d_nchw_python(data, grouped, stride, padding, dilation, groups=c)


def pool2d_python(x, kernel, stride, dilation, padding, pool_type, ceil_mode=False,
                  count_include_pad=True):
    """NCHW pooling by looping over output positions (small inputs only)."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    top, left, bottom, right = padding
    n, c, h, w = x.shape

    def extent(size, k, s, d, lo, hi):
        span = size + lo + hi - ((k - 1) * d + 1)
        return (-(-span // s) if ceil_mode else span // s) + 1

    out_h, out_w = extent(h, kh, sh, dh, top, bottom), extent(w, kw, sw, dw, left, right)
    out = np.zeros((n, c, out_h, out_w), dtype=x.dtype)
    for i in range(out_h):
        for j in range(out_w):
            ys = [i * sh - top + t * dh for t in range(kh)]
            xs = [j * sw - left + t * dw for t in range(kw)]
            inside = [(y, xx) for y in ys for xx in xs if 0 <= y < h and 0 <= xx < w]
            vals = np.stack([x[:, :, y, xx] for y, xx in inside], -1) if inside else None
            if pool_type == "max":
                out[:, :, i, j] = vals.max(-1)
                continue
            if count_include_pad:
                count = sum(1 for y in ys for xx in xs
                            if -top <= y < h + bottom and -left <= xx < w + right)
            else:
                count = len(inside)
            total = vals.sum(-1) if inside else 0
            out[:, :, i, j] = total / max(count, 1)
    return out


def softmax_python(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_python(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def batch_norm_python(x, gamma, beta, mean, var, axis=1, epsilon=1e-5):
    shape = [1] * x.ndim
    shape[axis] = -1
    r = [a.reshape(shape) for a in (gamma, beta, mean, var)]
    return (x - r[2]) / np.sqrt(r[3] + epsilon) * r[0] + r[1]


def layer_norm_python(x, gamma, beta, axis, epsilon=1e-5):
    axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + epsilon) * gamma + beta


def lrn_python(x, size, axis=1, alpha=1e-4, beta=0.75, bias=2.0):
    sq = np.moveaxis(x * x, axis, 0)
    padded = np.pad(sq, [(size // 2, (size - 1) // 2)] + [(0, 0)] * (x.ndim - 1))
    sums = np.stack([padded[c:c + size].sum(0) for c in range(sq.shape[0])])
    return x / (bias + alpha / size * np.moveaxis(sums, 0, axis)) ** beta


def gelu_python(x):
    erf = np.vectorize(math.erf)
    return (0.5 * x * (1 + erf(x / math.sqrt(2)))).astype(x.dtype)


def sigmoid_python(x):
    return 1 / (1 + np.exp(-x))


def erf_python(x):
    return np.vectorize(math.erf)(x).astype(x.dtype)
