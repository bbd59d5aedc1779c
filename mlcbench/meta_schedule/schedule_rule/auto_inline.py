"""AutoInline: inline cheap elementwise blocks into their consumers.

``B = A + 1; C = relu(B)`` becomes one block ``C = relu(A + 1)``: the intermediate
buffer and a pass over memory disappear. The checks follow TVM's rule: a block is
inlined when it is spatial, not an output, reads each buffer through an injective and
ordered index map (``A[i, j - 1]`` yes, ``A[j, i]`` or ``A[i, i]`` no), and (unless the
whole function is elementwise) calls none of ``disallow_op`` and has no if-then-else,
which inlining would repeat for every use.
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.expr import Add, Call, IntImm, Select, Sub, Var
from ...tir.functor import post_order_visit
from ...tir.stmt import BlockRealize, IfThenElse
from ..block_analysis import (has_block, is_output_block, is_root_block, is_spatial_block,
                              locate_block)
from .schedule_rule import ScheduleRule

INLINE_RULE_ANNOTATION = "meta_schedule.inline_rule"


class AutoInline(ScheduleRule):
    """Inline spatial blocks into their consumers (or, with ``into_producer``, fold a
    consumer into its producer).

    Examples
    --------
    >>> rule = AutoInline(into_producer=False, into_consumer=True)
    >>> rule.apply(sch, sch.get_block("B"))       # doctest: +SKIP
    [<Schedule where B is inlined into C>]
    """

    def __init__(self, into_producer: bool = False, into_consumer: bool = True,
                 inline_const_tensor: bool = True, disallow_if_then_else: bool = True,
                 require_injective: bool = True, require_ordered: bool = True,
                 disallow_op=None):
        self.into_producer = into_producer
        self.into_consumer = into_consumer
        self.inline_const_tensor = inline_const_tensor
        self.disallow_if_then_else = disallow_if_then_else
        self.require_injective = require_injective
        self.require_ordered = require_ordered
        self.disallow_op = list(disallow_op or [])

    def apply(self, sch, block) -> list:
        if not has_block(sch, block) or is_root_block(sch, block):
            return [sch]
        for kind in self._inline_kinds(sch, block):
            try:
                getattr(sch, kind)(block)
                break
            except ScheduleError:       # a refused primitive leaves sch unchanged
                continue
        return [sch]

    def _inline_kinds(self, sch, block_rv) -> list:
        """The primitives worth trying, most preferred first."""
        func_name, hit = locate_block(sch, block_rv)
        block = hit.node.block
        if not is_spatial_block(block) or block.annotations.get(INLINE_RULE_ANNOTATION) == \
                "disable":
            return []
        if self.inline_const_tensor and not block.reads and len(block.writes) == 1 \
                and not is_output_block(sch, block_rv):
            return ["compute_inline"]
        if not _spatial_function(sch.mod[func_name]) and not self._cheap_body(block):
            return []
        if len(block.writes) != 1 or not self._simple_reads(block):
            return []
        kinds = []
        if self.into_consumer and not is_output_block(sch, block_rv):
            kinds.append("compute_inline")
        if self.into_producer:
            kinds.append("reverse_compute_inline")
        return kinds

    def _cheap_body(self, block) -> bool:
        found = []

        def visit(node):
            if isinstance(node, Call) and node.op in self.disallow_op:
                found.append(node.op)
            if self.disallow_if_then_else and (isinstance(node, (IfThenElse, Select)) or (
                    isinstance(node, Call) and node.op == "tir.if_then_else")):
                found.append("if_then_else")
        post_order_visit(block.body, visit)
        return not found

    def _simple_reads(self, block) -> bool:
        write = block.writes[0]
        for read in block.reads:
            injective, ordered = read_write_pattern(read, write)
            if (self.require_injective and not injective) or \
                    (self.require_ordered and not ordered):
                return False
        return True

    def __repr__(self) -> str:
        return (f"AutoInline(into_producer={self.into_producer}, "
                f"into_consumer={self.into_consumer}, disallow_op={self.disallow_op})")


def _spatial_function(func) -> bool:
    blocks = []
    post_order_visit(func.body, lambda n: blocks.append(n.block)
                     if isinstance(n, BlockRealize) else None)
    return all(is_spatial_block(b) for b in blocks[:-1])      # the last one is the root


def _var_plus_const(expr):
    """The Var of ``v``, ``v + c`` or ``v - c``, else None."""
    if isinstance(expr, Var):
        return expr
    if isinstance(expr, (Add, Sub)) and isinstance(expr.a, Var) and isinstance(expr.b, IntImm):
        return expr.a
    return None


def read_write_pattern(read, write) -> tuple[bool, bool]:
    """``(injective, ordered)`` of the map from write indices to read indices, as TVM's
    ``AnalyzeReadWritePattern``: every read index is a constant or ``v + c`` for a write
    index ``v``; injective when no write index is read twice, ordered when they are read
    in the order they are written."""
    position = {}
    for n, rng in enumerate(write.region):
        if not isinstance(rng.min, Var):
            return False, False
        position[id(rng.min)] = n
    mapped = []
    for rng in read.region:
        if isinstance(rng.min, IntImm):
            continue
        var = _var_plus_const(rng.min)
        if var is None or id(var) not in position:
            return False, False
        mapped.append(position[id(var)])
    injective = len(set(mapped)) == len(mapped)
    ordered = all(a <= b for a, b in zip(mapped, mapped[1:]))
    return injective, ordered
