"""TVMScript for mlcbench: ``from mlcbench.script import tir as T, ir as I``.

The printer renders IR as Python-like text; the parser reads that text (or decorated
Python functions and classes) back. ``from_source(mod.script())`` is structurally equal
to ``mod``.
"""
from . import ir, tir
from .parser import from_source, ir_module, prim_func
from . import printer as _printer  # registers the printer for repr/script()/show()
from .printer import highlight, print_diff
