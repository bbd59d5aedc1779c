"""``softmax`` and ``log_softmax`` along one axis, stable (the maximum is subtracted).

Stages as in TVM: ``T_softmax_maxelem`` (max), ``T_softmax_exp``, ``T_softmax_expsum``,
``T_softmax_norm`` (``exp * (1 / sum)``); log-softmax ends in ``T_log_softmax``.
"""
from __future__ import annotations

from ...te import max as te_max, reduce_axis, sum as te_sum
from ...te.operation import compute
from ...tir import op as tir_op
from ...tir.expr import const
from ..utils import normalize_axis


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
    maxelem = _reduced(x, axis, te_max, "T_softmax_maxelem", lambda idx: x[idx])
    exp = compute(x.shape, lambda *idx: tir_op.exp(x[idx] - maxelem[_drop(idx, axis)]),
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
    maxelem = _reduced(x, axis, te_max, "T_softmax_maxelem", lambda idx: x[idx])
    expsum = _reduced(x, axis, te_sum, "T_softmax_expsum", lambda idx: tir_op.exp(
        x[idx] - maxelem[_drop(idx, axis)]))
    return compute(x.shape, lambda *idx: x[idx] - maxelem[_drop(idx, axis)]
                   - tir_op.log(expsum[_drop(idx, axis)]), name="T_log_softmax")
