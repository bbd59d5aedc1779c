"""TensorIR expressions.

Grammar::

    PrimExpr := IntImm(value) | FloatImm(value) | StringImm(value) | Var(name)
              | BinaryOp(a, b)            Add Sub Mul Div Mod FloorDiv FloorMod Min Max
              | CmpOp(a, b)               EQ NE LT LE GT GE            (dtype bool)
              | And(a, b) | Or(a, b) | Not(a)
              | Select(condition, true_value, false_value)
              | Cast(value)  | BufferLoad(buffer, indices)
              | Ramp(base, stride, lanes) | Broadcast(value, lanes)  (vector lowering)
              | Call(op, args)            intrinsics: tir.exp, tir.sqrt, tir.call_extern, ...
              | Let(var, value, body)

Every expression carries ``dtype``. Python operators build nodes (folding constants),
so ``i * 4 + j`` is an ``Add(Mul(i, 4), j)``. ``==`` builds ``EQ``, whose truth value
is exact for constants and identity for anything else, like TVM.
"""
from __future__ import annotations

import math
import operator
from typing import Any

from ..ir.dtype import DataType, dtype as as_dtype
from ..ir.errors import IRError
from ..ir.node import Node, defines, ignored, node


class PrimExpr(Node):
    """Base of scalar (or vector) expressions."""

    dtype: DataType

    # arithmetic -----------------------------------------------------------------------
    def __add__(self, other): return _binary(Add, self, other)
    def __radd__(self, other): return _binary(Add, other, self)
    def __sub__(self, other): return _binary(Sub, self, other)
    def __rsub__(self, other): return _binary(Sub, other, self)
    def __mul__(self, other): return _binary(Mul, self, other)
    def __rmul__(self, other): return _binary(Mul, other, self)
    def __truediv__(self, other): return _binary(Div, self, other)
    def __rtruediv__(self, other): return _binary(Div, other, self)
    def __floordiv__(self, other): return _binary(FloorDiv, self, other)
    def __rfloordiv__(self, other): return _binary(FloorDiv, other, self)
    def __mod__(self, other): return _binary(FloorMod, self, other)
    def __rmod__(self, other): return _binary(FloorMod, other, self)
    def __neg__(self): return _binary(Sub, _zero_like(self), self)
    # comparisons ----------------------------------------------------------------------
    def __lt__(self, other): return _binary(LT, self, other)
    def __le__(self, other): return _binary(LE, self, other)
    def __gt__(self, other): return _binary(GT, self, other)
    def __ge__(self, other): return _binary(GE, self, other)
    def __eq__(self, other): return _binary(EQ, self, other)   # type: ignore[override]
    def __ne__(self, other): return _binary(NE, self, other)   # type: ignore[override]
    __hash__ = Node.__hash__
    # logic ----------------------------------------------------------------------------
    def __and__(self, other): return _binary(And, self, other)
    def __rand__(self, other): return _binary(And, other, self)
    def __or__(self, other): return _binary(Or, self, other)
    def __ror__(self, other): return _binary(Or, other, self)
    def __invert__(self): return Not(self)

    def __bool__(self):
        raise IRError(f"the truth value of the symbolic expression `{self.script()}` is unknown; "
                      "use T.if_then_else / T.Select or compare constants")

    def astype(self, target) -> "PrimExpr":
        return cast(target, self)


# -- leaves ---------------------------------------------------------------------------

@node
class IntImm(PrimExpr):
    dtype: DataType
    value: int

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype))
        object.__setattr__(self, "value", int(self.value))

    def __int__(self): return self.value
    def __index__(self): return self.value
    def __bool__(self): return bool(self.value)


@node
class FloatImm(PrimExpr):
    dtype: DataType
    value: float

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype))
        object.__setattr__(self, "value", float(self.value))

    def __float__(self): return self.value
    def __bool__(self): return bool(self.value)


@node
class StringImm(PrimExpr):
    value: str
    dtype: DataType = as_dtype("handle")


@node(binder=True)
class Var(PrimExpr):
    """A variable. Identity matters: the name is only a hint for printing."""

    name: str = ignored("v")
    dtype: DataType = as_dtype("int32")
    type_annotation: Any = ignored(None)   # for handles: the pointee dtype, when known

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype))

    @property
    def name_hint(self) -> str:
        return self.name


class SizeVar(Var):
    """A variable known to be non-negative (a symbolic shape)."""


SizeVar = node(binder=True)(SizeVar)


# -- operators ------------------------------------------------------------------------

class BinaryOp(PrimExpr):
    a: PrimExpr
    b: PrimExpr


def _binop(name: str, py_op, result_bool: bool = False):
    cls = type(name, (BinaryOp,), {"__annotations__": {"a": PrimExpr, "b": PrimExpr,
                                                       "dtype": DataType}})
    cls = node(cls)
    cls.py_op = staticmethod(py_op)
    cls.result_bool = result_bool
    return cls


