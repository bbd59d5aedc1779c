"""Expressions of the graph IR (Relax), with TVM's names.

Grammar::

    Expr    := Var(name_hint, struct_info) | DataflowVar(...)      binders (identity)
             | Constant(NDArray) | PrimValue(tir expr) | StringImm(str)
             | ShapeExpr([tir expr, ...]) | Tuple([Expr, ...]) | TupleGetItem(Expr, i)
             | Call(op | GlobalVar | ExternFunc | Var, [Expr, ...], attrs, sinfo_args)
             | If(cond, SeqExpr, SeqExpr) | SeqExpr([BindingBlock, ...], Expr)
             | Function([Var, ...], SeqExpr, ret_struct_info, attrs) | ExternFunc(symbol)
             | GlobalVar (from mlcbench.ir) | Op (from mlcbench.ir)
    BindingBlock  := BindingBlock([Binding, ...]) | DataflowBlock([Binding, ...])
    Binding       := VarBinding(var, value) | MatchCast(var, value, struct_info)

Every expression has ``struct_info``; for calls it is inferred when the call is made
(by the op's rule, see :mod:`mlcbench.relax.op`), so a shape error surfaces at once::

    >>> x = Var("x", TensorStructInfo((1, 784), "float32"))
    >>> w = Var("w", TensorStructInfo((784, 128), "float32"))
    >>> op.matmul(x, w).struct_info
    R.Tensor((1, 128), dtype="float32")
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..ir.errors import IRError
from ..ir.module import GlobalVar
from ..ir.node import UNSET, Node, defines, ignored, merge_attrs, node
from ..ir.op import Op
from ..tir.expr import PrimExpr, convert
from .struct_info import (FuncStructInfo, ObjectStructInfo, PrimStructInfo, ShapeStructInfo,
                          StructInfo, TensorStructInfo, TupleStructInfo, as_dim, unify)


class Expr(Node):
    """Base of Relax expressions. ``struct_info`` is derived once and cached."""

    @property
    def struct_info(self) -> StructInfo:
        cached = self.__dict__.get("_struct_info")
        if cached is None:
            cached = self._derive_struct_info()
            object.__setattr__(self, "_struct_info", cached)
        return cached

    def _derive_struct_info(self) -> StructInfo:
        return ObjectStructInfo()

    def __getitem__(self, index: int) -> "TupleGetItem":
        """``t[0]`` is ``TupleGetItem(t, 0)`` for a tuple-valued expression."""
        return TupleGetItem(self, index)

    def show(self) -> None:
        from ..ir.module import show_text
        show_text(self.script())

    @property
    def shape_(self):
        """The 2022 course's name for a tensor's shape: its ShapeExpr, None when unknown."""
        sinfo = self.struct_info
        return sinfo.shape if isinstance(sinfo, TensorStructInfo) else None

    @property
    def _checked_type_(self) -> StructInfo:
        """The 2022 course's type: ``DynTensorType(ndim, dtype)`` of a tensor (its struct
        info without the extents); other values give their struct info."""
        sinfo = self.struct_info
        if isinstance(sinfo, TensorStructInfo):
            return TensorStructInfo(dtype=sinfo.dtype, ndim=sinfo.ndim)
        return sinfo


def struct_info_of(value) -> StructInfo:
    """Struct info of a Relax expression, a GlobalVar or an Op (Object when unknown)."""
    return value.struct_info if isinstance(value, Expr) else ObjectStructInfo()


def _var_2022_struct_info(name: str, shape, type_annotation) -> StructInfo:
    """``Var(name, shape, DynTensorType(ndim, dtype))``, the 2022 form, as struct info."""
    if not isinstance(type_annotation, TensorStructInfo):
        raise IRError(f"Var {name!r}: the three-argument form is Var(name, shape, "
                      f"relax.DynTensorType(ndim, dtype)); its type was {type_annotation!r}")
    if shape is None:
        return type_annotation
    if not isinstance(shape, (tuple, list, ShapeExpr)):
        raise IRError(f"Var {name!r}: the shape of Var(name, shape, type) is a tuple of "
                      f"extents or None, found {shape!r}")
    try:
        return TensorStructInfo(shape, type_annotation.dtype, type_annotation.ndim)
    except IRError as err:
        raise IRError(f"Var {name!r}: {err}") from None


def _accept_2022_signature(cls):
    """Let ``cls`` also be built as ``cls(name, shape, type)``, as the 2022 course does."""
    generated = cls.__init__

    def __init__(self, name_hint="v", struct_info=None, type_annotation=None, **kwargs):
        if type_annotation is not None:
            struct_info = _var_2022_struct_info(name_hint, struct_info, type_annotation)
        generated(self, name_hint, struct_info, **kwargs)

    __init__.__doc__ = generated.__doc__
    cls.__init__ = __init__
    return cls


@_accept_2022_signature
@node(binder=True)
class Var(Expr):
    """A variable bound once (function parameter or binding); compared by identity."""
    name_hint: str = ignored("v")
    struct_info: StructInfo = None

    def __post_init__(self):
        if self.struct_info is None:
            object.__setattr__(self, "struct_info", ObjectStructInfo())
        if not isinstance(self.struct_info, StructInfo):
            raise IRError(f"Var {self.name_hint!r}: struct_info must be a StructInfo such as "
                          f"R.Tensor((1, 784), 'float32'), found {self.struct_info!r}")


@_accept_2022_signature
@node(binder=True)
class DataflowVar(Var):
    """A variable local to a dataflow block (not visible after ``R.output``)."""


def _constant_content(array: np.ndarray) -> tuple:
    return (str(array.dtype), array.shape, array.tobytes())


@node
class Constant(Expr):
    """A tensor constant holding an NDArray; compared by dtype, shape and bytes."""
    data: Any = ignored(None)
    content: tuple = dataclasses.field(init=False, default=())

    def __post_init__(self):
        from ..runtime import ndarray
        data = self.data
        if not isinstance(data, ndarray.NDArray):
            data = ndarray.array(np.asarray(data))
            object.__setattr__(self, "data", data)
        object.__setattr__(self, "content", _constant_content(data.numpy()))

    def _derive_struct_info(self):
        array = self.data.numpy()
        return TensorStructInfo(array.shape, str(self.data.dtype))


@node
class PrimValue(Expr):
    """A TIR scalar as a Relax value: ``R.prim_value(T.int64(3))``."""
    value: PrimExpr

    def __post_init__(self):
        if not isinstance(self.value, PrimExpr):
            object.__setattr__(self, "value", convert(self.value, "int64")
                               if isinstance(self.value, int) else convert(self.value))

    def _derive_struct_info(self):
        return PrimStructInfo(self.value.dtype)


@node
class StringImm(Expr):
    value: str

    def _derive_struct_info(self):
        return ObjectStructInfo()


@node
class ShapeExpr(Expr):
    """A shape value ``R.shape([1, n])``; its dimensions are int64 TIR expressions."""
    values: tuple

    def __post_init__(self):
        object.__setattr__(self, "values", tuple(as_dim(v) for v in self.values))

    def _derive_struct_info(self):
        return ShapeStructInfo(self.values)

    def __len__(self):
        return len(self.values)

    def __iter__(self):
        return iter(self.values)

    def __getitem__(self, index):
        return self.values[index]


@node
class Tuple(Expr):
    fields: tuple

    def __post_init__(self):
        object.__setattr__(self, "fields", tuple(self.fields))

    def _derive_struct_info(self):
        return TupleStructInfo([struct_info_of(f) for f in self.fields])

    def __len__(self):
        return len(self.fields)


@node
class TupleGetItem(Expr):
    tuple_value: Expr
    index: int

    def __post_init__(self):
        sinfo = struct_info_of(self.tuple_value)
        if isinstance(sinfo, TupleStructInfo) and not 0 <= self.index < len(sinfo.fields):
            raise IRError(f"TupleGetItem: index {self.index} is out of range for a tuple of "
                          f"{len(sinfo.fields)} fields")

    def _derive_struct_info(self):
        sinfo = struct_info_of(self.tuple_value)
        if isinstance(sinfo, TupleStructInfo):
            return sinfo.fields[self.index]
        return ObjectStructInfo()


@node
class ExternFunc(Expr):
    """A packed function looked up by name at run time (``env.relu``)."""
    global_symbol: str

    def _derive_struct_info(self):
        return FuncStructInfo((), ObjectStructInfo(), purity=False)


class Attrs(dict):
    """Call attributes, readable as fields (``call.attrs.axis``) as in TVM."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"attrs have no field {name!r}; fields: {sorted(self)}") from None


