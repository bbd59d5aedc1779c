"""Converters of torch's convolution, pooling and embedding functions (NCHW, as torch)."""
from __future__ import annotations

from ....ir.errors import IRError
from ... import op as R
from .ops import scalar_like


def _pair(value) -> tuple:
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    return value * 2 if len(value) == 1 else value


def _same_padding(kernel, dilation) -> tuple:
    """``padding="same"`` at stride 1: the extra row/column goes to the bottom/right."""
    totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
    return (totals[0] // 2, totals[1] // 2, totals[0] - totals[0] // 2,
            totals[1] - totals[1] // 2)


def _with_bias(t, out, bias):
    if bias is None:
        return out
    channels = t.shape_of(bias)[0]
    return t.emit(R.add(out, t.emit(R.reshape(bias, [1, channels, 1, 1]))))


def conv2d(t, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if len(t.shape_of(input)) != 4:
        raise IRError(f"conv2d: a 4-D NCHW input is supported, found shape "
                      f"{t.shape_of(input)}")
    dilation = _pair(dilation)
    if padding == "same":
        padding = _same_padding(t.shape_of(weight)[2:], dilation)
    elif padding == "valid":
        padding = (0, 0)
    out = t.emit(R.nn.conv2d(input, weight, strides=_pair(stride), padding=_pair(padding),
                             dilation=dilation, groups=groups))
    return _with_bias(t, out, bias)


def conv_transpose2d(t, input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    out = t.emit(R.nn.conv2d_transpose(input, weight, strides=_pair(stride),
                                       padding=_pair(padding),
                                       output_padding=_pair(output_padding),
                                       dilation=_pair(dilation), groups=groups))
    return _with_bias(t, out, bias)


def convolution(t, input, weight, bias, stride, padding, dilation, transposed,
                output_padding, groups):
    """``aten.convolution``: the one ATen op behind every convolution."""
    if len(t.shape_of(input)) != 4:
        raise IRError(f"convolution: 2-D convolution (4-D input) is supported, found "
                      f"shape {t.shape_of(input)}")
    if transposed:
        return conv_transpose2d(t, input, weight, bias, stride, padding, output_padding,
                                groups, dilation)
    return conv2d(t, input, weight, bias, stride, padding, dilation, groups)


def _pool_stride(kernel, stride):
    return kernel if stride is None or stride == [] or stride == () else _pair(stride)


def max_pool2d(t, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if return_indices:
        raise IRError("max_pool2d: return_indices=True is not supported")
    kernel = _pair(kernel_size)
    return t.emit(R.nn.max_pool2d(input, kernel, _pool_stride(kernel, stride),
                                  _pair(padding), _pair(dilation), ceil_mode))


def max_pool2d_with_indices(t, input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False):
    """ATen's max pooling returns ``(out, indices)``; inference uses only ``out``."""
    return (max_pool2d(t, input, kernel_size, stride, padding, dilation, ceil_mode), None)


def avg_pool2d(t, input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    if divisor_override is not None:
        raise IRError("avg_pool2d: divisor_override is not supported")
    kernel = _pair(kernel_size)
    return t.emit(R.nn.avg_pool2d(input, kernel, _pool_stride(kernel, stride), _pair(padding),
                                  (1, 1), ceil_mode, count_include_pad))


def adaptive_avg_pool2d(t, input, output_size):
    """Global pooling, or an even split of each axis into windows; other splits (with
    overlapping windows) are refused."""
    in_h, in_w = t.shape_of(input)[2:]
    out_h, out_w = (size if out is None else out
                    for out, size in zip(_pair_or_none(output_size), (in_h, in_w)))
    if (out_h, out_w) == (1, 1):
        return t.emit(R.nn.adaptive_avg_pool2d(input, (1, 1)))
    if in_h % out_h or in_w % out_w:
        raise IRError(f"adaptive_avg_pool2d: output size {(out_h, out_w)} does not divide "
                      f"the input's {(in_h, in_w)}; only even windows are supported")
    kernel = (in_h // out_h, in_w // out_w)
    return avg_pool2d(t, input, kernel, kernel)


def _pair_or_none(value):
    if value is None or isinstance(value, int):
        return (value, value)
    return tuple(value)


def embedding(t, input, weight, padding_idx=None, max_norm=None, *_, **__):
    if max_norm is not None:
        raise IRError("embedding: max_norm is not supported")
    return t.emit(R.take(weight, input, axis=0))


def embedding_aten(t, weight, indices, padding_idx=-1, scale_grad_by_freq=False,
                   sparse=False):
    """``aten.embedding`` takes the table first, unlike ``F.embedding``."""
    return embedding(t, indices, weight)


def leaky_relu(t, input, negative_slope=0.01, inplace=False):
    return t.emit(R.nn.leakyrelu(input, negative_slope))


def hardsigmoid(t, input, inplace=False):
    """``relu6(x + 3) / 6``."""
    shifted = t.emit(R.add(input, scalar_like(t, 3.0, input)))
    clipped = t.emit(R.clip(shifted, 0.0, 6.0))
    return t.emit(R.divide(clipped, scalar_like(t, 6.0, input)))


def hardswish(t, input, inplace=False):
    return t.emit(R.multiply(input, hardsigmoid(t, input)))
