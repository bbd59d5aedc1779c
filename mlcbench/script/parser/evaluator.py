"""Evaluate TVMScript expressions from their ``ast``, never running the user's function.

Names resolve to script variables first (loop variables, buffers, lets), then to the
Python values the decorated function could see (globals, closure), then to builtins.
Text that is not the user's own code (``from_source``) sees only what
:mod:`.text_policy` allows: the script's names, ``T``/``I``/``R`` and ``range``.
Operators apply Python's operator to the evaluated operands, so ``i * 4 + j`` on
``tir.Var`` builds ``Add(Mul(i, 4), j)`` while ``n * 2`` on a Python ``n = 64`` is 128.
``range`` means ``T.serial``.
"""
from __future__ import annotations

import ast
import builtins
import operator
import types

from ...ir.errors import MLCBenchError, ParseError
from ...tir import expr as E
from ...tir import op as tir_op
from ...tir.buffer import Buffer
from .builder import naming
from . import text_policy
from .regions import as_value, subscript
from .source import Source

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
           ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Is: operator.is_, ast.IsNot: operator.is_not,
            ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
# Comparisons that involve an expression build the node for the operator as written:
# Python would reflect ``0 < n`` into ``n.__gt__(0)``, i.e. GT(n, 0) instead of LT(0, n).
_COMPARE_NODES = {ast.Eq: E.EQ, ast.NotEq: E.NE, ast.Lt: E.LT, ast.LtE: E.LE, ast.Gt: E.GT,
                  ast.GtE: E.GE}
_UNSUPPORTED = {
    ast.Lambda: "lambda expressions are not supported in TVMScript",
    ast.ListComp: "list comprehensions are not supported in TVMScript; write the elements out",
    ast.SetComp: "set comprehensions are not supported in TVMScript",
    ast.DictComp: "dict comprehensions are not supported in TVMScript",
    ast.GeneratorExp: "generator expressions are not supported in TVMScript",
    ast.NamedExpr: "the walrus operator := is not supported in TVMScript",
    ast.JoinedStr: "f-strings are not supported in TVMScript",
    ast.Await: "await is not supported in TVMScript",
    ast.Yield: "yield is not supported in TVMScript",
    ast.YieldFrom: "yield is not supported in TVMScript",
}
_CALL_ERRORS = (MLCBenchError, ValueError, TypeError, KeyError, IndexError, ArithmeticError)
_UNDEFINED = object()


