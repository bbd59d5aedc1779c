"""Visitors and mutators over Relax expressions, spelled as in TVM.

Override ``visit_<kind>_`` methods (``visit_call_``, ``visit_var_``, ``visit_function_``
...). A mutator rebuilds functions through its ``builder_`` (a BlockBuilder), so
bindings are renormalized and ``lookup_binding`` finds what a variable is bound to.
The course's rewrite of ``add(multiply(a, b), c)`` into one fused op::

    @relax.expr_functor.mutator
    class EwiseFMARewriter(relax.PyExprMutator):
        def visit_call_(self, call):
            call = self.visit_expr_post_order(call)
            if call.op != Op.get("relax.add"):
                return call
            value = self.lookup_binding(call.args[0])
            if not isinstance(value, relax.Call) or value.op != Op.get("relax.multiply"):
                return call
            return relax.Call(Op.get("relax.ewise_fma"), [*value.args, call.args[1]])

    new_main = EwiseFMARewriter().visit_expr(mod["main"])
"""
from __future__ import annotations

from ..ir.errors import InvalidTypeError
from ..ir.module import GlobalVar
from ..ir.op import Op
from .block_builder import BlockBuilder
from .expr import (BindingBlock, Call, Constant, DataflowBlock, DataflowVar, ExternFunc,
                   Function, If, MatchCast, PrimValue, SeqExpr, ShapeExpr, StringImm, Tuple,
                   TupleGetItem, Var, VarBinding)

_KINDS = {Var: "var_", DataflowVar: "dataflow_var_", Constant: "constant_", Call: "call_",
          Tuple: "tuple_", TupleGetItem: "tuple_getitem_", ShapeExpr: "shape_expr_",
          PrimValue: "prim_value_", StringImm: "string_imm_", If: "if_",
          Function: "function_", SeqExpr: "seq_expr_", GlobalVar: "global_var_",
          Op: "op_", ExternFunc: "extern_func_"}


def _kind(expr) -> str:
    for klass in type(expr).__mro__:
        if klass in _KINDS:
            return _KINDS[klass]
    raise InvalidTypeError(f"not a Relax expression: {type(expr).__name__}")


class ExprVisitor:
    """Walks an expression; override ``visit_<kind>_`` to act on nodes of a kind."""

    def visit_expr(self, expr) -> None:
        getattr(self, "visit_" + _kind(expr))(expr)

    def visit_leaf_(self, expr) -> None:
        pass

    visit_var_ = visit_dataflow_var_ = visit_constant_ = visit_leaf_
    visit_prim_value_ = visit_string_imm_ = visit_shape_expr_ = visit_leaf_
    visit_global_var_ = visit_op_ = visit_extern_func_ = visit_leaf_

    def visit_call_(self, call: Call) -> None:
        self.visit_expr(call.op)
        for arg in call.args:
            self.visit_expr(arg)

    def visit_tuple_(self, tup: Tuple) -> None:
        for field in tup.fields:
            self.visit_expr(field)

    def visit_tuple_getitem_(self, item: TupleGetItem) -> None:
        self.visit_expr(item.tuple_value)

    def visit_if_(self, node: If) -> None:
        for part in (node.cond, node.true_branch, node.false_branch):
            self.visit_expr(part)

    def visit_function_(self, func: Function) -> None:
        for param in func.params:
            self.visit_var_def(param)
        self.visit_expr(func.body)

    def visit_seq_expr_(self, seq: SeqExpr) -> None:
        for block in seq.blocks:
            self.visit_binding_block(block)
        self.visit_expr(seq.body)

    def visit_binding_block(self, block: BindingBlock) -> None:
        for binding in block.bindings:
            self.visit_binding(binding)

    def visit_binding(self, binding) -> None:
        self.visit_expr(binding.value)
        self.visit_var_def(binding.var)

    def visit_var_def(self, var: Var) -> None:
        pass


