"""From Relax values to TE and back: the machinery behind ``BlockBuilder.call_te``.

A Relax tensor argument becomes a ``te.placeholder`` of its shape and dtype; the TE
function's outputs become the PrimFunc's output buffers and the ``out_sinfo`` of the
``call_tir`` that calls it.
"""
from __future__ import annotations

import string

from .. import te
from ..ir.errors import IRError
from ..tir.expr import IntImm, Var as TIRVar
from ..tir.functor import post_order_visit
from .expr import Expr, Tuple
from .struct_info import TensorStructInfo


class _Converter:
    """Turns Relax tensors into placeholders, remembering them in order."""

    def __init__(self):
        self.placeholders: list = []
        self.relax_args: list = []
        self.by_expr: dict = {}

    def convert(self, value):
        if isinstance(value, Tuple):
            return [self.convert(f) for f in value.fields]
        if isinstance(value, Expr):
            return self.tensor(value)
        if isinstance(value, (list, tuple)):
            return type(value)(self.convert(v) for v in value)
        return value

    def tensor(self, expr: Expr):
        if expr in self.by_expr:
            return self.by_expr[expr]
        sinfo = expr.struct_info
        if not isinstance(sinfo, TensorStructInfo) or sinfo.dims is None:
            raise IRError(f"call_te: argument {len(self.relax_args)} must be a tensor of known "
                          f"shape, found {sinfo!r}")
        name = _placeholder_name(len(self.placeholders))
        shape = [d.value if isinstance(d, IntImm) else d for d in sinfo.dims]
        tensor = te.placeholder(shape, sinfo.dtype, name=name)
        self.by_expr[expr] = tensor
        self.placeholders.append(tensor)
        self.relax_args.append(expr)
        return tensor


def _placeholder_name(index: int) -> str:
    letters = string.ascii_uppercase
    return letters[index] if index < len(letters) else f"A{index}"


def _symbolic_vars(shapes) -> set:
    found = set()
    for shape in shapes:
        for dim in shape:
            if isinstance(dim, TIRVar):
                found.add(dim)
            elif not isinstance(dim, (int, IntImm)):
                post_order_visit(dim, lambda n: found.add(n) if isinstance(n, TIRVar) else None)
    return found


def call_te_parts(te_func, args, kwargs):
    """(PrimFunc, Relax arguments, output struct infos) of ``te_func(*args, **kwargs)``."""
    converter = _Converter()
    te_args = [converter.convert(a) for a in args]
    te_kwargs = {k: converter.convert(v) for k, v in kwargs.items()}
    result = te_func(*te_args, **te_kwargs)
    outputs = list(result) if isinstance(result, (list, tuple)) else [result]
    if not outputs or not all(isinstance(o, te.Tensor) for o in outputs):
        raise IRError(f"call_te: {getattr(te_func, '__name__', te_func)} must return a te "
                      f"tensor or a list of them, found {result!r}")
    input_vars = _symbolic_vars(p.shape for p in converter.placeholders)
    missing = _symbolic_vars(o.shape for o in outputs) - input_vars
    if missing:
        raise IRError(f"call_te: output shape uses {sorted(v.name for v in missing)}, which no "
                      "input shape defines")
    prim_func = te.create_prim_func([*converter.placeholders, *outputs])
    out_sinfo = [TensorStructInfo(list(o.shape), o.dtype) for o in outputs]
    return prim_func, converter.relax_args, out_sinfo