def _c_div(x, y):
    if isinstance(x, float) or isinstance(y, float):
        return x / y
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _c_mod(x, y):
    if isinstance(x, float) or isinstance(y, float):
        import math
        return math.fmod(x, y)
    return x - _c_div(x, y) * y


def _floordiv(x, y):
    if isinstance(x, float) or isinstance(y, float):
        import math
        return float(math.floor(x / y))
    return x // y


Add = _binop("Add", operator.add)
Sub = _binop("Sub", operator.sub)
Mul = _binop("Mul", operator.mul)
Div = _binop("Div", _c_div)            # truncating for integers, true division for floats
Mod = _binop("Mod", _c_mod)            # truncating remainder (C semantics)
FloorDiv = _binop("FloorDiv", _floordiv)
FloorMod = _binop("FloorMod", operator.mod)
def _float_aware(pick):
    """Fold min/max as the generated code computes them (llvm.minimum/maximum): a NaN
    operand gives NaN, and -0.0 counts as less than +0.0."""
    def fold(x, y):
        if not (isinstance(x, float) or isinstance(y, float)):
            return pick(x, y)
        if x != x or y != y:
            return float("nan")
        if x == y == 0:
            return pick(float(x), float(y), key=lambda v: math.copysign(1.0, v))
        return pick(x, y)
    return fold


Min = _binop("Min", _float_aware(min))
Max = _binop("Max", _float_aware(max))
EQ = _binop("EQ", operator.eq, True)
NE = _binop("NE", operator.ne, True)
LT = _binop("LT", operator.lt, True)
LE = _binop("LE", operator.le, True)
GT = _binop("GT", operator.gt, True)
GE = _binop("GE", operator.ge, True)
And = _binop("And", lambda x, y: bool(x) and bool(y), True)
Or = _binop("Or", lambda x, y: bool(x) or bool(y), True)

ARITH_OPS = (Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max)
CMP_OPS = (EQ, NE, LT, LE, GT, GE)


def _eq_bool(self):
    """``a == b`` is a Python bool when it can be decided without symbols: constants
    compare by value, anything else by identity (as TVM's ``EqualOp``)."""
    a, b = self.a, self.b
    if isinstance(a, (IntImm, FloatImm)) and isinstance(b, (IntImm, FloatImm)):
        return a.value == b.value
    return a is b


EQ.__bool__ = _eq_bool
NE.__bool__ = lambda self: not _eq_bool(self)


@node
class Not(PrimExpr):
    a: PrimExpr
    dtype: DataType = as_dtype("bool")


@node
class Select(PrimExpr):
    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr
    dtype: DataType = None

    def __post_init__(self):
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.true_value.dtype)


@node
class Cast(PrimExpr):
    dtype: DataType
    value: PrimExpr

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype))


@node
class BufferLoad(PrimExpr):
    buffer: Any            # tir.Buffer
    indices: tuple
    dtype: DataType = None

    def __post_init__(self):
        object.__setattr__(self, "indices", tuple(convert(i) for i in self.indices))
        if self.dtype is None:
            lanes = max((i.dtype.lanes for i in self.indices), default=1)
            object.__setattr__(self, "dtype", self.buffer.dtype.with_lanes(
                lanes * self.buffer.dtype.lanes))


@node
class Ramp(PrimExpr):
    """The vector ``[base, base + stride, ..., base + (lanes-1) * stride]``."""
    base: PrimExpr
    stride: PrimExpr
    lanes: int
    dtype: DataType = None

    def __post_init__(self):
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.base.dtype.with_lanes(self.lanes))


@node
class Broadcast(PrimExpr):
    value: PrimExpr
    lanes: int
    dtype: DataType = None

    def __post_init__(self):
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.value.dtype.with_lanes(self.lanes))


@node
class Call(PrimExpr):
    """An intrinsic call. ``op`` is a name such as ``"tir.exp"`` or ``"tir.call_extern"``."""
    dtype: DataType
    op: str
    args: tuple

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype))
        object.__setattr__(self, "args", tuple(convert(a) if not isinstance(a, str) else
                                               StringImm(a) for a in self.args))


@node
class Let(PrimExpr):
    var: Var = defines()
    value: PrimExpr
    body: PrimExpr
    dtype: DataType = None

    def __post_init__(self):
        if self.dtype is None:
            object.__setattr__(self, "dtype", self.body.dtype)


@node
class Range(Node):
    """The half-open interval ``[min, min + extent)``."""
    min: PrimExpr
    extent: PrimExpr

    def __post_init__(self):
        object.__setattr__(self, "min", convert(self.min))
        object.__setattr__(self, "extent", convert(self.extent, self.min.dtype))

    @staticmethod
    def from_min_extent(min_value, extent) -> "Range":
        return Range(min_value, extent)


