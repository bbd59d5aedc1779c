"""Normalizations: ``batch_norm`` (inference), ``layer_norm`` and ``lrn``."""
from __future__ import annotations

from ...te import comm_reducer, reduce_axis
from ...te.operation import compute
from ...tir import op as tir_op
from ...tir.expr import Let, Var, const
from ..utils import normalize_axes, normalize_axis, prod


def batch_norm(data, gamma, beta, moving_mean, moving_var, axis: int = 1,
               epsilon: float = 1e-5, center: bool = True, scale: bool = True):
    """Inference batch norm along channel ``axis``:
    ``(x - mean) / sqrt(var + epsilon) * gamma + beta``, computed as ``x * factor +
    shift`` with ``factor = gamma / sqrt(var + epsilon)``, ``shift = beta - mean * factor``.

    Returns ``(out, moving_mean, moving_var)`` like TVM's operator (in inference the
    statistics pass through unchanged).
    """
    axis = normalize_axis(axis, data.ndim, "batch_norm")
    eps, one = const(epsilon, data.dtype), const(1, data.dtype)

    # ``x * factor + shift`` with a factor and a shift per channel: away from the
    # channel axis both are loop-invariant, so each element costs one multiply-add
    # instead of a division (a vector division costs several multiply-adds).
    def fcompute(*idx):
        c = idx[axis]
        factor = one / tir_op.sqrt(moving_var[c] + eps)
        if scale:
            factor = factor * gamma[c]
        shift = beta[c] - moving_mean[c] * factor if center else -(moving_mean[c] * factor)
        return data[idx] * factor + shift

    out = compute(data.shape, fcompute, name="T_batch_norm", tag="injective")
    return out, moving_mean, moving_var


# Sum and sum of squares in one reduction: the input is read once for mean and variance.
_sum_and_squares = comm_reducer(
    lambda x, y: (x[0] + y[0], x[1] + y[1]),
    lambda t0, t1: (const(0, t0), const(0, t1)), name="sum_and_squares")


def layer_norm(data, gamma, beta, axis, epsilon: float = 1e-5):
    """Normalize over ``axis`` (one or several trailing axes), then scale by ``gamma`` and
    shift by ``beta`` (both shaped like the normalized axes).

    One pass sums values and squares (``T_layer_norm_red_temp``), a second normalizes
    (``T_layer_norm``).
    """
    axes = normalize_axes(axis, data.ndim, "layer_norm")
    kept = [d for d in range(data.ndim) if d not in axes]
    raxes = [reduce_axis((0, data.shape[d]), name=f"k{d}") for d in axes]

    def full_index(kept_idx, axis_idx):
        idx = [None] * data.ndim
        for d, v in zip(kept, kept_idx):
            idx[d] = v
        for d, v in zip(axes, axis_idx):
            idx[d] = v
        return tuple(idx)

    def red(*idx):
        value = data[full_index(idx, [r.var for r in raxes])]
        return _sum_and_squares((value, value * value), axis=raxes)

    total, squares = compute([data.shape[d] for d in kept], red, name="T_layer_norm_red_temp")
    count = const(1, data.dtype) * prod([data.shape[d] for d in axes]).astype(data.dtype)
    eps = const(epsilon, data.dtype)

    def norm(*idx):
        k = tuple(idx[d] for d in kept)
        mean = total[k] / count
        # E[x^2] - mean^2: the one-pass form the paired reduction above allows.
        var = squares[k] / count - mean * mean
        inner = tuple(idx[d] for d in axes)
        return (data[idx] - mean) * tir_op.rsqrt(var + eps) * gamma[inner] + beta[inner]

    return compute(data.shape, norm, name="T_layer_norm")


def lrn(data, size: int, axis: int = 1, alpha: float = 0.0001, beta: float = 0.75,
        bias: float = 2.0):
    """Local response normalization across ``size`` neighbouring channels:
    ``x / (bias + alpha / size * sum(x_c ** 2)) ** beta``.

    One elementwise stage: the window's ``size`` squares are summed term by term (each
    guarded by the channel bounds, which vary only along ``axis``) rather than by a
    reduction, so the default schedule vectorizes the row, and a ``beta`` of 0.75 or 0.5
    is taken with square roots rather than ``pow``. AlexNet's first LRN (96 x 55 x 55),
    one thread: 79 ms as a reduction with ``pow``, 6.5 ms now (2-core Zen)."""
    axis = normalize_axis(axis, data.ndim, "lrn")
    extent = data.shape[axis]

    def square_sum(idx):
        total = None
        for offset in range(-(size // 2), size - size // 2):
            source = list(idx)
            source[axis] = idx[axis] + offset
            value = data[tuple(source)]
            inside = tir_op.all(source[axis] >= 0, source[axis] < extent)
            term = tir_op.if_then_else(inside, value * value, const(0, data.dtype))
            total = term if total is None else total + term
        return total

    scale = const(alpha / size, data.dtype)
    return compute(data.shape, lambda *idx: data[idx] / _power(
        const(bias, data.dtype) + scale * square_sum(idx), beta), name="T_lrn")


def _power(base, exponent: float):
    """``base ** exponent``, by square roots where the exponent allows (they vectorize;
    ``pow`` is a scalar call per element)."""
    # x ** 0.75 = sqrt(x) * sqrt(sqrt(x)); the Let computes sqrt(x) once.
    if exponent == 0.75:
        root = Var("root", base.dtype)
        return Let(root, tir_op.sqrt(base), root * tir_op.sqrt(root))
    if exponent == 0.5:
        return tir_op.sqrt(base)
    if exponent == 1.0:
        return base
    return tir_op.pow(base, const(exponent, base.dtype))
