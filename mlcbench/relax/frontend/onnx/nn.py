"""Converters of network layers: Conv, ConvTranspose, Gemm, MatMul, pooling, the norms,
LRN, Dropout, Softmax. Convolutions and pools take 1-D inputs (N, C, W) too: they run as
2-D with H = 1."""
from __future__ import annotations

import numpy as np

from ...expr import const
from ... import op
from .common import tuple_outputs


def _spatial_rank(g, node) -> int:
    rank = len(g.shape(node.input(0))) - 2
    if rank not in (1, 2):
        raise node.fail(f"{rank}-D data (input shape {g.shape(node.input(0))}) is not "
                        f"supported; 1-D and 2-D are")
    return rank


def auto_pads(node, in_sizes, kernels, strides, dilations) -> list:
    """ONNX ``pads`` (begins then ends) from ``auto_pad`` or the ``pads`` attribute."""
    mode = node.attr("auto_pad", "NOTSET")
    rank = len(in_sizes)
    if mode in ("NOTSET", ""):
        return list(node.attr("pads", [0] * 2 * rank))
    if mode == "VALID":
        return [0] * 2 * rank
    if mode not in ("SAME_UPPER", "SAME_LOWER"):
        raise node.fail(f"auto_pad is NOTSET, VALID, SAME_UPPER or SAME_LOWER, found {mode!r}")
    begins, ends = [], []
    for size, k, s, d in zip(in_sizes, kernels, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begins.append(small if mode == "SAME_UPPER" else large)
        ends.append(large if mode == "SAME_UPPER" else small)
    return begins + ends


def _window(g, node, kernel):
    """(strides, dilations, (top, left, bottom, right)) of a 2-D (or lifted 1-D) window."""
    rank = len(kernel)
    strides = list(node.attr("strides", [1] * rank))
    dilations = list(node.attr("dilations", [1] * rank))
    pads = auto_pads(node, g.shape(node.input(0))[2:], kernel, strides, dilations)
    if rank == 1:
        return [1] + strides, [1] + dilations, (0, pads[0], 0, pads[1])
    return strides, dilations, (pads[0], pads[1], pads[2], pads[3])


def _as_2d(g, value, rank: int, axis: int = 2):
    """Lift 1-D data (N, C, W) or weights (O, I, K) to 2-D with an extent-1 axis."""
    if rank == 2:
        return g.expr(value)
    if g.known(value):
        return g.expr(np.expand_dims(value, axis))
    return g.emit(op.expand_dims(g.expr(value), [axis]))


def _bias_add(g, out, bias, rank: int):
    if bias is None:
        return out
    bias = g.expr(bias)
    return op.add(out, g.emit(op.reshape(bias, (-1,) + (1,) * rank)))


def _drop_lifted(g, out, rank: int):
    return out if rank == 2 else op.squeeze(g.emit(out), [2])


def convert_conv(g, node):
    rank = _spatial_rank(g, node)
    kernel = list(g.shape(node.input(1))[2:])
    strides, dilations, padding = _window(g, node, kernel)
    data, weight = _as_2d(g, node.input(0), rank), _as_2d(g, node.input(1), rank)
    out = g.emit(op.nn.conv2d(data, weight, strides, padding, dilations,
                              node.attr("group", 1)))
    out = _bias_add(g, out, node.input(2), 2)
    return _drop_lifted(g, out, rank)


def convert_conv_transpose(g, node):
    rank = _spatial_rank(g, node)
    kernel = list(g.shape(node.input(1))[2:])
    strides = list(node.attr("strides", [1] * rank))
    dilations = list(node.attr("dilations", [1] * rank))
    out_pad = list(node.attr("output_padding", [0] * rank))
    pads = _transpose_pads(g, node, kernel, strides, dilations, out_pad)
    if rank == 1:
        strides, dilations, out_pad = [1] + strides, [1] + dilations, [0] + out_pad
        pads = [0, pads[0], 0, pads[1]]
    data, weight = _as_2d(g, node.input(0), rank), _as_2d(g, node.input(1), rank)
    out = g.emit(op.nn.conv2d_transpose(data, weight, strides, pads, out_pad, dilations,
                                        node.attr("group", 1)))
    out = _bias_add(g, out, node.input(2), 2)
    return _drop_lifted(g, out, rank)


def _transpose_pads(g, node, kernel, strides, dilations, out_pad) -> list:
    """(top, left, bottom, right)-ordered pads: begins then ends, from ``pads``,
    ``output_shape`` or ``auto_pad``."""
    in_sizes = g.shape(node.input(0))[2:]
    rank = len(kernel)
    output_shape = node.attr("output_shape")
    mode = node.attr("auto_pad", "NOTSET")
    if output_shape is None and mode in ("NOTSET", "", "VALID"):
        pads = list(node.attr("pads", [0] * 2 * rank)) if mode != "VALID" else [0] * 2 * rank
        return pads if rank == 1 else [pads[0], pads[1], pads[2], pads[3]]
    if output_shape is None:
        output_shape = [size * s for size, s in zip(in_sizes, strides)]
    output_shape = list(output_shape)[-rank:]
    begins, ends = [], []
    for size, k, s, d, extra, want in zip(in_sizes, kernel, strides, dilations, out_pad,
                                          output_shape):
        total = s * (size - 1) + extra + (k - 1) * d + 1 - want
        small, large = total // 2, total - total // 2
        upper = mode == "SAME_UPPER"
        begins.append(small if upper else large)
        ends.append(large if upper else small)
    return begins + ends if rank == 1 else [begins[0], begins[1], ends[0], ends[1]]


def convert_gemm(g, node):
    a, b, c = node.input(0), node.input(1), node.input(2)
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if node.attr("transA", 0):
        a = a.T if g.known(a) else g.emit(op.permute_dims(g.expr(a), [1, 0]))
    if node.attr("transB", 0):
        b = np.ascontiguousarray(b.T) if g.known(b) else \
            g.emit(op.permute_dims(g.expr(b), [1, 0]))
    out = g.emit(op.matmul(g.expr(a), g.expr(b)))
    dtype = g.dtype(out)
    if alpha != 1.0:
        out = g.emit(op.multiply(out, const(np.array(alpha, dtype), dtype)))
    if c is None:
        return out
    if beta != 1.0:
        c = c * np.asarray(beta, dtype) if g.known(c) else \
            g.emit(op.multiply(g.expr(c), const(np.array(beta, dtype), dtype)))
    return op.add(out, g.expr(c))


def convert_matmul(g, node):
    return op.matmul(g.expr(node.input(0)), g.expr(node.input(1)))


def convert_batch_norm(g, node):
    x, scale, bias, mean, var = (g.expr(v) for v in node.inputs[:5])
    out = op.nn.batch_norm(x, scale, bias, mean, var, axis=1,
                           epsilon=node.attr("epsilon", 1e-5))
    return tuple_outputs(g, out, 3)[0]


def convert_instance_norm(g, node):
    x, scale, bias = (g.expr(v) for v in node.inputs[:3])
    rank = len(g.shape(x))
    axes = list(range(2, rank))
    dtype = g.dtype(x)
    mean = g.emit(op.mean(x, axes, keepdims=True))
    centered = g.emit(op.subtract(x, mean))
    var = g.emit(op.mean(g.emit(op.multiply(centered, centered)), axes, keepdims=True))
    eps = const(np.array(node.attr("epsilon", 1e-5), dtype), dtype)
    normed = g.emit(op.multiply(centered, g.emit(op.rsqrt(g.emit(op.add(var, eps))))))
    per_channel = (-1,) + (1,) * (rank - 2)
    return op.add(g.emit(op.multiply(normed, g.emit(op.reshape(scale, per_channel)))),
                  g.emit(op.reshape(bias, per_channel)))


def convert_layer_norm(g, node):
    x = g.expr(node.input(0))
    rank = len(g.shape(x))
    axis = node.attr("axis", -1) % rank
    normalized = g.shape(x)[axis:]
    scale = node.input(1)
    bias = node.input(2)
    if bias is None:
        bias = np.zeros(normalized, g.dtype(x))
    if node.num_outputs > 1 and any(n for n in node.proto.output[1:]):
        raise node.fail("the Mean and InvStdDev outputs are not supported (inference only)")
    return op.nn.layer_norm(x, g.expr(scale), g.expr(bias), list(range(axis, rank)),
                            node.attr("epsilon", 1e-5))


def convert_pool(kind: str):
    def convert(g, node):
        rank = _spatial_rank(g, node)
        kernel = list(node.attr("kernel_shape"))
        strides, dilations, padding = _window(g, node, kernel)
        if rank == 1:
            kernel = [1] + kernel
        if len(node.proto.output) > 1 and node.proto.output[1]:
            raise node.fail("the Indices output of MaxPool is not supported")
        data = _as_2d(g, node.input(0), rank)
        pool = op.nn.max_pool2d if kind == "max" else op.nn.avg_pool2d
        extra = {} if kind == "max" else \
            {"count_include_pad": bool(node.attr("count_include_pad", 0))}
        out = pool(data, kernel, strides, padding, dilations,
                   ceil_mode=bool(node.attr("ceil_mode", 0)), **extra)
        return _drop_lifted(g, out, rank)
    return convert


def convert_global_pool(kind: str):
    def convert(g, node):
        x = g.expr(node.input(0))
        axes = list(range(2, len(g.shape(x))))
        return (op.mean if kind == "avg" else op.max)(x, axes, keepdims=True)
    return convert


def convert_lrn(g, node):
    return op.nn.lrn(g.expr(node.input(0)), node.attr("size"), 1, node.attr("alpha", 1e-4),
                     node.attr("beta", 0.75), node.attr("bias", 1.0))


def convert_dropout(g, node):
    """Inference: the output is the input; the optional mask is all ones."""
    x = node.input(0)
    if node.num_outputs > 1 and node.proto.output[1]:
        return [x, np.ones(g.shape(x), dtype="bool")]
    return x


def convert_softmax(log: bool):
    def convert(g, node):
        x = g.expr(node.input(0))
        shape = g.shape(x)
        func = op.nn.log_softmax if log else op.nn.softmax
        if node.opset >= 13:
            return func(x, node.attr("axis", -1))
        # before opset 13 the input is coerced to 2-D at ``axis``
        axis = node.attr("axis", 1) % max(len(shape), 1)
        rows = int(np.prod(shape[:axis], dtype=np.int64))
        flat = g.emit(op.reshape(x, (rows, -1)))
        return op.reshape(g.emit(func(flat, -1)), shape)
    return convert
