"""``stop - start`` without the noise: the extent of ``A[vi:vi + 4]`` is ``4``.

Regions and loops are printed as ``start:stop`` / ``range(start, stop)``, but stored as
``(min, extent)``. Reading them back needs ``stop - start`` simplified the way the
printer un-simplified it: ``(vi * 4 + 4) - vi * 4`` must become ``4`` again, or the
parsed IR would not equal the printed one. A sum of terms with integer coefficients
is enough for that; anything else is kept as one opaque term.

>>> extent_between(vi * 4, vi * 4 + 4)     # IntImm(int32, 4)
>>> extent_between(i, i + n * 2)            # n * 2, as written after ``i +``
"""
from __future__ import annotations

from ...ir.node import Node
from ...tir.expr import Add, IntImm, Mul, PrimExpr, Sub, const, convert


def same_term(a, b) -> bool:
    """``a`` and ``b`` are the same expression, variables and buffers by identity:
    ``i * 2`` is the same term as another ``i * 2``, never as ``n * 2``."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, Node):
        return not a._binder and all(same_term(getattr(a, f.name), getattr(b, f.name))
                                     for f in a._fields)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same_term(x, y) for x, y in zip(a, b))
    return a == b


def _terms(expr: PrimExpr, scale: int, out: list, constant: list) -> None:
    """Accumulate ``scale * expr`` as (term, coefficient) pairs plus a constant."""
    if isinstance(expr, IntImm):
        constant[0] += scale * expr.value
    elif isinstance(expr, Add):
        _terms(expr.a, scale, out, constant)
        _terms(expr.b, scale, out, constant)
    elif isinstance(expr, Sub):
        _terms(expr.a, scale, out, constant)
        _terms(expr.b, -scale, out, constant)
    elif isinstance(expr, Mul) and isinstance(expr.b, IntImm):
        _terms(expr.a, scale * expr.b.value, out, constant)
    elif isinstance(expr, Mul) and isinstance(expr.a, IntImm):
        _terms(expr.b, scale * expr.a.value, out, constant)
    else:
        for k, (term, coeff) in enumerate(out):
            if same_term(term, expr):
                out[k] = (term, coeff + scale)
                return
        out.append((expr, scale))


def _rebuild(terms: list, constant: int, dtype) -> PrimExpr:
    result = None
    for term, coeff in terms:
        if coeff == 0:
            continue
        magnitude = term if abs(coeff) == 1 else term * abs(coeff)
        if result is None:
            result = magnitude if coeff > 0 else const(0, dtype) - magnitude
        else:
            result = result + magnitude if coeff > 0 else result - magnitude
    if result is None:
        return const(constant, dtype)
    if constant > 0:
        result = result + constant
    elif constant < 0:
        result = result - (-constant)
    return result


def extent_between(start, stop) -> PrimExpr:
    """``stop - start``, with the terms that cancel removed."""
    start, stop = convert(start), convert(stop)
    if isinstance(start, IntImm) and start.value == 0:
        return stop
    if isinstance(stop, Add) and same_term(stop.a, start):
        return stop.b                 # exactly what the printer wrote: start + extent
    if not (start.dtype.is_integer and stop.dtype.is_integer):
        return stop - start
    terms: list = []
    constant = [0]
    _terms(stop, 1, terms, constant)
    _terms(start, -1, terms, constant)
    dtype = stop.dtype if stop.dtype.bits >= start.dtype.bits else start.dtype
    return _rebuild(terms, constant[0], dtype)
