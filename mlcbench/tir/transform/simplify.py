"""The ``Simplify`` pass: arithmetic simplification of every PrimFunc body.

Index expressions left by splitting, fusing and flattening, such as
``((i0 * 4 + i1) * 8 + j) // 32``, shrink to what the loop ranges allow; branches
whose condition is decided by the ranges disappear. See
:class:`mlcbench.arith.Analyzer` for the rules.
"""
from __future__ import annotations

from ...arith import Analyzer
from ...ir.transform import prim_func_pass


@prim_func_pass(opt_level=0, name="tir.Simplify")
class Simplify:
    """``mod = Simplify()(mod)``; the function's own body only, buffers untouched."""

    def __init__(self, remove_unit_loops: bool = False):
        self.remove_unit_loops = remove_unit_loops

    def transform_function(self, func, mod, ctx):
        body = Analyzer().simplify(func.body, remove_unit_loops=self.remove_unit_loops)
        return func if body is func.body else func.with_body(body)
