"""TIR expressions as TVMScript text, with Python precedence and minimal parentheses.

Every expression prints to ``(text, precedence)``; a parent wraps a child in
parentheses only where Python would otherwise read it differently::

    Mul(Add(i, j), 4)        ->  (i + j) * 4
    Add(Mul(i, 4), j)        ->  i * 4 + j
    Sub(a, Sub(b, c))        ->  a - (b - c)
    LT(a, LT(b, c))          ->  a < (b < c)      (Python would chain ``a < b < c``)

Operators Python has no symbol for print as calls, as TVM does: ``T.min``,
``T.max``, ``T.truncmod``, integer ``Div`` as ``T.Div``. A binary node whose operands
are both constants prints as a call too (``T.Add(1, 2)``): the sugar ``1 + 2`` would
be folded to ``3`` when read back.
"""
from __future__ import annotations

import json
import math

from ...ir.errors import InvalidTypeError
from ...ir.dtype import dtype as as_dtype
from ...ir.node import Node
from ...tir import expr as E

# Python precedence levels (higher binds tighter).
OR, AND, NOT, CMP, ADD, MUL, UNARY, ATOM = range(1, 9)

_SUGAR = {
    E.Add: ("+", ADD), E.Sub: ("-", ADD), E.Mul: ("*", MUL), E.FloorDiv: ("//", MUL),
    E.FloorMod: ("%", MUL), E.EQ: ("==", CMP), E.NE: ("!=", CMP), E.LT: ("<", CMP),
    E.LE: ("<=", CMP), E.GT: (">", CMP), E.GE: (">=", CMP), E.And: ("and", AND),
    E.Or: ("or", OR),
}
_CALL_NAME = {E.Min: "T.min", E.Max: "T.max", E.Mod: "T.truncmod", E.Div: "T.Div"}
# Intrinsics whose result dtype is their first argument, as TVM prints them.
_DTYPE_FIRST = frozenset({"call_extern", "call_pure_extern", "call_llvm_intrin",
                          "call_llvm_pure_intrin", "reinterpret", "call_intrin",
                          "type_annotation"})


def quote(text: str) -> str:
    """A double-quoted Python string literal: ``quote('a"b') == '"a\\\\"b"'``."""
    return json.dumps(str(text), ensure_ascii=False)


def float_text(value: float) -> str:
    """17 significant digits like TVM (``0.5``, ``0.10000000000000001``); ``"inf"`` quoted."""
    text = "%.17g" % value
    return quote(text) if math.isinf(value) or math.isnan(value) else text


def int_literal(value: int, dtype) -> str:
    if dtype == "int32":
        return str(value)
    if dtype == "bool":
        return f"T.bool({bool(value)})"
    return f"T.{dtype}({value})"


def dtype_annotation(dtype) -> str:
    """``T.int32`` for a scalar parameter or a let binding."""
    return f"T.{dtype}"


def var_creation(var: E.Var) -> str:
    """The right-hand side that creates ``var`` in a script: ``T.int32()``."""
    if var.dtype == "handle":
        ann = var.type_annotation
        if isinstance(ann, tuple) and len(ann) == 2 and ann[0] is not None:
            return f"T.handle({quote(ann[0])}, {quote(ann[1])})"
        return "T.handle()"
    size = "is_size_var=True" if isinstance(var, E.SizeVar) else ""
    return f"T.{var.dtype}({size})"


def _is_const(x) -> bool:
    return isinstance(x, (E.IntImm, E.FloatImm))


