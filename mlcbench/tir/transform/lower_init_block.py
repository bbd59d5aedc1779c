"""LowerInitBlock: turn a reduction block's ``T.init()`` into an explicit guarded store.

A reduction block runs its ``init`` the first time it meets each output element, i.e.
when every *reduce* iteration variable sits at the minimum of its domain. Lowering
spells that out so later passes (and the code generator) only see plain statements.

Before::

    with T.block("Y"):
        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
        with T.init():
            Y[vi, vj] = T.float32(0)
        Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]

After::

    with T.block("Y"):
        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
        if vk == 0:
            Y[vi, vj] = T.float32(0)
        Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]

A domain that does not start at zero (``T.axis.reduce((2, 10), k)``) compares with its
minimum (``vk == 2``). A block with an init but no reduce variable runs the init
unconditionally.
"""
from __future__ import annotations

from ...ir.transform import prim_func_pass
from ..expr import EQ, And, binary
from ..functor import StmtExprMutator
from ..stmt import Block, IfThenElse, IterType, seq


def init_condition(block: Block):
    """``vk == min_k and ...`` over the reduce iteration variables; ``None`` if there are none."""
    condition = None
    for iter_var in block.iter_vars:
        if iter_var.iter_type != IterType.COMM_REDUCE:
            continue
        at_min = binary(EQ, iter_var.var, iter_var.dom.min)
        condition = at_min if condition is None else binary(And, condition, at_min)
    return condition


class _InitLowerer(StmtExprMutator):
    def visit_Block(self, block: Block):
        block = self.generic_visit(block)
        if block.init is None:
            return block
        condition = init_condition(block)
        init = block.init if condition is None else IfThenElse(condition, block.init)
        return block.replace(body=seq(init, block.body), init=None)


@prim_func_pass(opt_level=0, name="tir.LowerInitBlock")
def _lower_init_block(func, mod, ctx):
    body = _InitLowerer().visit(func.body)
    return func if body is func.body else func.with_body(body)


def LowerInitBlock():
    """Pass: replace each block ``init`` by ``if <reduce vars at their min>: init``."""
    return _lower_init_block