@node
class Call(Expr):
    """``op(*args)``: an Op of the registry, a GlobalVar, an ExternFunc or a function var.

    ``sinfo_args`` give the result's struct info where it cannot be inferred
    (``call_tir``'s ``out_sinfo``, calls of packed functions).
    """
    op: Any
    args: tuple = ()
    attrs: Any = None
    sinfo_args: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "attrs", Attrs(self.attrs or {}))
        object.__setattr__(self, "sinfo_args", tuple(self.sinfo_args or ()))
        self.struct_info          # infer now, so errors point at the construction

    def _derive_struct_info(self):
        if isinstance(self.op, Op):
            # the op modules build Calls, so the registry imports this module, not back
            from .op.registry import infer_struct_info
            return infer_struct_info(self)
        if self.sinfo_args:
            return self.sinfo_args[0] if len(self.sinfo_args) == 1 \
                else TupleStructInfo(self.sinfo_args)
        callee = struct_info_of(self.op)
        if isinstance(callee, FuncStructInfo):
            return callee.ret
        return ObjectStructInfo()


@node
class If(Expr):
    cond: Expr
    true_branch: Expr
    false_branch: Expr

    def _derive_struct_info(self):
        return unify(struct_info_of(self.true_branch), struct_info_of(self.false_branch))