class Evaluator:
    """Turns expression nodes into values (PrimExprs, Buffers, Python objects)."""

    def __init__(self, source: Source, env: dict, serial=None):
        self.source, self.env = source, env
        self.scopes: list[dict] = [{}]
        self._serial = serial

    # -- names --------------------------------------------------------------------------
    def lookup(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        value = self.env.get(name, _UNDEFINED)
        if value is _UNDEFINED and (self.source.trusted or name == "range"):
            value = getattr(builtins, name, _UNDEFINED)
        if value is builtins.range and self._serial is not None:
            return self._serial
        return value

    def bind(self, name: str, value) -> None:
        self.scopes[-1][name] = value

    # -- dispatch -----------------------------------------------------------------------
    def eval(self, node: ast.expr, hint=None):
        """Value of ``node``; ``hint`` names what a call creates (``Y = T.alloc_buffer``)."""
        if type(node) in _UNSUPPORTED:
            raise self.source.error(node, _UNSUPPORTED[type(node)])
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            raise self.source.error(node, f"{type(node).__name__} expressions are not "
                                          "supported in TVMScript")
        try:
            if isinstance(node, (ast.Call, ast.Subscript)):
                return method(node, hint)
            return method(node)
        except text_policy.RefusedText as err:
            raise self.error(node, str(err)) from None
        except RecursionError:
            raise self.error(node, "the expression nests too deeply (split it into named "
                                   "parts)") from None

    def error(self, node, message: str) -> ParseError:
        return self.source.error(node, message)

    def eval_Constant(self, node):
        return node.value

    def eval_Name(self, node):
        value = self.lookup(node.id)
        if value is _UNDEFINED and not self.source.trusted:
            raise self.error(node, f"undefined name '{node.id}': text may use the names it "
                                   "binds, the T, I and R namespaces and range, no builtins")
        if value is _UNDEFINED:
            raise self.error(node, f"undefined variable '{node.id}': it is neither defined in "
                                   "the script nor visible from the decorated function")
        return value

    def eval_Attribute(self, node):
        owner = self.eval(node.value)
        try:
            if not self.source.trusted:
                return text_policy.attribute(owner, node.attr)
            return getattr(owner, node.attr)
        except AttributeError:
            prefix = ast.unparse(node.value)
            if isinstance(owner, types.ModuleType) and owner.__name__.startswith("mlcbench.script"):
                raise self.error(node, f"unknown TVMScript function {prefix}.{node.attr}: "
                                       f"{prefix} has no member '{node.attr}'") from None
            raise self.error(node, f"{prefix} ({type(owner).__name__}) has no attribute "
                                   f"'{node.attr}'") from None

    def eval_Tuple(self, node):
        return tuple(self._elements(node.elts))

    def eval_List(self, node):
        return list(self._elements(node.elts))

    def eval_Set(self, node):
        return set(self._elements(node.elts))

    def _elements(self, elts):
        for elt in elts:
            if isinstance(elt, ast.Starred):
                yield from self.eval(elt.value)
            else:
                yield self.eval(elt)

    def eval_Dict(self, node):
        result = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                result.update(self.eval(value))
            else:
                result[self.eval(key)] = self.eval(value)
        return result

    def eval_Slice(self, node):
        parts = (node.lower, node.upper, node.step)
        return slice(*(None if p is None else self.eval(p) for p in parts))

    # -- operators ----------------------------------------------------------------------
    def eval_BinOp(self, node):
        a, b = self.eval(node.left), self.eval(node.right)
        if isinstance(node.op, ast.Pow) and (isinstance(a, E.PrimExpr)
                                             or isinstance(b, E.PrimExpr)):
            return self._apply(node, tir_op.pow, a, b)
        return self._apply(node, _BINARY[type(node.op)], a, b)

    def eval_UnaryOp(self, node):
        value = as_value(self.eval(node.operand))
        if isinstance(node.op, ast.Not):
            return E.Not(value) if isinstance(value, E.PrimExpr) else not value
        if isinstance(node.op, ast.UAdd):
            return value
        op = operator.neg if isinstance(node.op, ast.USub) else operator.invert
        return self._apply(node, op, value)

    def eval_BoolOp(self, node):
        is_and = isinstance(node.op, ast.And)
        result = self.eval(node.values[0])
        for operand in node.values[1:]:
            if not isinstance(result, E.PrimExpr):
                if bool(result) != is_and:      # Python short-circuit
                    return result
                result = self.eval(operand)
                continue
            other = self.eval(operand)
            result = self._apply(node, E.And if is_and else E.Or, result, other, binary=True)
        return result

    def eval_Compare(self, node):
        if len(node.ops) > 1:
            raise self.error(node, "chained comparisons such as `a < b < c` are not supported;"
                                   " write `a < b and b < c`")
        a = as_value(self.eval(node.left))
        b = as_value(self.eval(node.comparators[0]))
        op = type(node.ops[0])
        if op in _COMPARE_NODES and (isinstance(a, E.PrimExpr) or isinstance(b, E.PrimExpr)):
            return self._apply(node, _COMPARE_NODES[op], a, b, binary=True)
        return self._apply(node, _COMPARE[op], a, b)

    def eval_IfExp(self, node):
        test = self.eval(node.test)
        if isinstance(test, E.PrimExpr) and not isinstance(test, E.IntImm):
            raise self.error(node, "`a if cond else b` needs a condition known while parsing; "
                                   "use T.if_then_else(cond, a, b) or T.Select(cond, a, b)")
        return self.eval(node.body) if test else self.eval(node.orelse)

    def _apply(self, node, op, *args, binary=False):
        args = tuple(as_value(a) for a in args)
        if not self.source.trusted and len(args) == 2:
            text_policy.check_operands(op, *args)
        try:
            return E.binary(op, *args) if binary else op(*args)
        except ParseError as err:
            raise self._located(node, err) from None
        except ZeroDivisionError:
            raise self.error(node, "division by zero in a constant expression") from None
        except _CALL_ERRORS as err:
            raise self.error(node, f"{type(err).__name__}: {err}") from None

    def _located(self, node, err: ParseError) -> ParseError:
        return err if err.span is not None else self.error(node, err.message)

    # -- subscripts and calls -----------------------------------------------------------
    def eval_Subscript(self, node, hint=None):
        owner = self.eval(node.value)
        index = self.eval(node.slice)
        try:
            if isinstance(owner, Buffer):
                return subscript(owner, index if isinstance(index, tuple) else (index,))
            with naming(hint):              # T.Buffer[(128,), "float32"] names its buffer
                return owner[index]
        except ParseError as err:
            raise self._located(node, err) from None
        except (_CALL_ERRORS + (AttributeError,)) as err:
            raise self.error(node, f"cannot index {ast.unparse(node.value)}: {err}") from None

    def eval_Call(self, node, hint=None):
        func = self.eval(node.func)
        args = list(self._elements(node.args))
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                kwargs.update(self.eval(keyword.value))
            else:
                kwargs[keyword.arg] = self.eval(keyword.value)
        if not callable(func):
            raise self.error(node.func, f"{ast.unparse(node.func)} is not callable")
        if not self.source.trusted and func is not self._serial:
            text_policy.check_callable(func)
        if not getattr(func, "takes_regions", False):
            args = [as_value(a) for a in args]
            kwargs = {k: as_value(v) for k, v in kwargs.items()}
        try:
            with naming(hint):
                return func(*args, **kwargs)
        except ParseError as err:
            raise self._located(node, err) from None
        except _CALL_ERRORS as err:
            raise self.error(self._culprit(node, err), f"{ast.unparse(node.func)}: {err}") from None

    def _culprit(self, node: ast.Call, err: Exception) -> ast.AST:
        """The argument an error names (a bad dtype string), else the whole call."""
        text = str(err)
        for arg in list(node.args) + [k.value for k in node.keywords]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) \
                    and repr(arg.value) in text:
                return arg
        return node
