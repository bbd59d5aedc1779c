"""ToNonDataflow: dataflow blocks become ordinary binding blocks.

The VM runs bindings in order and has no use for the dataflow/non-dataflow split, so
lowering towards it first removes that split: every ``DataflowBlock`` becomes a
``BindingBlock`` and every ``DataflowVar`` a ``Var`` of the same name and struct info.

Before::

    with R.dataflow():
        lv0 = R.call_tir(cls.relu0, (x,), out_sinfo=R.Tensor((1, 128), dtype="float32"))
        gv = R.call_tir(cls.relu0, (lv0,), out_sinfo=R.Tensor((1, 128), dtype="float32"))
        R.output(gv)
    return gv

After (one binding block: blocks that were apart only because of the dataflow
block are merged)::

    lv0 = R.call_tir(cls.relu0, (x,), out_sinfo=R.Tensor((1, 128), dtype="float32"))
    gv = R.call_tir(cls.relu0, (lv0,), out_sinfo=R.Tensor((1, 128), dtype="float32"))
    return gv
"""
from __future__ import annotations

from ...ir.module import IRModule
from ...ir.transform import module_pass
from ..expr import (BindingBlock, DataflowBlock, DataflowVar, Function, MatchCast, SeqExpr,
                    Var, VarBinding)
from ..expr_functor import ExprMutator


def ToNonDataflow():  # noqa: N802 -- TVM's spelling
    """The pass described in the module docstring; PrimFuncs are left alone.

    >>> mod = relax.transform.ToNonDataflow()(mod)      # doctest: +SKIP
    """
    def transform(mod: IRModule, ctx) -> IRModule:
        updates = {gv: to_non_dataflow(func) for gv, func in mod.items()
                   if isinstance(func, Function)}
        changed = {gv: f for gv, f in updates.items() if f is not mod[gv]}
        if not changed:
            return mod
        out = mod.copy()
        for gv, func in changed.items():
            out[gv] = func
        return out

    return module_pass(transform, opt_level=0, name="ToNonDataflow")


def to_non_dataflow(func: Function) -> Function:
    """``func`` without dataflow blocks (the same object when it has none)."""
    return _Rewriter().visit_expr(func)


class _Rewriter(ExprMutator):
    def visit_seq_expr_(self, seq):
        # Blocks that were apart only because one was a dataflow block become one.
        new = super().visit_seq_expr_(seq)
        merged = []
        for block in new.blocks:
            if merged and not isinstance(block, DataflowBlock) \
                    and not isinstance(merged[-1], DataflowBlock):
                merged[-1] = BindingBlock([*merged[-1].bindings, *block.bindings])
            else:
                merged.append(block)
        return new if len(merged) == len(new.blocks) else SeqExpr(merged, new.body)

    def visit_binding_block(self, block):
        if not isinstance(block, DataflowBlock):
            return super().visit_binding_block(block)
        self.builder_.begin_binding_block()
        for binding in block.bindings:
            self.visit_binding(binding)
        return self.builder_.end_block()

    def visit_binding(self, binding):
        if not isinstance(binding.var, DataflowVar):
            return super().visit_binding(binding)
        value = self.visit_expr(binding.value)
        var = Var(binding.var.name_hint, binding.var.struct_info)
        self.var_remap_[binding.var] = var
        if isinstance(binding, MatchCast):
            self.builder_.emit_normalized(MatchCast(var, value, binding.struct_info))
        else:
            self.builder_.emit_normalized(VarBinding(var, value))
        return None


__all__ = ["ToNonDataflow", "to_non_dataflow"]
