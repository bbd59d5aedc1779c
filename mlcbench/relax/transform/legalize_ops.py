"""LegalizeOps: every high-level op call becomes a ``call_tir`` of a PrimFunc from TE/TOPI.

Each op's registry entry says how (its ``legalize(bb, call)``, see
:mod:`mlcbench.relax.op.registry`); the pass applies those entries to every Relax
function and adds the PrimFuncs they make to the module, each distinct PrimFunc once.

Before::

    lv: R.Tensor((1, 128), dtype="float32") = R.matmul(x, w)
    lv1: R.Tensor((1, 128), dtype="float32") = R.add(lv, b)

After::

    lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((1, 128), dtype="float32"))
    lv1 = R.call_tir(cls.add, (lv, b), out_sinfo=R.Tensor((1, 128), dtype="float32"))

plus ``@T.prim_func`` ``matmul`` and ``add`` in the module.
"""
from __future__ import annotations

import warnings
from typing import Callable

from ...ir.module import IRModule
from ...ir.op import Op
from ...ir.transform import module_pass
from ..expr import Call, Function, Tuple
from ..expr_functor import ExprMutator
from ..op.registry import get_op_info
from ..struct_info import TensorStructInfo, TupleStructInfo

LegalizeFunc = Callable   # (bb: BlockBuilder, call: relax.Call) -> relax.Expr


def LegalizeOps(customize_legalize_map: dict | None = None,  # noqa: N802 -- TVM's spelling
                enable_warning: bool = False):
    """Lower every call of a registered high-level op to ``call_tir`` (see module docstring).

    Parameters
    ----------
    customize_legalize_map
        ``{"relax.add": fn}`` overriding the registry for the named ops; ``fn(bb, call)``
        returns the replacement (typically ``bb.call_te(...)``). The replacement may use
        other high-level ops: they are legalized in turn.
    enable_warning
        Warn about ops that stay as they are because no legalization is known.

    Calls whose tensor shapes are not known (unknown rank) are left unchanged, as in TVM.

    >>> mod = relax.transform.LegalizeOps()(mod)
    >>> def my_relu(bb, call):
    ...     return bb.call_te(topi.nn.relu, call.args[0], primfunc_name_hint="my_relu")
    >>> mod = relax.transform.LegalizeOps({"relax.nn.relu": my_relu})(mod)
    """
    custom = dict(customize_legalize_map or {})

    def transform(mod: IRModule, ctx) -> IRModule:
        legalizer = _Legalizer(mod, custom)
        updates = {}
        for gv, func in mod.items():
            if isinstance(func, Function):
                new_func = legalizer.visit_expr(func)
                if new_func is not func:
                    updates[gv] = new_func
        if enable_warning:
            for name in sorted(legalizer.unknown):
                warnings.warn(f"LegalizeOps: operator {name!r} has no legalization; its "
                              "calls stay high-level", stacklevel=2)
        if not updates:
            return mod
        out = legalizer.builder_.get()
        for gv, func in updates.items():
            out[gv] = func
        return out

    return module_pass(transform, opt_level=0, name="LegalizeOps")


class _Legalizer(ExprMutator):
    """Rewrites calls bottom-up; the builder collects the PrimFuncs that rules add."""

    def __init__(self, mod: IRModule, custom: dict):
        super().__init__(mod)
        self.custom = custom
        self.unknown: set[str] = set()

    def visit_call_(self, call):
        return self.legalize(self.visit_expr_post_order(call))

    def legalize(self, call):
        if not isinstance(call.op, Op):
            return call
        rule = self.custom.get(call.op.name) or get_op_info(call.op).legalize
        if rule is None:
            if not call.op.name.startswith(("relax.call_", "relax.builtin.", "relax.null")):
                self.unknown.add(call.op.name)
            return call
        if not _shapes_known(call):
            return call
        result = rule(self.builder_, call)
        if result is None:
            return call
        return self._legalize_result(result, call.op)

    def _legalize_result(self, expr, origin: Op | None):
        """Legalize what a rule answered with, except a call of the rule's own op."""
        if isinstance(expr, Tuple):
            fields = [self._legalize_result(f, None) for f in expr.fields]
            return expr if all(a is b for a, b in zip(fields, expr.fields)) else Tuple(fields)
        if not isinstance(expr, Call) or not isinstance(expr.op, Op):
            return expr
        args = [self._legalize_result(a, None) for a in expr.args]
        if any(a is not b for a, b in zip(args, expr.args)):
            expr = Call(expr.op, args, expr.attrs, expr.sinfo_args)
        return expr if expr.op is origin else self.legalize(expr)


def _known(sinfo) -> bool:
    if isinstance(sinfo, TensorStructInfo):
        return sinfo.dims is not None
    if isinstance(sinfo, TupleStructInfo):
        return all(_known(f) for f in sinfo.fields)
    return True


def _shapes_known(call: Call) -> bool:
    """TE needs every tensor's shape (symbolic extents are fine, an unknown rank is not)."""
    return _known(call.struct_info) and all(_known(a.struct_info) for a in call.args
                                            if hasattr(a, "struct_info"))


__all__ = ["LegalizeOps", "LegalizeFunc"]