# -- construction helpers -------------------------------------------------------------

def const(value, dtype=None) -> PrimExpr:
    """A constant of ``dtype`` (default: int32 for ints, float32 for floats, bool for bools)."""
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, int):
            dtype = "int32" if -2**31 <= value < 2**31 else "int64"
        else:
            dtype = "float32"
    dt = as_dtype(dtype)
    if dt.is_vector:
        return Broadcast(const(value, dt.element), dt.lanes)
    if dt.is_float:
        return FloatImm(dt, float(value))
    return IntImm(dt, int(value))


def convert(value, dtype=None) -> PrimExpr:
    """Turn Python numbers into immediates; leave expressions alone."""
    if isinstance(value, PrimExpr):
        return value
    value = _iter_var_as_var(value)
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, (bool, int, float)):
        return const(value, dtype)
    if hasattr(value, "dtype") and hasattr(value, "item"):        # numpy scalar
        return const(value.item(), str(value.dtype) if dtype is None else dtype)
    raise IRError(f"expected an expression or a number, found {type(value).__name__}: {value!r}")


def _zero_like(x: PrimExpr) -> PrimExpr:
    return const(0, x.dtype)


def _iter_var_as_var(value):
    """An IterVar (a te axis) stands for its variable in expressions, as in TVM."""
    var = getattr(value, "var", None)
    return var if isinstance(var, Var) and not isinstance(value, PrimExpr) else value


def _match_dtypes(a, b):
    """Convert Python numbers to the other operand's dtype (TVM's implicit promotion)."""
    a, b = _iter_var_as_var(a), _iter_var_as_var(b)
    if not isinstance(a, PrimExpr) and isinstance(b, PrimExpr):
        a = _const_for(a, b.dtype)
    elif not isinstance(b, PrimExpr) and isinstance(a, PrimExpr):
        b = _const_for(b, a.dtype)
    a, b = convert(a), convert(b)
    if a.dtype != b.dtype:
        a, b = _promote(a, b)
    return a, b


def _const_for(value, dt: DataType) -> PrimExpr:
    if isinstance(value, float) and not dt.is_float:
        return const(value, "float32")
    if dt.is_bool and not isinstance(value, bool):
        return const(value)
    return const(value, dt)


def _promote(a: PrimExpr, b: PrimExpr):
    da, db = a.dtype, b.dtype
    if da.lanes != db.lanes:
        if da.lanes == 1:
            a = Broadcast(a, db.lanes)
        elif db.lanes == 1:
            b = Broadcast(b, da.lanes)
        else:
            raise IRError(f"cannot combine vectors of {da.lanes} and {db.lanes} lanes")
        da, db = a.dtype, b.dtype
    if da.element == db.element:
        return a, b
    ea, eb = da.element, db.element
    if ea.is_float != eb.is_float:
        target = ea if ea.is_float else eb
    elif ea.is_bool != eb.is_bool:
        target = eb if ea.is_bool else ea
    else:
        target = ea if ea.bits >= eb.bits else eb
    target = target.with_lanes(da.lanes)
    return (a if da == target else cast(target, a)), (b if db == target else cast(target, b))


def _fold(cls, a: PrimExpr, b: PrimExpr):
    if isinstance(a, (IntImm, FloatImm)) and isinstance(b, (IntImm, FloatImm)):
        if cls in (Div, Mod, FloorDiv, FloorMod) and b.value == 0:
            raise IRError(f"division by zero in constant expression {cls.__name__}({a.value}, 0)")
        value = cls.py_op(a.value, b.value)
        return const(bool(value), "bool") if cls.result_bool else const(value, a.dtype)
    return None


def _binary(cls, a, b) -> PrimExpr:
    a, b = _match_dtypes(a, b)
    if cls in (And, Or):
        return cls(a, b, as_dtype("bool").with_lanes(a.dtype.lanes))
    folded = _fold(cls, a, b)
    if folded is not None:
        return folded
    if cls.result_bool:
        return cls(a, b, as_dtype("bool").with_lanes(a.dtype.lanes))
    return cls(a, b, a.dtype)


def binary(cls, a, b) -> PrimExpr:
    """Build ``cls(a, b)`` with dtype promotion and constant folding."""
    return _binary(cls, a, b)


def cast(dtype, value) -> PrimExpr:
    value = convert(value)
    dt = as_dtype(dtype)
    if value.dtype == dt:
        return value
    if isinstance(value, IntImm) and not dt.is_vector:
        return const(value.value if not dt.is_float else float(value.value), dt)
    if isinstance(value, FloatImm) and not dt.is_vector:
        return const(value.value if dt.is_float else int(value.value), dt)
    return Cast(dt, value)


def is_const_int(expr, value=None) -> bool:
    if not isinstance(expr, IntImm):
        return False
    return value is None or expr.value == value
