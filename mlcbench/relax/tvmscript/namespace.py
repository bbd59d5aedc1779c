"""The ``R`` namespace of TVMScript: ``from mlcbench.script import relax as R``.

Struct info (``R.Tensor((1, "n"), "float32")``, ``R.Tuple``, ``R.Shape``, ``R.Object``),
statements the parser reads (``R.dataflow``, ``R.output``, ``R.func_attr``), values
(``R.const``, ``R.shape``, ``R.prim_value``) and every op of the registry under its
TVMScript name (``R.add``, ``R.matmul``, ``R.nn.relu``, ``R.call_tir`` ...).

A string dimension names a symbolic extent; inside one ``@R.function`` the same name is
the same ``tir.Var``.
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import sys
import threading

from ...ir.errors import IRError
from ...script.parser.source import parse_python
from ...tir.expr import IntImm, PrimExpr, Var as TIRVar
from .. import expr as rx
from ..op import *  # noqa: F401,F403 -- every op, as R.add, R.matmul ...
from ..op import builtin, nn  # noqa: F401
from ..op import base as _base
from ..op.base import call_pure_packed  # noqa: F401
from ..struct_info import (FuncStructInfo, ObjectStructInfo, PrimStructInfo, ShapeStructInfo,
                           TensorStructInfo, TupleStructInfo)

_SCOPE = threading.local()


@contextlib.contextmanager
def symbolic_scope(table: dict):
    """While parsing one function, string dimensions resolve through ``table``."""
    stack = _SCOPE.__dict__.setdefault("stack", [])
    stack.append(table)
    try:
        yield table
    finally:
        stack.pop()


def _symbol(name: str) -> TIRVar:
    stack = getattr(_SCOPE, "stack", None)
    table = stack[-1] if stack else {}
    if name not in table:
        table[name] = TIRVar(name, "int64")
    return table[name]


def _evaluate_dim_text(text: str) -> PrimExpr:
    """``"n"`` or ``"n * 2 + 1"`` as an int64 expression of the function's symbols."""
    tree = parse_python(text.strip(), mode="eval").body

    def ev(node):
        if isinstance(node, ast.Name):
            return _symbol(node.id)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return IntImm("int64", node.value)
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("T.int64", "int64"):
            return IntImm("int64", node.args[0].value)
        if isinstance(node, ast.BinOp):
            ops = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__",
                   ast.FloorDiv: "__floordiv__", ast.Mod: "__mod__"}
            if type(node.op) in ops:
                return getattr(ev(node.left), ops[type(node.op)])(ev(node.right))
        raise IRError(f"symbolic dimension {text!r}: expected a name or arithmetic of "
                      "names and ints")
    return ev(tree)


def _dim(value):
    return _evaluate_dim_text(value) if isinstance(value, builtins.str) else value


# -- struct info ---------------------------------------------------------------------------

class _TensorFactory:
    """``R.Tensor((1, 784), "float32")``; bare ``R.Tensor`` is a tensor of unknown shape."""

    def __call__(self, shape=None, dtype=None, ndim: int = -1):
        if isinstance(shape, builtins.str) and dtype is None and _looks_like_dtype(shape):
            shape, dtype = None, shape
        if shape is not None and not isinstance(shape, (rx.ShapeExpr, rx.Var)):
            shape = [_dim(d) for d in (shape if isinstance(shape, (list, builtins.tuple)) else [shape])]
        return TensorStructInfo(shape, dtype if dtype is not None else "", ndim)

    def as_struct_info(self):
        return TensorStructInfo(None, "", -1)


def _looks_like_dtype(text) -> bool:
    return text.rstrip("0123456789x").rstrip("b") in ("float", "int", "uint", "bool", "bfloat")


class _ShapeFactory:
    def __call__(self, values=None, ndim: int = -1):
        return ShapeStructInfo(None if values is None else [_dim(v) for v in values], ndim)

    def as_struct_info(self):
        return ShapeStructInfo()


