"""Vector expressions taken apart for printing: one lane at a time, and alignment.

C has no arithmetic on ``float4``, so a vector statement prints either as one aligned
``float4`` copy (``*(float4*)(B + i) = *(float4*)(A + j);``, what a vectorized
cooperative fetch becomes) or lane by lane, each lane a scalar expression::

    lane_of(A[Ramp(i * 4, 1, 4)] + B[Ramp(j, 2, 4)], 1) == A[i * 4 + 1] + B[j + 2]
"""
from __future__ import annotations

import dataclasses
import math

from ...arith import simplify
from ...ir.errors import CodegenError
from ...tir import expr as E


def lane_of(expr: E.PrimExpr, lane: int) -> E.PrimExpr:
    """The scalar expression that lane ``lane`` of vector ``expr`` computes."""
    if expr.dtype.lanes == 1:
        return expr
    if isinstance(expr, E.Ramp):
        return simplify(expr.base + E.convert(expr.stride, expr.base.dtype) * lane)
    if isinstance(expr, E.Broadcast):
        return expr.value
    if isinstance(expr, E.BinaryOp):
        return dataclasses.replace(expr, a=lane_of(expr.a, lane), b=lane_of(expr.b, lane),
                                   dtype=expr.dtype.element)
    if isinstance(expr, E.Not):
        return E.Not(lane_of(expr.a, lane))
    if isinstance(expr, E.Select):
        return E.Select(lane_of(expr.condition, lane), lane_of(expr.true_value, lane),
                        lane_of(expr.false_value, lane))
    if isinstance(expr, E.Cast):
        return E.Cast(expr.dtype.element, lane_of(expr.value, lane))
    if isinstance(expr, E.BufferLoad):
        indices = tuple(lane_of(i, lane) for i in expr.indices)
        return E.BufferLoad(expr.buffer, indices, expr.buffer.dtype)
    if isinstance(expr, E.Call):
        args = tuple(a if isinstance(a, E.StringImm) else lane_of(a, lane) for a in expr.args)
        return E.Call(expr.dtype.element, expr.op, args)
    raise CodegenError(f"cannot print lane {lane} of the vector expression "
                       f"{type(expr).__name__} `{expr.script()}` as C")


def known_multiple(expr) -> int:
    """The largest number ``expr`` is known to be a multiple of (0 stands for zero).

    ``tx * 8 + k * 4`` -> 4; ``tx + 1`` -> 1. Used to prove a ``float4`` access aligned.
    """
    if isinstance(expr, E.IntImm):
        return abs(expr.value)
    if isinstance(expr, (E.Add, E.Sub)):
        return math.gcd(known_multiple(expr.a), known_multiple(expr.b))
    if isinstance(expr, E.Mul):
        return known_multiple(expr.a) * known_multiple(expr.b)
    return 1


def aligned_to(base, buffer, lanes: int) -> bool:
    """Whether ``buffer[base : base + lanes]`` starts on a ``lanes``-element boundary
    (arrays themselves start aligned: cudaMalloc gives 256 bytes, declarations are
    aligned by the printer)."""
    offset = known_multiple(buffer.elem_offset)
    start = math.gcd(known_multiple(base), offset)
    return start % lanes == 0
