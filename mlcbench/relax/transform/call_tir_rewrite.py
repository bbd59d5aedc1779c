"""CallTIRRewrite: destination-passing calls become an explicit allocation plus a call.

``R.call_tir(cls.f, (x, w), out_sinfo=...)`` *means* "allocate the output, call ``f``
with the inputs and the output, and take the output as the value". This pass writes that
out, so memory planning can see every allocation and the VM only ever calls functions.

Before::

    lv0 = R.call_tir(cls.linear0, (x, w0, b0), out_sinfo=R.Tensor((1, 128), dtype="float32"))
    lv1 = R.call_dps_packed("env.relu", (lv0,), out_sinfo=R.Tensor((1, 128), dtype="float32"))

After::

    alloc = R.builtin.alloc_tensor(R.shape([1, 128]), dtype="float32", runtime_device_index=0)
    _: R.Object = cls.linear0(x, w0, b0, alloc)
    lv0 = alloc
    alloc1 = R.builtin.alloc_tensor(R.shape([1, 128]), dtype="float32", runtime_device_index=0)
    _1: R.Object = R.ExternFunc("env.relu")(lv0, alloc1)
    lv1 = alloc1

A call with several outputs allocates each and binds the tuple ``(alloc, alloc1)``;
``tir_vars`` of ``call_tir`` are passed last, as the PrimFunc's scalar parameters.
"""
from __future__ import annotations

from ...ir.errors import IRError
from ...ir.module import IRModule
from ...ir.op import Op
from ...ir.transform import module_pass
from ..expr import (BindingBlock, Call, Function, SeqExpr, ShapeExpr, Tuple, TupleGetItem, Var,
                    VarBinding, is_leaf)
from ..expr_functor import ExprMutator
from ..op.base import builtin
from ..struct_info import TensorStructInfo, TupleStructInfo, describe

_DPS_OPS = ("relax.call_tir", "relax.call_dps_packed")


def CallTIRRewrite():  # noqa: N802 -- TVM's spelling
    """The pass described in the module docstring.

    >>> mod = relax.transform.CallTIRRewrite()(mod)      # doctest: +SKIP
    """
    def transform(mod: IRModule, ctx) -> IRModule:
        out = None
        for gv, func in mod.items():
            if not isinstance(func, Function):
                continue
            new = _Rewriter().visit_expr(func)
            if new is not func:
                out = out or mod.copy()
                out[gv] = new
        return out or mod

    return module_pass(transform, opt_level=0, name="CallTIRRewrite")


def output_tensors(sinfo) -> list[TensorStructInfo]:
    """The tensors a DPS call writes: one, or each field of a tuple of tensors."""
    fields = sinfo.fields if isinstance(sinfo, TupleStructInfo) else (sinfo,)
    for field in fields:
        if not isinstance(field, TensorStructInfo) or field.dims is None or not field.dtype:
            raise IRError(f"CallTIRRewrite: every output of a destination-passing call needs "
                          f"a known shape and dtype to be allocated, found {describe(field)}")
    return list(fields)


class _Rewriter(ExprMutator):
    def visit_seq_expr_(self, seq):
        # An If arm's result may be a call itself; bind it first so that the allocation
        # and the call land inside the arm, not in the block around the If.
        if not is_leaf(seq.body) and _has_dps_call(seq.body):
            result = Var("ret", seq.body.struct_info)
            seq = SeqExpr([*seq.blocks, BindingBlock([VarBinding(result, seq.body)])], result)
        return super().visit_seq_expr_(seq)

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if not (isinstance(call.op, Op) and call.op.name in _DPS_OPS):
            return call
        callee, args = call.args[0], self._inputs(call.args[1])
        allocs = [self.builder_.emit(builtin.alloc_tensor(ShapeExpr(t.dims), t.dtype), "alloc")
                  for t in output_tensors(call.sinfo_args[0])]
        extra = list(call.args[2:]) if call.op.name == "relax.call_tir" else []
        self.builder_.emit(Call(callee, [*args, *allocs, *extra]), "_")
        if isinstance(call.sinfo_args[0], TupleStructInfo):
            return Tuple(allocs)
        return allocs[0]

    def _inputs(self, args) -> list:
        """The call's inputs. ``call_tir(f, t, ...)`` of a tuple variable ``t`` (stored as
        the one-field tuple ``(t,)``) passes t's fields, each bound to a variable so the
        call's arguments stay variables."""
        fields = list(args.fields) if isinstance(args, Tuple) else [args]
        if len(fields) == 1 and isinstance(fields[0].struct_info, TupleStructInfo):
            whole = fields[0]
            return [self.builder_.emit(TupleGetItem(whole, i), "arg")
                    for i in range(len(whole.struct_info.fields))]
        return fields


def _has_dps_call(expr) -> bool:
    return isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name in _DPS_OPS


__all__ = ["CallTIRRewrite", "output_tensors"]