Tensor = _TensorFactory()
Shape = _ShapeFactory()
Object = ObjectStructInfo()


def Tuple(*fields):  # noqa: N802 -- TVMScript's spelling
    """``R.Tuple(R.Tensor(...), R.Tensor(...))``: struct info of a tuple."""
    if len(fields) == 1 and isinstance(fields[0], (list, builtins.tuple)):
        fields = fields[0]
    return TupleStructInfo([as_struct_info(f) for f in fields])


def Prim(dtype: str = "int64"):  # noqa: N802
    return PrimStructInfo(dtype)


def Callable(params, ret, purity: bool = True):  # noqa: N802
    return FuncStructInfo([as_struct_info(p) for p in params], as_struct_info(ret), purity)


def as_struct_info(value):
    """Struct info from an annotation: ``R.Tensor`` alone means any tensor."""
    if hasattr(value, "as_struct_info"):
        return value.as_struct_info()
    return value


# -- statements and values -----------------------------------------------------------------

@contextlib.contextmanager
def dataflow():
    """``with R.dataflow():`` marks a dataflow block (read by the parser)."""
    yield


def output(*vars_):
    """``R.output(a, b)`` ends a dataflow block, naming the values that leave it."""
    return vars_


def func_attr(attrs: dict):
    """``R.func_attr({"global_symbol": "main"})`` sets attributes of the function."""
    return dict(attrs)


class MatchCastSpec:
    def __init__(self, value, struct_info):
        self.value, self.struct_info = value, struct_info


def match_cast(value, struct_info):
    """``y = R.match_cast(x, R.Tensor(("n", 4), "float32"))``."""
    return MatchCastSpec(value, as_struct_info(struct_info))


def const(value, dtype: str | None = None):
    """A tensor constant; ``R.const(1.0, "float32")``."""
    return rx.const(value, dtype)


def shape(values):
    """A shape value: ``R.shape([2, "n"])``."""
    return rx.ShapeExpr([_dim(v) for v in values])


def prim_value(value):
    return rx.PrimValue(value)


def str(value):  # noqa: A001 -- TVMScript's spelling
    return rx.StringImm(value)


def tuple(*fields):  # noqa: A001
    return rx.Tuple(list(fields))


def ExternFunc(global_symbol):  # noqa: N802
    return rx.ExternFunc(global_symbol)


def function(func=None, *, pure: bool = True, private: bool = False):
    """``@R.function``: parse a Python function into a Relax Function."""
    from ...script.parser.entry import decorate_function
    kwargs = {"pure": pure, "private": private}
    if func is None:
        def decorate(inner):
            return decorate_function(inner, function, kwargs, sys._getframe(1))
        return decorate
    return decorate_function(func, function, kwargs, sys._getframe(1))


def _out_sinfo(out_sinfo, dtype):
    """The 2022 course spelling ``(1, 128), dtype="float32"`` as struct info."""
    if dtype is not None and isinstance(out_sinfo, (list, builtins.tuple)) and all(
            isinstance(d, (int, builtins.str)) for d in out_sinfo):
        return Tensor(out_sinfo, dtype)
    return out_sinfo


def call_tir(gvar, args, out_sinfo, dtype=None, tir_vars=None):
    """``R.call_tir(cls.f, (x, w), out_sinfo=R.Tensor((1, 128), "float32"))``; the older
    ``R.call_tir(f, (x, w), (1, 128), dtype="float32")`` is accepted too."""
    return _base.call_tir(gvar, args, _out_sinfo(out_sinfo, dtype), tir_vars)


def call_dps_packed(func, args, out_sinfo, dtype=None):
    """``R.call_dps_packed("env.relu", (x,), out_sinfo=R.Tensor((1, 128), "float32"))``."""
    return _base.call_dps_packed(func, args, _out_sinfo(out_sinfo, dtype))
