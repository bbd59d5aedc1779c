"""Mapping TIR dtypes to LLVM types, constants and conversions.

``float32`` -> ``float``, ``int64`` -> ``i64``, ``bool`` -> ``i1`` in registers but
``i8`` in memory (numpy stores one byte per bool), ``float32x16`` -> ``<16 x float>``.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.dtype import DataType, dtype as as_dtype
from ...ir.errors import CodegenError

POINTER = ir.PointerType()
I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
_FLOATS = {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}
FLOAT_FLAGS = ("contract",)   # lets LLVM fuse a*b+c into FMA without changing NaN/inf rules


def scalar_type(dt: DataType) -> ir.Type:
    """Register type of one lane of ``dt``."""
    if dt.is_float:
        return _FLOATS[dt.bits]
    if dt.is_handle:
        return POINTER
    return ir.IntType(dt.bits)


def value_type(dt) -> ir.Type:
    """Register type of ``dt`` (a vector type for ``float32x16``)."""
    dt = as_dtype(dt)
    elem = scalar_type(dt.element)
    return ir.VectorType(elem, dt.lanes) if dt.lanes > 1 else elem


def memory_type(dt) -> ir.Type:
    """Type of one element as stored in a buffer (bool is a byte)."""
    dt = as_dtype(dt)
    return I8 if dt.is_bool else scalar_type(dt)


def constant(dt, value) -> ir.Constant:
    """An LLVM constant of ``dt`` (vectors splat the value)."""
    dt = as_dtype(dt)
    elem = scalar_type(dt.element)
    if dt.is_float:
        value = float(value)
    elif dt.is_bool:
        value = int(bool(value))
    else:
        # A negative value for an unsigned type keeps its two's-complement bits, as in C.
        value = int(value) & ((1 << dt.bits) - 1) if int(value) < 0 and dt.is_uint else int(value)
    scalar = ir.Constant(elem, value)
    if dt.lanes > 1:
        return ir.Constant(ir.VectorType(elem, dt.lanes), [scalar] * dt.lanes)
    return scalar


def is_vector(value: ir.Value) -> bool:
    return isinstance(value.type, ir.VectorType)


def lanes_of(value: ir.Value) -> int:
    return value.type.count if is_vector(value) else 1


def broadcast(builder: ir.IRBuilder, value: ir.Value, lanes: int) -> ir.Value:
    """Splat a scalar into ``lanes`` lanes (insertelement + shufflevector)."""
    if lanes == 1 or is_vector(value):
        return value
    vec_type = ir.VectorType(value.type, lanes)
    single = builder.insert_element(ir.Constant(vec_type, None), value, ir.Constant(I32, 0))
    mask = ir.Constant(ir.VectorType(I32, lanes), [0] * lanes)
    return builder.shuffle_vector(single, ir.Constant(vec_type, None), mask)


def convert(builder: ir.IRBuilder, value: ir.Value, src: DataType, dst: DataType) -> ir.Value:
    """Numeric conversion with C semantics, lane-wise for vectors.

    ``src``/``dst`` may differ in lanes only when ``src`` is a scalar (then it is
    broadcast after converting).
    """
    src, dst = as_dtype(src), as_dtype(dst)
    if src.lanes == 1 and dst.lanes > 1:
        scalar = convert(builder, value, src, dst.element)
        return broadcast(builder, scalar, dst.lanes)
    if src.lanes != dst.lanes:
        raise CodegenError(f"cannot cast {src} to {dst}: lane counts differ")
    if src == dst:
        return value
    target = value_type(dst)
    s, d = src.element, dst.element
    if d.is_bool:
        zero = ir.Constant(value.type, None)
        # NaN converts to true, as in C (NaN != 0).
        return builder.fcmp_unordered("!=", value, zero) if s.is_float \
            else builder.icmp_unsigned("!=", value, zero)
    if s.is_float and d.is_float:
        if s.bits == d.bits:
            return value
        return builder.fpext(value, target) if d.bits > s.bits else builder.fptrunc(value, target)
    if s.is_float:
        return builder.fptosi(value, target) if d.is_int else builder.fptoui(value, target)
    signed = s.is_int
    if d.is_float:
        return builder.sitofp(value, target) if signed else builder.uitofp(value, target)
    if s.bits == d.bits:
        return value
    if d.bits < s.bits:
        return builder.trunc(value, target)
    return builder.sext(value, target) if signed else builder.zext(value, target)


def to_memory(builder: ir.IRBuilder, value: ir.Value, dt: DataType) -> ir.Value:
    """Register value -> the form stored in memory (``i1`` -> ``i8`` for bools)."""
    if as_dtype(dt).is_bool:
        lanes = as_dtype(dt).lanes
        return builder.zext(value, ir.VectorType(I8, lanes) if lanes > 1 else I8)
    return value


def from_memory(builder: ir.IRBuilder, value: ir.Value, dt: DataType) -> ir.Value:
    """Loaded value -> register form (``i8`` -> ``i1`` for bools)."""
    if as_dtype(dt).is_bool:
        return builder.icmp_unsigned("!=", value, ir.Constant(value.type, None))
    return value
