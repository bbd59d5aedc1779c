"""Parser of TVMScript: decorated Python (``@T.prim_func``, ``@I.ir_module``) or text.

>>> from mlcbench.script import tir as T
>>> @T.prim_func
... def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
...     for i in range(4):
...         with T.block("B"):
...             vi = T.axis.spatial(4, i)
...             B[vi] = A[vi] + T.float32(1)

Errors are :class:`mlcbench.ir.ParseError` pointing at ``file:line:col`` with a caret.
"""
import sys

from .entry import (DeferredFunction, ModuleContext, decorate_function, from_source,
                    ir_module, module_attrs, register_function_parser)
from .tir_parser import parse_prim_func


def prim_func(func=None, *, private: bool = False, check_well_formed: bool = True):
    """``@T.prim_func`` / ``@T.prim_func(private=True)``: parse a function into a PrimFunc.

    Inside an ``@I.ir_module`` class the function is parsed with the module, and gets
    ``global_symbol`` = its name unless it is private.
    """
    kwargs = {"private": private}
    if func is None:
        def decorate(inner):
            return decorate_function(inner, prim_func, kwargs, sys._getframe(1))
        return decorate
    return decorate_function(func, prim_func, kwargs, sys._getframe(1))


def _parse_prim_func(fdef, source, env, module, private=False, check_well_formed=True):
    return parse_prim_func(fdef, source, env, private=private, in_module=module is not None)


register_function_parser(prim_func, _parse_prim_func)

__all__ = ["DeferredFunction", "ModuleContext", "from_source", "ir_module", "module_attrs",
           "prim_func", "register_function_parser"]
