"""Elementwise unary operators: ``exp``, ``sqrt``, ``sigmoid``, ``relu``, ``gelu``, ``cast``...

Each is one compute named ``compute`` over loops ``i0, i1, ...`` (like TVM's Python
operators); ``cast`` is ``T_cast``.
"""
from __future__ import annotations

import math as _math

from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir import op as tir_op
from ..tir.expr import cast as tir_cast, const
from .utils import ax_compute


def _unary(name: str, fscalar, doc: str):
    def op(x: Tensor) -> Tensor:
        return compute(x.shape, lambda *i: fscalar(x(*i)), tag="elemwise")

    op.__name__ = name
    op.__doc__ = doc
    return op


exp = _unary("exp", tir_op.exp, "``e ** x`` elementwise.")
log = _unary("log", tir_op.log, "Natural logarithm elementwise.")
sqrt = _unary("sqrt", tir_op.sqrt, "Square root elementwise.")
rsqrt = _unary("rsqrt", tir_op.rsqrt, "``1 / sqrt(x)`` elementwise.")
tanh = _unary("tanh", tir_op.tanh, "Hyperbolic tangent elementwise.")
sigmoid = _unary("sigmoid", tir_op.sigmoid, "``1 / (1 + exp(-x))`` elementwise.")
erf = _unary("erf", tir_op.erf, "The Gauss error function elementwise.")
abs = _unary("abs", tir_op.abs, "Absolute value elementwise.")  # noqa: A001
negative = _unary("negative", lambda v: -v, "``-x`` elementwise.")


def relu(x: Tensor) -> Tensor:
    """``max(x, 0)`` elementwise."""
    return compute(x.shape, lambda *i: tir_op.max(x(*i), const(0, x.dtype)), tag="elemwise")


def gelu(x: Tensor) -> Tensor:
    """``x * Phi(x)`` with the exact normal CDF: ``0.5 * x * (1 + erf(x / sqrt(2)))``."""
    def fscalar(v):
        return v * (const(0.5, x.dtype) + tir_op.erf(v * const(1 / _math.sqrt(2), x.dtype))
                    * const(0.5, x.dtype))
    return compute(x.shape, lambda *i: fscalar(x(*i)), tag="elemwise")


def clip(x: Tensor, a_min, a_max) -> Tensor:
    """Clamp each element into ``[a_min, a_max]``."""
    lo, hi = const(a_min, x.dtype), const(a_max, x.dtype)
    return ax_compute(x.shape, lambda idx: tir_op.min(tir_op.max(x[idx], lo), hi), "compute",
                      "elemwise")


def cast(x, dtype) -> Tensor:
    """Convert elements to ``dtype``: ``topi.cast(x, "int32")`` (block ``T_cast``)."""
    if not isinstance(x, Tensor):
        return tir_cast(dtype, x)
    return ax_compute(x.shape, lambda idx: tir_cast(dtype, x[idx]), "T_cast", "elemwise")