@node
class VarBinding(Node):
    var: Var = defines()
    value: Expr


@node
class MatchCast(Node):
    """Bind ``var`` to ``value``, checking at run time that it has ``struct_info``."""
    var: Var = defines()
    value: Expr = None
    struct_info: StructInfo = None


@node
class BindingBlock(Node):
    bindings: tuple

    def __post_init__(self):
        object.__setattr__(self, "bindings", tuple(self.bindings))


@node
class DataflowBlock(BindingBlock):
    """Bindings without side effects; only their outputs are seen after the block."""


@node
class SeqExpr(Expr):
    blocks: tuple
    body: Expr

    def __post_init__(self):
        object.__setattr__(self, "blocks", tuple(self.blocks))

    def _derive_struct_info(self):
        return struct_info_of(self.body)


@node
class Function(Expr):
    """A Relax function. ``attrs`` holds ``global_symbol`` and friends."""
    ir_level = "relax"

    params: tuple = defines()
    body: Expr
    ret_struct_info: StructInfo = None
    is_pure: bool = True
    attrs: dict = None

    def __post_init__(self):
        object.__setattr__(self, "params", tuple(self.params))
        if self.ret_struct_info is None:
            object.__setattr__(self, "ret_struct_info", struct_info_of(self.body))
        object.__setattr__(self, "attrs", dict(self.attrs or {}))

    def _derive_struct_info(self):
        return FuncStructInfo([p.struct_info for p in self.params], self.ret_struct_info,
                              self.is_pure)

    def with_attr(self, key_or_dict, value=UNSET) -> "Function":
        """A copy with attributes set: a key and a value, or one dict (as in TVM)."""
        return self.replace(attrs=merge_attrs(self.attrs, key_or_dict, value,
                                              "Function.with_attr"))

    def with_attrs(self, attrs: dict) -> "Function":
        return self.replace(attrs=merge_attrs(self.attrs, attrs, where="Function.with_attrs"))

    def without_attr(self, key: str) -> "Function":
        return self.replace(attrs={k: v for k, v in self.attrs.items() if k != key})


def const(value, dtype: str | None = None) -> Constant:
    """A tensor constant: ``const(1.0)`` (float32 scalar), ``const(np_array)``,
    ``const([1, 2], "int64")``. Python floats default to float32, ints to int32.
    The 2022 course passes a type, ``const(w, relax.DynTensorType(2, "float32"))``: its
    dtype is used."""
    from ..runtime import ndarray
    if isinstance(dtype, TensorStructInfo):
        dtype = dtype.dtype or None
    if isinstance(value, ndarray.NDArray):
        value = value.numpy()
    if dtype is None and not isinstance(value, np.ndarray):
        sample = np.asarray(value)
        dtype = {"f": "float32", "i": "int32", "b": "bool"}.get(sample.dtype.kind)
    array = np.asarray(value, dtype=dtype)
    return Constant(ndarray.array(array))


def is_leaf(expr) -> bool:
    """Leaves may appear as call arguments in normal form (no nested computation)."""
    return isinstance(expr, (Var, Constant, PrimValue, StringImm, ShapeExpr, ExternFunc,
                             GlobalVar, Op, Function)) or (
        isinstance(expr, Tuple) and all(is_leaf(f) for f in expr.fields))


__all__ = ["Attrs", "BindingBlock", "Call", "Constant", "DataflowBlock", "DataflowVar",
           "Expr", "ExternFunc", "Function", "GlobalVar", "If", "MatchCast", "Op",
           "PrimValue", "SeqExpr", "ShapeExpr", "StringImm", "Tuple", "TupleGetItem", "Var",
           "VarBinding", "const", "is_leaf", "struct_info_of"]
