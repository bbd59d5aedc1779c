"""``softmax`` and ``log_softmax`` along one axis, stable (the maximum is subtracted).

Stages as in TVM: ``T_softmax_maxelem`` (max), ``T_softmax_exp``, ``T_softmax_expsum``,
``T_softmax_norm`` (``exp * (1 / sum)``); log-softmax has the same first three (its exp
a stage of its own, which a CPU schedule computes several registers wide before summing,
rather than inside the sum) and ends in ``T_log_softmax``.

For float32 the exponential of ``x - max`` is written out here (``exp_of_nonpositive``)
rather than called as ``T.exp``: its argument is never above zero, so it needs no upper
clamp, no overflow path and no branch, 14 vector operations where the general ``T.exp``
takes about 25; the exp is most of a softmax's time (0.19 of 0.28 ms at 128x1000 on a
256-bit Zen 1 core).

The row maximum is ``row_max``, ``Select(m > x, m, x)``: one ``vmaxps`` per vector, where
the NaN-propagating ``T.max`` takes five. It may skip a NaN element ``x_k`` (and even
give the maximum of part of the row), but ``exp(x_k - m)``, so the row's sum and every
output, is NaN whatever ``m`` is: the outputs are numpy's either way.
"""
from __future__ import annotations

import math
import struct

from ...te import comm_reducer, reduce_axis, sum as te_sum
from ...te.operation import compute
from ...tir import op as tir_op
from ...tir.expr import Let, Select, Var, const
from ..utils import normalize_axis

# e**r for |r| <= ln2 / 2, lowest power first: a degree-6 fit of least relative error
# (1.9e-9, 1.7e-8 once the coefficients are rounded to float32, below float32's 6e-8 ulp).
_EXP_POLY = (1.0, 1.0, 0.49999991059303284, 0.16666419804096222, 0.04166822507977486,
             0.008374815806746483, 0.0013836845755577087)
# Adding 1.5 * 2**23 to a float32 of magnitude below 2**22 leaves no fraction bits: the
# sum's low mantissa bits hold the rounded value. The extra 127 (float32's exponent bias)
# puts ``n + 127`` there, ready to shift into the exponent field.
_ROUND_AND_BIAS = 1.5 * 2.0 ** 23 + 127
# At this ``n + 127`` is 0, so the result is 0 (exp(-88) ~ 6e-39, a subnormal, would be
# lost against a softmax row's sum of at least 1); -inf is clamped to it.
_LOWEST = -88.0

# The ordered maximum: NaN may be skipped (see above), so it is one vmaxps per vector.
row_max = comm_reducer(lambda m, x: Select(m > x, m, x), tir_op.min_value, name="row_max")


def exp_of_nonpositive(d):
    """``e ** d`` for float32 ``d <= 0`` (or NaN): ``2**n * p(r)`` with
    ``n = round(d / ln2)``, ``r = d - n * ln2`` (two FMAs, ln2 split into a high and a
    low part) and ``p`` the polynomial ``_EXP_POLY``; ``2**n`` is built from exponent
    bits. Within 2 ulp of ``exp`` down to ``d = -87.3``; 0 from about -87.7 down (and
    for -inf), where ``n + 127`` reaches 0; NaN stays NaN. ``d > 0`` is outside its domain (the exponent field wraps)."""
    f32, i32 = "float32", "int32"
    clamped = Var("clamped", f32)
    biased = Var("biased", f32)
    n = Var("n", f32)
    r = Var("r", f32)
    ln2_hi = _to_f32(math.log(2))
    ln2_lo = math.log(2) - ln2_hi
    poly = const(_EXP_POLY[-1], f32)
    for c in reversed(_EXP_POLY[:-1]):
        poly = tir_op.fma(poly, r, const(c, f32))
    exponent = tir_op.shift_left(tir_op.reinterpret(i32, biased), const(23, i32))
    scaled = poly * tir_op.reinterpret(f32, exponent)
    reduced = tir_op.fma(n, const(-ln2_lo, f32), tir_op.fma(n, const(-ln2_hi, f32), clamped))
    body = Let(r, reduced, scaled)
    body = Let(n, biased - const(_ROUND_AND_BIAS, f32), body)
    body = Let(biased, tir_op.fma(clamped, const(1 / math.log(2), f32),
                                  const(_ROUND_AND_BIAS, f32)), body)
    return Let(clamped, tir_op.max(d, const(_LOWEST, f32)), body)


def _to_f32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _exp_shifted(x, maxelem):
    """``exp(x - maxelem)``, by ``exp_of_nonpositive`` for float32."""
    d = x - maxelem
    return exp_of_nonpositive(d) if str(d.dtype) == "float32" else tir_op.exp(d)


def _reduced(x, axis: int, reducer, name: str, body):
    """A tensor over every axis of ``x`` but ``axis``, reducing ``body(index)``."""
    k = reduce_axis((0, x.shape[axis]), name="k")

    def fcompute(*idx):
        full = idx[:axis] + (k.var,) + idx[axis:]
        return reducer(body(full), axis=k)

    shape = x.shape[:axis] + x.shape[axis + 1:]
    return compute(shape, fcompute, name=name)


def _drop(idx, axis):
    return idx[:axis] + idx[axis + 1:]


def softmax(x, axis: int = -1):
    """``exp(x - max) * (1 / sum(exp(x - max)))`` along ``axis``."""
    axis = normalize_axis(axis, x.ndim, "softmax")
    maxelem = _reduced(x, axis, row_max, "T_softmax_maxelem", lambda idx: x[idx])
    exp = compute(x.shape, lambda *idx: _exp_shifted(x[idx], maxelem[_drop(idx, axis)]),
                  name="T_softmax_exp")
    expsum = _reduced(x, axis, te_sum, "T_softmax_expsum", lambda idx: exp[idx])
    # One division per row, then a multiply per element: a vector division costs as
    # much as the rest of the normalization (within 1.5 ulp of ``exp / sum``).
    one = const(1, x.dtype)
    return compute(x.shape, lambda *idx: exp[idx] * (one / expsum[_drop(idx, axis)]),
                   name="T_softmax_norm", tag="softmax_output", attrs={"axis": axis})


def log_softmax(x, axis: int = -1):
    """``x - max - log(sum(exp(x - max)))`` along ``axis``."""
    axis = normalize_axis(axis, x.ndim, "log_softmax")
    maxelem = _reduced(x, axis, row_max, "T_softmax_maxelem", lambda idx: x[idx])
    exp = compute(x.shape, lambda *idx: _exp_shifted(x[idx], maxelem[_drop(idx, axis)]),
                  name="T_softmax_exp")
    expsum = _reduced(x, axis, te_sum, "T_softmax_expsum", lambda idx: exp[idx])
    return compute(x.shape, lambda *idx: x[idx] - maxelem[_drop(idx, axis)]
                   - tir_op.log(expsum[_drop(idx, axis)]), name="T_log_softmax")
