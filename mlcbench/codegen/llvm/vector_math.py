"""Vectorizable exp, log, tanh, sigmoid and erf emitted as plain LLVM IR.

LLVM lowers ``llvm.exp.v16f32`` to sixteen scalar ``expf`` calls, and a loop that
calls libm cannot be vectorized. These expansions use only arithmetic, bit casts,
selects and (in exp) one branch whose two sides compute the same bits, so they work on
scalars and vectors alike (a scalar loop that uses them can still be vectorized by
LLVM, and a vector lane computes exactly what a scalar does).

Each function takes an ``ir.IRBuilder`` and a ``float``/``double`` value (scalar or
vector) and returns a value of the same type::

    y = vector_math.exp(builder, x)          # x: <16 x float>

Accuracy (asserted by ``tests/codegen/test_vector_math.py`` against float64 numpy;
measured maxima in parentheses): float32 exp and log within 1 ulp (0.86, 0.81),
tanh, sigmoid and erf within 1e-6 relative (1.6e-7, 1.7e-7, 2.0e-7); float64 exp and
log within 1 ulp, tanh within 3 ulp. float16 is computed in float32 by the caller.
Special values follow C's libm: ``exp(-inf) = 0``, ``exp(inf) = inf``, large inputs
overflow to ``inf`` or underflow to 0, ``log(0) = -inf``, ``log(x < 0) = nan`` and
NaN propagates through every function.
"""
from __future__ import annotations

import decimal
import math
import struct
from fractions import Fraction

from llvmlite import ir

from ...ir.errors import CodegenError
from . import types as T

FLAGS = T.FLOAT_FLAGS      # ``contract`` only: a*b+c may fuse into an FMA


# -- helpers ------------------------------------------------------------------------------
def _element(ty: ir.Type) -> ir.Type:
    return ty.element if isinstance(ty, ir.VectorType) else ty


def _is_double(ty: ir.Type) -> bool:
    return isinstance(_element(ty), ir.DoubleType)


def _int_type(ty: ir.Type) -> ir.Type:
    """The integer type as wide as ``ty`` (``<16 x float>`` -> ``<16 x i32>``)."""
    width = ir.IntType(64 if _is_double(ty) else 32)
    return ir.VectorType(width, ty.count) if isinstance(ty, ir.VectorType) else width


def _const(ty: ir.Type, value) -> ir.Constant:
    """``value`` in type ``ty``, splatted across the lanes of a vector type."""
    elem = _element(ty)
    scalar = ir.Constant(elem, float(value) if not isinstance(elem, ir.IntType) else int(value))
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [scalar] * ty.count)
    return scalar


def _intrinsic(builder: ir.IRBuilder, base: str, args) -> ir.Value:
    """Call an overloaded LLVM intrinsic such as ``llvm.roundeven.v16f32``."""
    from .intrinsics import intrinsic_suffix
    ty = args[0].type
    name = f"{base}.{intrinsic_suffix(ty)}"
    fn = builder.module.globals.get(name)
    if fn is None:
        fn = ir.Function(builder.module, ir.FunctionType(ty, [a.type for a in args]), name=name)
    return builder.call(fn, args)


