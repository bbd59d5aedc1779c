"""The TVMScript printer for TIR: ``mod.script()``, ``repr(func)``, ``str(expr)``.

Output matches the style of Apache TVM's printer, so what a learner sees here is
what the MLC course shows::

    >>> print(i * 4 + j)
    i * 4 + j
    >>> print(mod.script())          # doctest: +SKIP
    # from mlcbench.script import ir as I
    # from mlcbench.script import tir as T

    @I.ir_module
    class Module:
        @T.prim_func
        def main(A: T.Buffer((128,), "float32")):
            ...

Importing this package registers :func:`script` with ``mlcbench.ir.node``; objects it
does not know (Relax IR) are left to printers registered later.
"""
from __future__ import annotations

import sys

from ...ir.errors import InvalidTypeError
from ...ir.module import IRModule
from ...ir.node import register_printer
from ...tir import expr as E
from ...tir.buffer import Buffer, BufferRegion, MatchBufferRegion
from ...tir.function import PrimFunc
from ...tir.stmt import IterVar, Stmt
from .diff import print_diff
from .expr import quote
from .function import TIR_IMPORT, TIRPrinter, format_fragment, format_prim_func
from .module import can_print_module, format_ir_module, register_function_printer

__all__ = ["script", "format_prim_func", "format_ir_module", "register_function_printer",
           "print_diff", "highlight"]

# Options of TVM's ``script()`` that change nothing here (no metadata section, fixed
# prefixes), accepted so that course code calling them runs unchanged.
_IGNORED_OPTIONS = frozenset({"show_meta", "ir_prefix", "tir_prefix", "relax_prefix",
                              "module_alias", "buffer_dtype", "int_dtype", "float_dtype",
                              "verbose_expr", "syntax_sugar", "show_object_address",
                              "num_context_lines", "path_to_underline", "path_to_annotate",
                              "obj_to_underline", "obj_to_annotate", "show_all_struct_info"})


def script(obj, name: str | None = None, indent_spaces: int = 4,
           print_line_numbers: bool = False, **options) -> str | None:
    """TVMScript text of a TIR object, or None for objects this printer does not know.

    ``name`` names a standalone PrimFunc (default: its ``global_symbol``, else
    ``"main"``) or the class of an IRModule (default ``"Module"``).
    """
    text = _with_deep_recursion(_dispatch, obj, name, indent_spaces)
    if text is None:
        return None                  # not TIR: another printer's options are not ours to judge
    unknown = set(options) - _IGNORED_OPTIONS
    if unknown:
        raise InvalidTypeError(
            f"script() got unknown option(s) {sorted(unknown)}; it accepts name, "
            f"indent_spaces, print_line_numbers and TVM's {sorted(_IGNORED_OPTIONS)}")
    if print_line_numbers:
        lines = text.split("\n")
        width = len(str(len(lines)))
        text = "\n".join(f"{k:>{width}} {line}" for k, line in enumerate(lines, 1))
    return text


def _with_deep_recursion(fn, *args):
    """Long expression chains (an unrolled sum of 2000 terms) nest deeper than Python's
    default limit; pure-Python recursion is cheap on 3.11+, so allow more while printing."""
    limit = sys.getrecursionlimit()
    if limit < _PRINT_RECURSION_LIMIT:
        sys.setrecursionlimit(_PRINT_RECURSION_LIMIT)
    try:
        return fn(*args)
    finally:
        sys.setrecursionlimit(limit)


_PRINT_RECURSION_LIMIT = 50_000

# IterVar kinds as TVM spells them in ``T.iter_var``.
_ITER_TYPE_NAMES = {"DATA_PAR": "DataPar", "COMM_REDUCE": "CommReduce", "ORDERED": "Ordered",
                    "OPAQUE": "Opaque", "THREAD_INDEX": "ThreadIndex"}


def _dispatch(obj, name, indent) -> str | None:
    if isinstance(obj, PrimFunc):
        return f"{TIR_IMPORT}\n\n" + format_prim_func(obj, name, indent=indent)
    if isinstance(obj, IRModule):
        return format_ir_module(obj, name or "Module", indent) if can_print_module(obj) else None
    if isinstance(obj, (E.PrimExpr, Stmt)):
        return format_fragment(obj, indent)
    printer = TIRPrinter(declare_free=False, indent=indent)
    if isinstance(obj, Buffer):
        return printer.buffer_call(obj, "T.Buffer", (), printer.root)
    if isinstance(obj, BufferRegion):
        return printer.region_text(obj)
    if isinstance(obj, MatchBufferRegion):
        printer.emit_match_buffer(obj, printer.root)
        return printer.text()
    if isinstance(obj, E.Range):
        end = printer.expr(E.binary(E.Add, obj.min, obj.extent))
        return f"T.Range({printer.expr(obj.min)}, {end})"
    if isinstance(obj, IterVar):
        kind = _ITER_TYPE_NAMES.get(obj.iter_type.name, obj.iter_type.name)
        return (f"T.iter_var({printer.expr(obj.var)}, {_dispatch(obj.dom, None, indent)}, "
                f"{quote(kind)}, {quote(obj.thread_tag)})")
    return None


def highlight(text: str, style: str = "default") -> str:
    """HTML of syntax-highlighted TVMScript (see :mod:`.html`)."""
    from .html import highlight as _highlight
    return _highlight(text, style)


register_printer(script)
