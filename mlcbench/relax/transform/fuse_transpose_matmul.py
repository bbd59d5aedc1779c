"""FuseTransposeMatmul: ``matmul(x, permute_dims(w))`` reads ``w`` where it lies.

``nn.Linear`` (and ``R.nn.linear``) compute ``x @ w.T`` as a ``permute_dims`` of the
weight followed by a ``matmul``. With the weight constant, FoldConstant transposes it
once at build time; taken as an argument it was transposed on every call, in a kernel
of its own that FuseOps cannot merge into the matmul (an injective producer of a
reduction). The 784-128-10 MLP at batch 1 spent 76 of its 110 us there. Before::

    with R.dataflow():
        lv0 = R.permute_dims(w)                  # w: (n, k)
        lv1 = R.matmul(x, lv0)                   # x: (.., m, k)

After::

    with R.dataflow():
        lv1 = R.call_tir(cls.matmul_nt, (x, w), out_sinfo=R.Tensor((.., m, n)))

where ``matmul_nt`` is ``topi.nn.matmul(x, w, transpose_b=True)`` (the dense form
``C[i, j] += x[i, k] * w[j, k]``; ``batch_matmul`` with ``transpose_b`` for batched
operands): the default schedules then read ``w`` contiguously along ``k`` (the
matrix-vector rule for few rows, packed panels for many). The ``permute_dims`` stays
when something else reads it. Only transposes of the last two axes are rewritten,
with ``x`` and ``w`` of at least two dimensions and static-rank shapes.
"""
from __future__ import annotations

from ... import topi
from ...ir.module import IRModule
from ...ir.transform import module_pass
from ..expr import Function, Var
from ..expr_functor import ExprMutator
from ..op.registry import is_call
from ..struct_info import TensorStructInfo
from .dead_code_elimination import remove_unused_bindings


@module_pass(opt_level=0, name="FuseTransposeMatmul")
class FuseTransposeMatmul:
    """Rewrite ``matmul(x, permute_dims(w))`` over the last two axes into one kernel
    reading ``w[.., j, k]`` (see the module docstring).

    Example
    -------
    >>> mod = relax.transform.FuseTransposeMatmul()(mod)
    >>> mod = relax.transform.LegalizeOps()(mod)
    """

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        rewriter = _Rewriter(mod)
        updates = {}
        for gv, func in mod.items():
            if isinstance(func, Function):
                new = rewriter.visit_expr(func)
                if new is not func:
                    updates[gv] = new
        if not updates:
            return mod
        out = rewriter.builder_.get()
        for gv, func in updates.items():
            out[gv] = remove_unused_bindings(func, out)
        return out


def _ndim(expr) -> int:
    sinfo = getattr(expr, "struct_info", None)
    if not isinstance(sinfo, TensorStructInfo) or sinfo.dims is None:
        return -1
    return len(sinfo.dims)


def swaps_last_two(axes, ndim: int) -> bool:
    """True when ``permute_dims(.., axes)`` of an ``ndim``-D tensor exchanges its last
    two axes and keeps the others (``axes=None`` reverses: the same for 2-D)."""
    if ndim < 2:
        return False
    if axes is None:
        return ndim == 2
    wanted = list(range(ndim - 2)) + [ndim - 1, ndim - 2]
    return [a % ndim for a in axes] == wanted


def matmul_nt(x, w, out_dtype=None):
    """``x @ swap_last_two(w)`` in TE, reading ``w`` as it is stored."""
    if x.ndim == 2 and w.ndim == 2:
        return topi.nn.matmul(x, w, out_dtype=out_dtype, transpose_b=True)
    return topi.nn.batch_matmul(x, w, out_dtype=out_dtype, transpose_b=True)


class _Rewriter(ExprMutator):
    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        if not is_call(call, "relax.matmul") or not isinstance(call.args[1], Var):
            return call
        producer = self.lookup_binding(call.args[1])
        if not is_call(producer, "relax.permute_dims"):
            return call
        x, w = call.args[0], producer.args[0]
        if _ndim(x) < 2 or not swaps_last_two(producer.attrs.axes, _ndim(w)):
            return call
        return self.builder_.call_te(matmul_nt, x, w, call.attrs.out_dtype,
                                     primfunc_name_hint="matmul_nt")


__all__ = ["FuseTransposeMatmul", "matmul_nt", "swaps_last_two"]