def _horner(builder: ir.IRBuilder, x: ir.Value, coefficients) -> ir.Value:
    """``c0 + x * (c1 + x * (c2 + ...))`` for ``coefficients = [c0, c1, c2, ...]``."""
    acc = _const(x.type, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = builder.fadd(builder.fmul(acc, x, flags=FLAGS), _const(x.type, c), flags=FLAGS)
    return acc


def _ln2_split(double: bool) -> tuple:
    """``(hi, lo)`` with ``hi + lo == ln 2`` to about twice the working precision and
    ``hi``'s last 16 (float64) or 12 (float32) mantissa bits zero, so ``n * hi`` is exact
    for any exponent ``n`` the range reductions produce (the Cody-Waite split). ``lo``
    comes from ln 2 to 40 digits: float64's own ``math.log(2)`` is too coarse for it."""
    with decimal.localcontext() as context:
        context.prec = 40
        exact = decimal.Decimal(2).ln()
        if double:
            bits = struct.unpack("<Q", struct.pack("<d", float(exact)))[0] & ~0xFFFF
            hi = struct.unpack("<d", struct.pack("<Q", bits))[0]
        else:
            bits = struct.unpack("<I", struct.pack("<f", float(exact)))[0] & ~0xFFF
            hi = struct.unpack("<f", struct.pack("<I", bits))[0]
        return hi, float(exact - decimal.Decimal(hi))


def _lt(builder, a, b):
    return builder.fcmp_ordered("<", a, b)


def _gt(builder, a, b):
    return builder.fcmp_ordered(">", a, b)


# -- exp ----------------------------------------------------------------------------------
def _exp_taylor(terms: int) -> list:
    """``1/k!`` for k < terms: e**r for |r| <= ln2/2 (the remainder after range reduction).
    Eight terms (degree 7) leave a truncation error of 0.35**8/8! ~ 5e-9, far below
    float32's ulp; fourteen leave ~4e-18 for float64."""
    return [1.0 / math.factorial(k) for k in range(terms)]


def _scale_by_power_of_two(builder, p: ir.Value, n: ir.Value) -> ir.Value:
    """``p * 2**n`` for an integer vector ``n`` whose 2**n may be outside the normal range:
    the product is taken in two halves, ``2**(n >> 1) * 2**(n - (n >> 1))``, each a
    normal number built directly from exponent bits, so huge ``n`` overflow to inf and
    very negative ``n`` round once into subnormals or zero."""
    double = _is_double(p.type)
    mantissa_bits, bias = (52, 1023) if double else (23, 127)
    half = builder.ashr(n, _const(n.type, 1))
    rest = builder.sub(n, half)
    for part in (half, rest):
        biased = builder.add(part, _const(n.type, bias))
        scale = builder.bitcast(builder.shl(biased, _const(n.type, mantissa_bits)), p.type)
        p = builder.fmul(p, scale)
    return p


def _round_to_integer(builder, v: ir.Value) -> tuple:
    """``(n_float, n_int)``: ``v`` rounded to the nearest integer, for ``|v| < 2**22``
    (float32) or ``2**51``. Adding ``1.5 * 2**23`` leaves no fraction bits, so the sum is
    the rounded integer plus that constant, and its low bits hold the integer itself:
    one add instead of ``roundeven`` and ``fptosi`` (each a slow two-uop instruction on
    256-bit vectors of AMD's first Zen)."""
    ty, double = v.type, _is_double(v.type)
    magic = 1.5 * 2.0 ** (52 if double else 23)
    magic_bits = struct.unpack("<Q" if double else "<I", struct.pack("<d" if double else "<f",
                                                                    magic))[0]
    shifted = builder.fadd(v, _const(ty, magic), flags=FLAGS)
    n_int = builder.sub(builder.bitcast(shifted, _int_type(ty)), _const(_int_type(ty), magic_bits))
    return builder.fsub(shifted, _const(ty, magic)), n_int


def exp(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """e**x = 2**n * e**r with ``n = round(x / ln2)`` and ``r = x - n*ln2`` in [-ln2/2, ln2/2].

    ``n * ln2`` is subtracted in two steps (a ``ln2_hi`` whose product with ``n`` is exact,
    then the small ``ln2_lo``) so ``r`` keeps full precision; e**r is a Taylor polynomial.
    Inputs are clamped first: above 89 (float32) everything overflows to inf, below -104
    underflows to 0. The clamp compares so that NaN fails both tests and passes through
    unchanged, and NaN stays NaN through the arithmetic that follows::

        exp(1.0) -> 2.7182817, exp(-inf) -> 0.0, exp(100.0) -> inf
    """
    ty, double = x.type, _is_double(x.type)
    low, high = (-746.0, 710.0) if double else (-104.0, 89.0)
    clamped = builder.select(_lt(builder, x, _const(ty, low)), _const(ty, low), x)
    clamped = builder.select(_gt(builder, clamped, _const(ty, high)), _const(ty, high), clamped)
    ln2_hi, ln2_lo = _ln2_split(double)
    n_float, n = _round_to_integer(
        builder, builder.fmul(clamped, _const(ty, 1 / math.log(2)), flags=FLAGS))
    r = builder.fsub(clamped, builder.fmul(n_float, _const(ty, ln2_hi)))
    r = builder.fsub(r, builder.fmul(n_float, _const(ty, ln2_lo)), flags=FLAGS)
    p = _horner(builder, r, _exp_taylor(14 if double else 8))
    return _scale_when_normal(builder, p, n)


def _scale_when_normal(builder, p: ir.Value, n: ir.Value) -> ir.Value:
    """``p * 2**n`` for ``p`` in [0.7, 1.42]: when every lane's result is a normal number
    (``-bias + 2 <= n <= bias - 1``), by adding ``n`` to ``p``'s exponent bits (exact,
    two integer operations); otherwise (a lane that overflows or turns subnormal) by
    ``_scale_by_power_of_two``. Both give the same bits where both apply; the branch
    saves about 15% of a vector exp, whose inputs are almost never that extreme."""
    double = _is_double(p.type)
    mantissa_bits, bias = (52, 1023) if double else (23, 127)
    ity = n.type
    offset = builder.add(n, _const(ity, bias - 2))      # [2 - bias, bias - 1] -> [0, 2 bias - 3]
    normal = builder.icmp_unsigned("<=", offset, _const(ity, 2 * bias - 3))
    if isinstance(normal.type, ir.VectorType):
        name = f"llvm.vector.reduce.and.v{normal.type.count}i1"
        reduce_and = builder.module.globals.get(name) or ir.Function(
            builder.module, ir.FunctionType(ir.IntType(1), [normal.type]), name=name)
        normal = builder.call(reduce_and, [normal])
    with builder.if_else(normal, likely=True) as (fast, slow):
        with fast:
            exponent = builder.shl(n, _const(ity, mantissa_bits))
            quick = builder.bitcast(builder.add(builder.bitcast(p, ity), exponent), p.type)
            quick_block = builder.block
        with slow:
            careful, careful_block = _scale_by_power_of_two(builder, p, n), builder.block
    result = builder.phi(p.type)
    result.add_incoming(quick, quick_block)
    result.add_incoming(careful, careful_block)
    return result


# -- log ----------------------------------------------------------------------------------
def _atanh_series(terms: int) -> list:
    """``2/(2k+1)`` for k = 1..terms: log(1+f) = 2 atanh(s) = 2s + s * R(s**2) with
    ``s = f / (2 + f)``, ``R(z) = sum 2 z**k / (2k+1)``. For |s| <= 0.172 (f in
    [sqrt(1/2)-1, sqrt(2)-1]) five terms leave ~1e-10, eleven leave ~1e-18."""
    return [2.0 / (2 * k + 1) for k in range(1, terms + 1)]


def _split_exponent(builder, x: ir.Value) -> tuple:
    """``(m, e)`` with ``x = m * 2**e``, ``m`` in [sqrt(1/2), sqrt(2)), ``e`` a float;
    subnormal ``x`` are first scaled by 2**mantissa_bits to make them normal."""
    ty, double = x.type, _is_double(x.type)
    mantissa_bits, bias = (52, 1023) if double else (23, 127)
    ity = _int_type(ty)
    tiny = _lt(builder, x, _const(ty, 2.0 ** (-1022 if double else -126)))
    x = builder.select(tiny, builder.fmul(x, _const(ty, 2.0 ** mantissa_bits)), x)
    bits = builder.bitcast(x, ity)
    exponent = builder.sub(builder.lshr(bits, _const(ity, mantissa_bits)), _const(ity, bias))
    mantissa_mask = (1 << mantissa_bits) - 1
    one_bits = bias << mantissa_bits
    m_bits = builder.or_(builder.and_(bits, _const(ity, mantissa_mask)), _const(ity, one_bits))
    m = builder.bitcast(m_bits, ty)                                   # in [1, 2)
    big = _gt(builder, m, _const(ty, math.sqrt(2.0)))
    m = builder.select(big, builder.fmul(m, _const(ty, 0.5)), m)
    exponent = builder.select(big, builder.add(exponent, _const(ity, 1)), exponent)
    e = builder.sitofp(exponent, ty)
    e = builder.select(tiny, builder.fsub(e, _const(ty, mantissa_bits)), e)
    return m, e


def log(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """log(x) = e*ln2 + log(1+f) for ``x = (1+f) * 2**e`` with ``1+f`` in [sqrt(1/2), sqrt(2)).

    With ``s = f/(2+f)``: ``2s = f - s*f``, so ``log(1+f) = f - s*(f - R(s**2))``; the
    leading ``f`` is exact, the correction is small. ``e*ln2`` is added as an exact
    ``e*ln2_hi`` plus a small ``e*ln2_lo``::

        log(1.0) -> 0.0, log(0.0) -> -inf, log(-1.0) -> nan, log(inf) -> inf
    """
    ty, double = x.type, _is_double(x.type)
    m, e = _split_exponent(builder, x)
    f = builder.fsub(m, _const(ty, 1.0))
    s = builder.fdiv(f, builder.fadd(f, _const(ty, 2.0)))
    z = builder.fmul(s, s)
    series = builder.fmul(z, _horner(builder, z, _atanh_series(11 if double else 5)))
    log1p = builder.fsub(f, builder.fmul(s, builder.fsub(f, series)), flags=FLAGS)
    ln2_hi, ln2_lo = _ln2_split(double)
    low_part = builder.fadd(log1p, builder.fmul(e, _const(ty, ln2_lo)), flags=FLAGS)
    result = builder.fadd(builder.fmul(e, _const(ty, ln2_hi)), low_part)
    result = builder.select(builder.fcmp_ordered("==", x, _const(ty, math.inf)), x, result)
    result = builder.select(builder.fcmp_ordered("==", x, _const(ty, 0.0)),
                            _const(ty, -math.inf), result)
    negative_or_nan = builder.fcmp_unordered("<", x, _const(ty, 0.0))
    return builder.select(negative_or_nan, _const(ty, math.nan), result)


# -- tanh and sigmoid ---------------------------------------------------------------------
def _tanh_taylor(terms: int) -> list:
    """Coefficients ``c_k`` of ``tanh(x) = x * sum c_k x**(2k)``, derived exactly from
    ``tanh' = 1 - tanh**2`` (Taylor coefficients of y with y' = 1 - y**2, y(0) = 0)."""
    n = 2 * terms + 1
    y = [Fraction(0)] * (n + 1)
    y[1] = Fraction(1)
    for k in range(1, n):                       # (k+1) y[k+1] = [x**k](1 - y**2)
        square = sum(y[i] * y[k - i] for i in range(k + 1))
        y[k + 1] = ((1 if k == 0 else 0) - square) / (k + 1)
    return [float(y[2 * j + 1]) for j in range(terms)]


# Below this |x| tanh uses its odd Taylor series: 1 - e**(-2|x|) would cancel.
TANH_SERIES_LIMIT = 0.55


def tanh(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """tanh(x) = sign(x) * (1 - d) / (1 + d) with ``d = e**(-2|x|)`` (d underflows to 0
    for large |x|, giving exactly +-1), and the odd Taylor series ``x * P(x**2)`` for
    ``|x| < 0.55`` where ``1 - d`` would lose bits to cancellation::

        tanh(0.5) -> 0.46211717, tanh(inf) -> 1.0, tanh(-0.0) -> -0.0
    """
    ty, double = x.type, _is_double(x.type)
    magnitude = _intrinsic(builder, "llvm.fabs", [x])
    d = exp(builder, builder.fmul(magnitude, _const(ty, -2.0)))
    one = _const(ty, 1.0)
    large = builder.fdiv(builder.fsub(one, d), builder.fadd(one, d))
    large = _intrinsic(builder, "llvm.copysign", [large, x])
    squared = builder.fmul(x, x)
    small = builder.fmul(x, _horner(builder, squared, _tanh_taylor(19 if double else 10)))
    return builder.select(_lt(builder, magnitude, _const(ty, TANH_SERIES_LIMIT)), small, large)


def sigmoid(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """1 / (1 + e**(-x)) for x >= 0 and e**x / (1 + e**x) for x < 0, both from
    ``d = e**(-|x|)`` (never overflows, so very negative x still give their tiny
    subnormal results instead of 1/inf = 0)::

        sigmoid(0.0) -> 0.5, sigmoid(-100.0) -> 3.7e-44, sigmoid(nan) -> nan
    """
    one = _const(x.type, 1.0)
    d = exp(builder, builder.fneg(_intrinsic(builder, "llvm.fabs", [x])))
    numerator = builder.select(_lt(builder, x, _const(x.type, 0.0)), d, one)
    return builder.fdiv(numerator, builder.fadd(one, d))


# -- erf ----------------------------------------------------------------------------------
def _erf_taylor(terms: int) -> list:
    """``erf(x) = x * sum c_k x**(2k)``, ``c_k = 2/sqrt(pi) * (-1)**k / (k! (2k+1))``."""
    scale = 2.0 / math.sqrt(math.pi)
    return [scale * (-1) ** k / (math.factorial(k) * (2 * k + 1)) for k in range(terms)]


# Abramowitz & Stegun 7.1.26: erf(x) = 1 - t*P(t) e**(-x**2), t = 1/(1 + p x), x >= 0,
# absolute error below 1.5e-7 (relative below 2e-7 where it is used, x >= 1).
_AS_P = 0.3275911
_AS_COEFFICIENTS = [0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429]
# Below this |x| erf uses its Taylor series (14 terms: error ~1e-9 at |x| = 1).
ERF_SERIES_LIMIT = 1.0


def erf(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """float32 erf: the Taylor series for ``|x| < 1`` (accurate relative to small
    results), Abramowitz & Stegun 7.1.26 beyond (where erf >= 0.84, so its 1.5e-7
    absolute error is also small relative); the sign is copied from x::

        erf(0.5) -> 0.5204999, erf(inf) -> 1.0, erf(-3.0) -> -0.99997791
    """
    ty = x.type
    if _is_double(ty):
        raise CodegenError(f"vector_math.erf expects float32 values, found {ty}; float64 "
                           "erf is called from libm per lane")
    magnitude = _intrinsic(builder, "llvm.fabs", [x])
    one = _const(ty, 1.0)
    t = builder.fdiv(one, builder.fadd(one, builder.fmul(magnitude, _const(ty, _AS_P))))
    tail = builder.fmul(t, _horner(builder, t, _AS_COEFFICIENTS))
    gauss = exp(builder, builder.fneg(builder.fmul(magnitude, magnitude)))
    large = builder.fsub(one, builder.fmul(tail, gauss), flags=FLAGS)
    large = _intrinsic(builder, "llvm.copysign", [large, x])
    small = builder.fmul(x, _horner(builder, builder.fmul(x, x), _erf_taylor(14)))
    return builder.select(_lt(builder, magnitude, _const(ty, ERF_SERIES_LIMIT)), small, large)
