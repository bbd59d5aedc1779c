"""IRModules as ``@I.ir_module class Module:`` and the table of function printers.

TIR functions print here; other function kinds (Relax) register a printer with
:func:`register_function_printer` and are placed in the same class body, all sorted
by name::

    # from mlcbench.script import ir as I
    # from mlcbench.script import tir as T

    @I.ir_module
    class Module:
        @T.prim_func
        def add(...):
            ...

        @T.prim_func
        def mul(...):
            ...
"""
from __future__ import annotations

from typing import Callable

from ...tir.function import PrimFunc
from .function import IR_IMPORT, TIR_IMPORT, format_prim_func

# function type -> (printer(func, name, depth, indent) -> str, import comment line)
_FUNCTION_PRINTERS: dict[type, tuple[Callable, str]] = {}
# printers that also take ``module_name=`` (the class name, for ``cls = Module``)
_TAKES_MODULE_NAME: set = set()


def register_function_printer(func_type: type, printer: Callable, import_line: str,
                              takes_module_name: bool = False) -> None:
    """Let ``IRModule`` printing place functions of ``func_type`` in the class body.

    ``printer(func, name, depth, indent)`` returns the function's text (decorator
    included) indented by ``depth`` levels; ``import_line`` is the header comment it
    needs, e.g. ``"# from mlcbench.script import relax as R"``. With
    ``takes_module_name`` it is also given ``module_name=`` (the class being printed),
    as a function that calls its module's functions binds ``cls = Module``.
    """
    _FUNCTION_PRINTERS[func_type] = (printer, import_line)
    (_TAKES_MODULE_NAME.add if takes_module_name else _TAKES_MODULE_NAME.discard)(printer)


def _prim_func_printer(func, name, depth, indent):
    return format_prim_func(func, name, depth=depth, indent=indent, in_module=True)


register_function_printer(PrimFunc, _prim_func_printer, TIR_IMPORT)


def function_printer(func):
    for klass in type(func).__mro__:
        entry = _FUNCTION_PRINTERS.get(klass)
        if entry is not None:
            return entry
    return None


def can_print_module(mod) -> bool:
    return all(function_printer(func) is not None for func in mod.functions.values())


def format_ir_module(mod, name: str = "Module", indent: int = 4) -> str:
    """The module as a decorated class, functions sorted by name, with import header."""
    imports = {IR_IMPORT}
    parts = []
    for gv, func in sorted(mod.items(), key=lambda kv: kv[0].name_hint):
        printer, import_line = function_printer(func)
        imports.add(import_line)
        extra = {"module_name": name} if printer in _TAKES_MODULE_NAME else {}
        parts.append(printer(func, gv.name_hint, 1, indent, **extra))
    pad = " " * indent
    lines = [f"{pad}I.module_attrs({_attrs_text(mod.attrs)})"] if mod.attrs else []
    body = "\n\n".join(parts) if parts else ("" if lines else f"{pad}pass")
    if body:
        lines.append(body)
    header = "\n".join(sorted(imports))
    return f"{header}\n\n@I.ir_module\nclass {name}:\n" + "\n".join(lines)


def _attrs_text(attrs: dict) -> str:
    from .function import TIRPrinter
    return TIRPrinter(declare_free=False).dict_value(attrs)
