"""Normalize: put Relax functions in A-normal form, the form every other pass expects.

The rules (TVM's normal form):

* a function body and each arm of an ``If`` is a ``SeqExpr`` whose result is a leaf
  (a variable, a constant, a tuple of leaves ...);
* call arguments, tuple fields, the tuple of a ``TupleGetItem`` and the condition of an
  ``If`` are leaves: nested computations get their own binding first;
* no empty binding blocks, and no two adjacent blocks of the same kind.

Before::

    Function([x, y], R.add(R.multiply(x, y), y))

After::

    @R.function
    def main(x: R.Tensor((2,), "float32"), y: R.Tensor((2,), "float32")):
        gv = R.multiply(x, y)
        gv1 = R.add(gv, y)
        return gv1
"""
from __future__ import annotations

from ...ir.module import IRModule
from ...ir.transform import module_pass
from ..block_builder import BlockBuilder
from ..expr import (BindingBlock, Call, DataflowBlock, Function, If, MatchCast, SeqExpr, Tuple,
                    TupleGetItem, VarBinding, is_leaf)


@module_pass(opt_level=1, name="Normalize")
class Normalize:
    """Put every Relax function of the module in A-normal form (see the module docstring).

    Example
    -------
    >>> mod = relax.transform.Normalize()(mod)
    """

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        out = None
        for gv, func in mod.items():
            if not isinstance(func, Function):
                continue
            new = normalize_function(func, mod)
            if new is not func:
                out = out or mod.copy()
                out[gv] = new
        return out or mod


def normalize_function(func: Function, mod: IRModule | None = None) -> Function:
    """``func`` in A-normal form; ``func`` itself when it already is."""
    return _Normalizer(mod).function(func)


class _Normalizer:
    def __init__(self, mod):
        self.builder = BlockBuilder(mod)

    def function(self, func: Function) -> Function:
        body = self.seq_expr(_as_seq(func.body))
        return func if body is func.body else func.replace(body=body)

    def seq_expr(self, seq: SeqExpr) -> SeqExpr:
        blocks = [self.block(b) for b in seq.blocks]
        self.builder.begin_binding_block()
        body = self.leaf(seq.body)
        blocks.append(self.builder.end_block())
        blocks = _merge_adjacent([b for b in blocks if b.bindings])
        if body is seq.body and len(blocks) == len(seq.blocks) and all(
                a is b for a, b in zip(blocks, seq.blocks)):
            return seq
        return SeqExpr(blocks, body)

    def block(self, block: BindingBlock) -> BindingBlock:
        if isinstance(block, DataflowBlock):
            self.builder.begin_dataflow_block()
        else:
            self.builder.begin_binding_block()
        for binding in block.bindings:
            self.binding(binding)
        new = self.builder.end_block()
        same = len(new.bindings) == len(block.bindings) and all(
            a is b for a, b in zip(new.bindings, block.bindings))
        return block if same else new

    def binding(self, binding) -> None:
        value = self.value(binding.value)
        if value is not binding.value:
            binding = MatchCast(binding.var, value, binding.struct_info) \
                if isinstance(binding, MatchCast) else VarBinding(binding.var, value)
        self.builder.emit_normalized(binding)

    def value(self, expr):
        """One step of computation whose operands are leaves (bound first if needed)."""
        if isinstance(expr, Call):
            args = [self.leaf(a) for a in expr.args]
            return expr if _same(args, expr.args) else \
                Call(expr.op, args, expr.attrs, expr.sinfo_args)
        if isinstance(expr, Tuple):
            fields = [self.leaf(f) for f in expr.fields]
            return expr if _same(fields, expr.fields) else Tuple(fields)
        if isinstance(expr, TupleGetItem):
            tup = self.leaf(expr.tuple_value)
            return expr if tup is expr.tuple_value else TupleGetItem(tup, expr.index)
        if isinstance(expr, If):
            cond = self.leaf(expr.cond)
            arms = [self.seq_expr(_as_seq(arm)) for arm in (expr.true_branch, expr.false_branch)]
            if cond is expr.cond and arms[0] is expr.true_branch and arms[1] is expr.false_branch:
                return expr
            return If(cond, *arms)
        if isinstance(expr, Function):
            return self.function(expr)
        if isinstance(expr, SeqExpr):
            return self.seq_expr(expr)
        return expr

    def leaf(self, expr):
        """``expr`` as a leaf: a non-leaf is normalized and bound to a new variable."""
        if is_leaf(expr) or isinstance(expr, Tuple):
            return self.value(expr)
        return self.builder.emit(self.value(expr))


def _as_seq(expr) -> SeqExpr:
    return expr if isinstance(expr, SeqExpr) else SeqExpr([], expr)


def _same(new, old) -> bool:
    return all(a is b for a, b in zip(new, old))


def _merge_adjacent(blocks: list) -> list:
    merged: list = []
    for block in blocks:
        if merged and type(merged[-1]) is type(block):
            merged[-1] = type(block)([*merged[-1].bindings, *block.bindings])
        else:
            merged.append(block)
    return merged


__all__ = ["Normalize", "normalize_function"]
