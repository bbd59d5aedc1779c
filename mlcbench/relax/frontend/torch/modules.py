"""Converters of the ``torch.nn`` modules that ``torch.fx.symbolic_trace`` keeps whole.

A module converter is ``convert(t, module, *inputs)``: it reads the module's settings
and weights (``t.module_weight(module, "weight")``) and emits what its ``forward``
computes, through the functional converters.
"""
from __future__ import annotations

from ....ir.errors import IRError
from . import nn_ops, ops, shape_ops
from .attention import multihead_attention


def activation(functional):
    """``nn.ReLU()`` and friends: the functional form on the single input."""
    def convert(t, module, input):
        return functional(t, input)
    return convert


def identity(t, module, input, *_, **__):
    """``nn.Dropout`` and ``nn.Identity``: at inference the output is the input."""
    return input


def linear(t, module, input):
    return ops.linear(t, input, t.module_weight(module, "weight"),
                      t.module_weight(module, "bias"))


def conv2d(t, module, input):
    if module.padding_mode != "zeros":
        raise IRError(f"Conv2d: padding_mode {module.padding_mode!r} is not supported "
                      f"(zeros is)")
    return nn_ops.conv2d(t, input, t.module_weight(module, "weight"),
                         t.module_weight(module, "bias"), module.stride, module.padding,
                         module.dilation, module.groups)


def conv_transpose2d(t, module, input):
    return nn_ops.conv_transpose2d(t, input, t.module_weight(module, "weight"),
                                   t.module_weight(module, "bias"), module.stride,
                                   module.padding, module.output_padding, module.groups,
                                   module.dilation)


def batch_norm2d(t, module, input):
    if module.training and module.track_running_stats:
        raise IRError("BatchNorm2d in training mode is not supported; call model.eval() "
                      "before tracing")
    if module.running_mean is None:
        raise IRError("BatchNorm2d without running statistics (track_running_stats=False) "
                      "is not supported")
    return ops.batch_norm(t, input, t.module_weight(module, "weight"),
                          t.module_weight(module, "bias"),
                          t.module_weight(module, "running_mean"),
                          t.module_weight(module, "running_var"), False, module.momentum,
                          module.eps)


def layer_norm(t, module, input):
    return ops.layer_norm(t, input, module.normalized_shape, t.module_weight(module, "weight"),
                          t.module_weight(module, "bias"), module.eps)


def gelu(t, module, input):
    return ops.gelu(t, input, module.approximate)


def leaky_relu(t, module, input):
    return nn_ops.leaky_relu(t, input, module.negative_slope)


def hardtanh(t, module, input):
    return ops.hardtanh(t, input, module.min_val, module.max_val)


def softmax(t, module, input):
    return ops.softmax(t, input, module.dim)


def log_softmax(t, module, input):
    return ops.log_softmax(t, input, module.dim)


def max_pool2d(t, module, input):
    return nn_ops.max_pool2d(t, input, module.kernel_size, module.stride, module.padding,
                             module.dilation, module.ceil_mode, module.return_indices)


def avg_pool2d(t, module, input):
    return nn_ops.avg_pool2d(t, input, module.kernel_size, module.stride, module.padding,
                             module.ceil_mode, module.count_include_pad,
                             module.divisor_override)


def adaptive_avg_pool2d(t, module, input):
    return nn_ops.adaptive_avg_pool2d(t, input, module.output_size)


def flatten(t, module, input):
    return shape_ops.flatten(t, input, module.start_dim, module.end_dim)


def unflatten(t, module, input):
    return shape_ops.unflatten(t, input, module.dim, module.unflattened_size)


def embedding(t, module, input):
    return nn_ops.embedding(t, input, t.module_weight(module, "weight"))


def _feed_forward(t, layer, x):
    activation = layer.activation
    name = activation if isinstance(activation, str) else \
        getattr(activation, "__name__", type(activation).__name__).lower()
    if name not in _ACTIVATIONS:
        raise IRError(f"TransformerEncoderLayer: activation {name!r} is not supported "
                      f"({', '.join(sorted(_ACTIVATIONS))} are)")
    with t.submodule("linear1"):
        hidden = linear(t, layer.linear1, x)
    with t.submodule("linear2"):
        return linear(t, layer.linear2, _ACTIVATIONS[name](t, hidden))


def _layer_norm_of(t, layer, name, x):
    with t.submodule(name):
        return layer_norm(t, getattr(layer, name), x)


def transformer_encoder_layer(t, module, src, src_mask=None, src_key_padding_mask=None,
                              is_causal=False):
    """``nn.TransformerEncoderLayer`` (post-norm, or pre-norm with ``norm_first``)."""
    def self_attention(x):
        with t.submodule("self_attn"):
            return multihead_attention(t, module.self_attn, x, x, x, src_key_padding_mask,
                                       False, src_mask, True, is_causal)[0]
    x = src
    if module.norm_first:
        x = ops.add(t, x, self_attention(_layer_norm_of(t, module, "norm1", x)))
        return ops.add(t, x, _feed_forward(t, module, _layer_norm_of(t, module, "norm2", x)))
    x = _layer_norm_of(t, module, "norm1", ops.add(t, x, self_attention(x)))
    return _layer_norm_of(t, module, "norm2", ops.add(t, x, _feed_forward(t, module, x)))


def transformer_encoder(t, module, src, mask=None, src_key_padding_mask=None,
                        is_causal=None):
    """``nn.TransformerEncoder``: its layers in turn, then its optional norm."""
    x = src
    for k, layer in enumerate(module.layers):
        with t.submodule(f"layers.{k}"):
            x = transformer_encoder_layer(t, layer, x, mask, src_key_padding_mask,
                                          bool(is_causal))
    if module.norm is not None:
        x = _layer_norm_of(t, module, "norm", x)
    return x


_ACTIVATIONS = {"relu": ops.relu, "gelu": ops.gelu, "silu": ops.silu}

TABLE = {
    "nn.Linear": linear, "nn.Conv2d": conv2d, "nn.ConvTranspose2d": conv_transpose2d,
    "nn.BatchNorm2d": batch_norm2d, "nn.LayerNorm": layer_norm,
    "nn.ReLU": activation(ops.relu), "nn.ReLU6": activation(ops.relu6), "nn.GELU": gelu,
    "nn.SiLU": activation(ops.silu), "nn.Sigmoid": activation(ops.sigmoid),
    "nn.Tanh": activation(ops.tanh), "nn.Hardtanh": hardtanh,
    "nn.Hardsigmoid": activation(nn_ops.hardsigmoid),
    "nn.Hardswish": activation(nn_ops.hardswish), "nn.LeakyReLU": leaky_relu,
    "nn.Softmax": softmax, "nn.LogSoftmax": log_softmax,
    "nn.MaxPool2d": max_pool2d, "nn.AvgPool2d": avg_pool2d,
    "nn.AdaptiveAvgPool2d": adaptive_avg_pool2d,
    "nn.Flatten": flatten, "nn.Unflatten": unflatten, "nn.Embedding": embedding,
    "nn.Dropout": identity, "nn.Identity": identity,
    "nn.MultiheadAttention": multihead_attention,
    "nn.TransformerEncoderLayer": transformer_encoder_layer,
    "nn.TransformerEncoder": transformer_encoder,
}