class ExprPrinter:
    """Mixin: ``expr(e) -> str``. Subclasses provide ``var_text`` and ``buffer_text``."""

    _expr_table: dict = {}

    def expr(self, e) -> str:
        return self._expr(e)[0]

    def _expr(self, e):
        method = self._expr_table.get(type(e))
        if method is None:
            method = _lookup(type(e))
        return method(self, e)

    def child(self, e, parent_prec: int, strict: bool) -> str:
        """Text of a child, parenthesised when it binds looser (or equal, if strict)."""
        text, prec = self._expr(e)
        if prec < parent_prec or (strict and prec == parent_prec):
            return f"({text})"
        return text

    def args(self, items) -> str:
        return ", ".join(self.expr(x) if not isinstance(x, str) else quote(x) for x in items)

    # -- leaves -------------------------------------------------------------------------
    def p_IntImm(self, e):
        return int_literal(e.value, e.dtype), ATOM

    def p_FloatImm(self, e):
        return f"T.{e.dtype}({float_text(e.value)})", ATOM

    def p_StringImm(self, e):
        return quote(e.value), ATOM

    def p_Var(self, e):
        return self.var_text(e), ATOM

    # -- operators ----------------------------------------------------------------------
    def p_BinaryOp(self, e):
        cls = type(e)
        sugar = _SUGAR.get(cls)
        if cls is E.Div and not (as_dtype(e.a.dtype).is_integer
                                 and as_dtype(e.b.dtype).is_integer):
            sugar = ("/", MUL)
        if sugar is None or (_is_const(e.a) and _is_const(e.b)) or e.a.dtype != e.b.dtype:
            name = _CALL_NAME.get(cls, f"T.{cls.__name__}")
            return f"{name}({self.expr(e.a)}, {self.expr(e.b)})", ATOM
        symbol, prec = sugar
        left = self.child(e.a, prec, strict=prec == CMP)
        right = self.child(e.b, prec, strict=True)
        return f"{left} {symbol} {right}", prec

    def p_Not(self, e):
        return f"not {self.child(e.a, NOT, strict=False)}", NOT

    def p_Select(self, e):
        return f"T.Select({self.args((e.condition, e.true_value, e.false_value))})", ATOM

    def p_Cast(self, e):
        return f"T.Cast({quote(e.dtype)}, {self.expr(e.value)})", ATOM

    def p_BufferLoad(self, e):
        return f"{self.buffer_text(e.buffer)}[{self.indices(e.indices)}]", ATOM

    def indices(self, indices) -> str:
        if not indices:
            return "()"
        return ", ".join(self.index(i) for i in indices)

    def index(self, i) -> str:
        """One subscript; a unit-stride Ramp prints as a slice ``i:i + 4`` like TVM."""
        stride = E.convert(i.stride) if isinstance(i, E.Ramp) else None
        if isinstance(stride, E.IntImm):
            stop = fold_add(i.base, E.binary(E.Mul, stride, i.lanes))
            step = "" if stride.value == 1 else f":{self.expr(stride)}"
            return f"{self.expr(i.base)}:{self.expr(stop)}{step}"
        return self.expr(i)

    def p_Ramp(self, e):
        return f"T.Ramp({self.expr(e.base)}, {self.expr(e.stride)}, {e.lanes})", ATOM

    def p_Broadcast(self, e):
        return f"T.Broadcast({self.expr(e.value)}, {e.lanes})", ATOM

    def p_Call(self, e):
        name = e.op[4:] if e.op.startswith("tir.") else e.op
        if "." in name:     # an op outside the tir namespace: spell it out
            return f"T.call_intrin({quote(e.dtype)}, {quote(e.op)}, {self.args(e.args)})", ATOM
        args = list(e.args)
        if name in _DTYPE_FIRST:
            text = ", ".join([quote(e.dtype)] + [self.expr(a) for a in args])
        else:
            text = self.args(args)
        return f"T.{name}({text})", ATOM

    def p_Let(self, e):
        var = self.var_text(e.var)
        return f"T.Let({var}, {self.expr(e.value)}, {self.expr(e.body)})", ATOM

    # -- values in attribute dictionaries ------------------------------------------------
    def value(self, v) -> str:
        """An attribute value: ``T.bool(True)``, ``16``, ``"text"``, ``[1, 2]``, ``{...}``."""
        if isinstance(v, bool):
            return f"T.bool({v})"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return f"T.float32({float_text(v)})"
        if isinstance(v, str):
            return quote(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if isinstance(v, dict):
            return self.dict_value(v)
        if v is None:
            return "None"
        if isinstance(v, E.PrimExpr):
            return self.expr(v)
        return self.other_value(v)

    def dict_value(self, d: dict) -> str:
        items = list(d.items())
        if all(isinstance(k, str) for k, _ in items):
            items.sort(key=lambda kv: kv[0])     # TVM sorts string-keyed maps
        return "{" + ", ".join(f"{self.value(k)}: {self.value(v)}" for k, v in items) + "}"

    def other_value(self, v) -> str:
        return repr(v)


def fold_add(a, b):
    """``a + b`` with the folding TVM's printer relies on (``0 + n`` is ``n``)."""
    if isinstance(a, E.IntImm) and a.value == 0 and a.dtype == b.dtype:
        return b
    if isinstance(b, E.IntImm) and b.value == 0 and a.dtype == b.dtype:
        return a
    return E.binary(E.Add, a, b)


def _p_python_number(self, e):
    """Plain numbers inside nodes (``Ramp(i, 1, 4)``) print as the constants they mean."""
    return self._expr(E.convert(e))


def _lookup(node_type):
    if node_type in (int, float, bool):
        ExprPrinter._expr_table[node_type] = _p_python_number
        return _p_python_number
    for klass in node_type.__mro__:
        method = getattr(ExprPrinter, "p_" + klass.__name__, None)
        if method is not None:
            ExprPrinter._expr_table[node_type] = method
            return method
        if klass is Node:
            break
    raise InvalidTypeError(f"the TIR printer cannot print a {node_type.__name__} as an expression")
