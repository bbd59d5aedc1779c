"""Converters of elementwise operators: arithmetic with broadcasting, activations, Clip,
Cast, Where, the variadic Sum/Min/Max/Mean.

A converter is ``convert(g, node)``: ``g`` is the importer (``g.expr``, ``g.emit``,
``g.shape``, ``g.dtype``), ``node`` the ONNX node with its inputs looked up. It returns
a Relax expression, a numpy array, or a list of them (one per output).
"""
from __future__ import annotations

import math

import numpy as np

from ...expr import const
from ... import op


def _scalar(value: float, dtype: str):
    return const(np.array(value, dtype=dtype), dtype)


def unary(relax_func):
    def convert(g, node):
        return relax_func(g.expr(node.input(0)))
    return convert


def binary(relax_func):
    def convert(g, node):
        return relax_func(g.expr(node.input(0)), g.expr(node.input(1)))
    return convert


def variadic(relax_func):
    """Sum / Min / Max: fold the inputs pairwise (each pair broadcasts)."""
    def convert(g, node):
        values = [g.expr(v) for v in node.inputs if v is not None]
        result = values[0]
        for value in values[1:]:
            result = g.emit(relax_func(result, value))
        return result
    return convert


def convert_mean(g, node):
    total = variadic(op.add)(g, node)
    count = sum(v is not None for v in node.inputs)
    return op.divide(total, _scalar(count, g.dtype(total)))


def convert_pow(g, node):
    base, exponent = g.expr(node.input(0)), node.input(1)
    dtype = g.dtype(base)
    if g.dtype(exponent) != dtype:
        exponent = g.emit(op.astype(g.expr(exponent), dtype))
    return op.power(base, g.expr(exponent))


def convert_reciprocal(g, node):
    x = g.expr(node.input(0))
    return op.divide(_scalar(1.0, g.dtype(x)), x)


def convert_leaky_relu(g, node):
    return op.nn.leakyrelu(g.expr(node.input(0)), node.attr("alpha", 0.01))


def convert_hard_sigmoid(g, node, alpha=None, beta=None):
    x = g.expr(node.input(0))
    dtype = g.dtype(x)
    alpha = node.attr("alpha", 0.2) if alpha is None else alpha
    beta = node.attr("beta", 0.5) if beta is None else beta
    scaled = g.emit(op.multiply(x, _scalar(alpha, dtype)))
    return op.clip(g.emit(op.add(scaled, _scalar(beta, dtype))), 0.0, 1.0)


def convert_hard_swish(g, node):
    x = g.expr(node.input(0))
    return op.multiply(x, g.emit(convert_hard_sigmoid(g, node, 1 / 6, 0.5)))


def convert_gelu(g, node):
    x = g.expr(node.input(0))
    if node.attr("approximate", "none") == "none":
        return op.nn.gelu(x)
    dtype = g.dtype(x)
    cube = g.emit(op.multiply(g.emit(op.multiply(x, x)), x))
    inner = g.emit(op.add(x, g.emit(op.multiply(cube, _scalar(0.044715, dtype)))))
    tanh = g.emit(op.tanh(g.emit(op.multiply(inner, _scalar(math.sqrt(2 / math.pi), dtype)))))
    half_x = g.emit(op.multiply(x, _scalar(0.5, dtype)))
    return op.multiply(half_x, g.emit(op.add(tanh, _scalar(1.0, dtype))))


def convert_clip(g, node):
    x = g.expr(node.input(0))
    info = np.finfo(g.dtype(x)) if g.dtype(x).startswith("float") else np.iinfo(g.dtype(x))
    if node.opset < 11:
        low, high = node.attr("min", float(info.min)), node.attr("max", float(info.max))
    else:
        low, high = (_constant_scalar(g, node, k, default) for k, default in
                     ((1, float(info.min)), (2, float(info.max))))
    return op.clip(x, low, high)


def _constant_scalar(g, node, index: int, default: float) -> float:
    value = node.input(index)
    if value is None:
        return default
    if not g.known(value):
        raise node.fail(f"input {index} must be a constant (an initializer or computed from "
                        f"shapes), found a tensor computed at run time")
    return float(np.asarray(value).reshape(-1)[0])


def convert_cast(g, node):
    from onnx import helper
    dtype = str(np.dtype(helper.tensor_dtype_to_np_dtype(node.attr("to"))))
    x = node.input(0)
    return x if g.dtype(x) == dtype else op.astype(g.expr(x), dtype)


def convert_where(g, node):
    return op.where(*(g.expr(v) for v in node.inputs))


def convert_prelu(g, node):
    x, slope = g.expr(node.input(0)), node.input(1)
    slope_shape = g.shape(slope)
    rank = len(g.shape(x))
    if len(slope_shape) == 1 and rank > 2 and slope_shape[0] != 1:
        # ONNX broadcasts a per-channel slope from the right; PyTorch exports it as (C,)
        # for NCHW data, which numpy broadcasting would align with W.
        slope = g.expr(slope)
        slope = g.emit(op.reshape(slope, (slope_shape[0],) + (1,) * (rank - 2)))
    scaled = g.emit(op.multiply(x, g.expr(slope)))
    return op.where(g.emit(op.less(x, _scalar(0, g.dtype(x)))), scaled, x)


def convert_elu(g, node):
    x = g.expr(node.input(0))
    dtype = g.dtype(x)
    alpha = _scalar(node.attr("alpha", 1.0), dtype)
    negative = g.emit(op.multiply(alpha, g.emit(op.subtract(g.emit(op.exp(x)),
                                                             _scalar(1.0, dtype)))))
    return op.where(g.emit(op.less(x, _scalar(0.0, dtype))), negative, x)


def convert_selu(g, node):
    x = g.expr(node.input(0))
    dtype = g.dtype(x)
    alpha = node.attr("alpha", 1.67326319217681884765625)
    gamma = _scalar(node.attr("gamma", 1.05070102214813232421875), dtype)
    negative = g.emit(op.multiply(_scalar(alpha, dtype),
                                  g.emit(op.subtract(g.emit(op.exp(x)), _scalar(1.0, dtype)))))
    inner = g.emit(op.where(g.emit(op.less_equal(x, _scalar(0.0, dtype))), negative, x))
    return op.multiply(gamma, inner)


def convert_softplus(g, node):
    x = g.expr(node.input(0))
    return op.log(g.emit(op.add(g.emit(op.exp(x)), _scalar(1.0, g.dtype(x)))))


def convert_softsign(g, node):
    x = g.expr(node.input(0))
    return op.divide(x, g.emit(op.add(g.emit(op.abs(x)), _scalar(1.0, g.dtype(x)))))


def convert_identity(g, node):
    return node.input(0)


def convert_not(g, node):
    return op.equal(g.expr(node.input(0)), const(np.array(False), "bool"))
