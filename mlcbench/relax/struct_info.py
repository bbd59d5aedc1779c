"""Struct info: what the graph IR knows about a value before it runs.

Grammar::

    StructInfo := ObjectStructInfo()                      anything
                | PrimStructInfo(dtype)                    one scalar
                | ShapeStructInfo(values | None, ndim)     a shape value
                | TensorStructInfo(shape | None, dtype, ndim)
                | TupleStructInfo([StructInfo, ...])
                | FuncStructInfo([StructInfo, ...], ret)

A tensor's shape is a :class:`~mlcbench.relax.ShapeExpr` whose dimensions are int64
TIR expressions; a symbolic dimension is a ``tir.Var`` shared by every tensor that has
that extent, so ``(n, 784) @ (784, 128)`` is known to give ``(n, 128)``::

    >>> TensorStructInfo((1, 784), "float32")
    R.Tensor((1, 784), dtype="float32")
"""
from __future__ import annotations

from ..ir.dtype import dtype as as_dtype
from ..ir.errors import IRError
from ..ir.node import Node, node
from ..tir.expr import IntImm, PrimExpr, Var as TIRVar


class StructInfo(Node):
    """Base of every struct info."""


def as_dim(value) -> PrimExpr:
    """A shape dimension as an int64 expression: ``3`` -> ``T.int64(3)``."""
    if isinstance(value, IntImm):
        return value if value.dtype == "int64" else IntImm("int64", value.value)
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise IRError(f"a shape dimension is an int or a tir expression, found {value!r}")
    return IntImm("int64", int(value))


@node
class ObjectStructInfo(StructInfo):
    """Nothing is known: any runtime object."""


@node
class PrimStructInfo(StructInfo):
    dtype: str = "int64"

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype))


@node
class ShapeStructInfo(StructInfo):
    """A shape value; ``values`` are its dimensions when known."""
    values: tuple | None = None
    ndim: int = -1

    def __post_init__(self):
        if self.values is not None:
            object.__setattr__(self, "values", tuple(as_dim(v) for v in self.values))
            object.__setattr__(self, "ndim", len(self.values))


@node
class TensorStructInfo(StructInfo):
    """A tensor of ``dtype`` with ``shape`` (a ShapeExpr, or None when unknown).

    ``TensorStructInfo((1, 784), "float32")``; ``TensorStructInfo(dtype="float32",
    ndim=2)`` is a matrix of unknown extents; ``dtype=""`` means any dtype.
    """
    shape: object = None
    dtype: str = "float32"
    ndim: int = -1

    def __post_init__(self):
        from .expr import ShapeExpr, Var
        shape = self.shape
        if shape is not None and not isinstance(shape, (ShapeExpr, Var)):
            shape = ShapeExpr(shape)
            object.__setattr__(self, "shape", shape)
        if isinstance(shape, ShapeExpr):
            if self.ndim not in (-1, len(shape.values)):
                raise IRError(f"TensorStructInfo: shape {shape.values} has {len(shape.values)} "
                              f"dimensions, but ndim={self.ndim}")
            object.__setattr__(self, "ndim", len(shape.values))
        object.__setattr__(self, "dtype", as_dtype(self.dtype) if self.dtype else "")

    @property
    def dims(self) -> tuple | None:
        """The dimensions as a tuple of PrimExprs, or None when the shape is unknown."""
        shape = self.shape
        return tuple(shape.values) if hasattr(shape, "values") else None

    def static_shape(self) -> tuple | None:
        """The shape as Python ints when every dimension is a constant."""
        dims = self.dims
        if dims is None or not all(isinstance(d, IntImm) for d in dims):
            return None
        return tuple(d.value for d in dims)


@node
class TupleStructInfo(StructInfo):
    fields: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "fields", tuple(self.fields))


@node
class FuncStructInfo(StructInfo):
    """A function taking ``params`` and returning ``ret``."""
    params: tuple = ()
    ret: StructInfo = None
    purity: bool = True

    def __post_init__(self):
        object.__setattr__(self, "params", tuple(self.params))
        if self.ret is None:
            object.__setattr__(self, "ret", ObjectStructInfo())


# -- helpers ------------------------------------------------------------------------------

def dim_equal(a: PrimExpr, b: PrimExpr) -> bool:
    """True when two dimensions are provably equal (same constant or same variable)."""
    if a is b:
        return True
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value == b.value
    if isinstance(a, TIRVar) or isinstance(b, TIRVar) or isinstance(a, IntImm) \
            or isinstance(b, IntImm):
        return False
    from ..arith.analyzer import Analyzer
    return Analyzer().can_prove_equal(a, b)


def dim_text(dim: PrimExpr) -> str:
    """A dimension as people write it: ``3``, ``n``, ``n * 2``."""
    if isinstance(dim, IntImm):
        return str(dim.value)
    if isinstance(dim, TIRVar):
        return dim.name
    return dim.script().replace("T.int64(", "(")


def shape_text(dims) -> str:
    return "(" + ", ".join(dim_text(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def describe(sinfo: StructInfo) -> str:
    """Short text for error messages: ``Tensor((1, 784), float32)``."""
    if isinstance(sinfo, TensorStructInfo):
        shape = shape_text(sinfo.dims) if sinfo.dims is not None else f"ndim={sinfo.ndim}"
        return f"Tensor({shape}, {sinfo.dtype or 'any dtype'})"
    return type(sinfo).__name__.replace("StructInfo", "")


def struct_info_equal(a: StructInfo, b: StructInfo) -> bool:
    """Equality of two struct infos, symbolic dimensions compared by identity."""
    if type(a) is not type(b):
        return False
    if isinstance(a, TensorStructInfo):
        if a.dtype != b.dtype or a.ndim != b.ndim:
            return False
        if a.dims is None or b.dims is None:
            return a.dims is None and b.dims is None
        return all(dim_equal(x, y) for x, y in zip(a.dims, b.dims))
    if isinstance(a, TupleStructInfo):
        return len(a.fields) == len(b.fields) and all(
            struct_info_equal(x, y) for x, y in zip(a.fields, b.fields))
    if isinstance(a, ShapeStructInfo):
        if a.values is None or b.values is None:
            return a.values is None and b.values is None and a.ndim == b.ndim
        return len(a.values) == len(b.values) and all(
            dim_equal(x, y) for x, y in zip(a.values, b.values))
    if isinstance(a, PrimStructInfo):
        return a.dtype == b.dtype
    if isinstance(a, FuncStructInfo):
        return len(a.params) == len(b.params) and struct_info_equal(a.ret, b.ret) and all(
            struct_info_equal(x, y) for x, y in zip(a.params, b.params))
    return True


def unify(a: StructInfo, b: StructInfo) -> StructInfo:
    """The most precise struct info that covers both (used for the two arms of an If)."""
    if struct_info_equal(a, b):
        return a
    if isinstance(a, TensorStructInfo) and isinstance(b, TensorStructInfo):
        dtype = a.dtype if a.dtype == b.dtype else ""
        return TensorStructInfo(None, dtype, a.ndim if a.ndim == b.ndim else -1)
    return ObjectStructInfo()