class ExprMutator:
    """Rebuilds an expression bottom-up; unchanged parts are returned as they were."""

    def __init__(self, mod=None):
        self.builder_ = BlockBuilder(mod)
        self.var_remap_: dict = {}

    def visit_expr(self, expr):
        return getattr(self, "visit_" + _kind(expr))(expr)

    def visit_expr_post_order(self, expr):
        """Rebuild ``expr`` from its visited children, without the overrides for ``expr``
        itself (call it first in an override, as the course does)."""
        return getattr(ExprMutator, "visit_" + _kind(expr))(self, expr)

    def lookup_binding(self, var):
        """The value ``var`` is bound to in the function being rebuilt, or None."""
        return self.builder_.lookup_binding(var)

    # -- leaves -------------------------------------------------------------------------
    def visit_var_(self, var):
        return self.var_remap_.get(var, var)

    visit_dataflow_var_ = visit_var_

    def visit_leaf_(self, expr):
        return expr

    visit_constant_ = visit_prim_value_ = visit_string_imm_ = visit_shape_expr_ = visit_leaf_
    visit_global_var_ = visit_op_ = visit_extern_func_ = visit_leaf_

    # -- composite ----------------------------------------------------------------------
    def visit_call_(self, call):
        op = self.visit_expr(call.op)
        args = [self.visit_expr(a) for a in call.args]
        if op is call.op and all(a is b for a, b in zip(args, call.args)):
            return call
        return Call(op, args, call.attrs, call.sinfo_args)

    def visit_tuple_(self, tup):
        fields = [self.visit_expr(f) for f in tup.fields]
        return tup if all(a is b for a, b in zip(fields, tup.fields)) else Tuple(fields)

    def visit_tuple_getitem_(self, item):
        value = self.visit_expr(item.tuple_value)
        return item if value is item.tuple_value else TupleGetItem(value, item.index)

    def visit_if_(self, node):
        cond = self.visit_expr(node.cond)
        true_branch = self.visit_expr(node.true_branch)
        false_branch = self.visit_expr(node.false_branch)
        if (cond, true_branch, false_branch) == (node.cond, node.true_branch, node.false_branch):
            return node
        return If(cond, true_branch, false_branch)

    def visit_function_(self, func):
        params = [self.visit_var_def(p) for p in func.params]
        body = self.visit_expr(func.body)
        if body is func.body and all(a is b for a, b in zip(params, func.params)):
            return func
        ret = func.ret_struct_info if type(body.struct_info) is type(func.ret_struct_info) \
            else body.struct_info
        return Function(params, body, ret, func.is_pure, func.attrs)

    def visit_seq_expr_(self, seq):
        blocks = [self.visit_binding_block(b) for b in seq.blocks]
        body = self.visit_expr(seq.body)
        blocks = [b for b in blocks if b.bindings]
        if body is seq.body and len(blocks) == len(seq.blocks) and all(
                a is b for a, b in zip(blocks, seq.blocks)):
            return seq
        return SeqExpr(blocks, body)

    def visit_binding_block(self, block):
        if isinstance(block, DataflowBlock):
            self.builder_.begin_dataflow_block()
        else:
            self.builder_.begin_binding_block()
        for binding in block.bindings:
            self.visit_binding(binding)
        new_block = self.builder_.end_block()
        same = len(new_block.bindings) == len(block.bindings) and all(
            a is b for a, b in zip(new_block.bindings, block.bindings))
        return block if same else new_block

    def visit_binding(self, binding):
        value = self.visit_expr(binding.value)
        if value is binding.value and binding.var not in self.var_remap_:
            self.builder_.emit_normalized(binding)
            return
        value = self.builder_.normalize(value)
        sinfo = binding.struct_info if isinstance(binding, MatchCast) \
            else self.builder_.struct_info_of(value)
        var = type(binding.var)(binding.var.name_hint, sinfo)
        self.var_remap_[binding.var] = var
        if isinstance(binding, MatchCast):
            self.builder_.emit_normalized(MatchCast(var, value, binding.struct_info))
        else:
            self.builder_.emit_normalized(VarBinding(var, value))

    def visit_var_def(self, var):
        return self.var_remap_.get(var, var)


class PyExprMutator(ExprMutator):
    """The mutator to subclass in Python (TVM's name); see the module docstring."""


class PyExprVisitor(ExprVisitor):
    """The visitor to subclass in Python (TVM's name)."""


def mutator(cls):
    """Class decorator of TVM's API; Python mutators need no extra wrapping here."""
    return cls


def visitor(cls):
    """Class decorator of TVM's API; Python visitors need no extra wrapping here."""
    return cls
