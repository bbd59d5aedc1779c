"""Blocks as TVMScript: iteration variables, accesses, allocations, init and body.

Block variables bound directly to enclosing loops with the same domain print as one
``T.axis.remap`` line; any other binding prints one variable per line::

    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
    vi = T.axis.spatial(128, i_0 * 4 + i_1)
    vk = T.axis.reduce((2, 10), k)            # a domain that does not start at 0

``T.reads``/``T.writes`` are always printed, even when empty, as TVM does.
"""
from __future__ import annotations

from ...tir import expr as E
from ...tir.stmt import IterType
from .expr import fold_add, quote
from .stmt import StmtPrinter, is_const

_AXIS_KIND = {IterType.DATA_PAR: "spatial", IterType.COMM_REDUCE: "reduce",
              IterType.ORDERED: "scan", IterType.OPAQUE: "opaque"}
_REMAP_LETTER = {IterType.DATA_PAR: "S", IterType.COMM_REDUCE: "R"}


def same_expr(a, b) -> bool:
    """Deep equality of two expressions where Vars must be the very same Var."""
    if a is b:
        return True
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return a.value == b.value and a.dtype == b.dtype
    if type(a) is not type(b) or isinstance(a, E.Var):
        return False
    from ...ir.structural import structural_equal
    return structural_equal(a, b) and _same_free_vars(a, b)


def _same_free_vars(a, b) -> bool:
    from ...tir.functor import post_order_visit
    found: list[list] = [[], []]
    for k, e in enumerate((a, b)):
        post_order_visit(e, lambda n, out=found[k]: out.append(n) if isinstance(n, E.Var) else None)
    return len(found[0]) == len(found[1]) and all(x is y for x, y in zip(*found))


class BlockPrinter(StmtPrinter):
    """Mixin: ``BlockRealize`` and bare ``Block`` statements."""

    def s_BlockRealize(self, s, concise):
        self.print_block(s.block, s)

    def s_Block(self, s, concise):
        self.print_block(s, None)

    def print_block(self, block, realize) -> None:
        parent = self.frame
        with self.scope() as frame:
            self._iter_vars(block, realize)
            if realize is not None and not is_const(realize.predicate, 1):
                frame.emit(f"T.where({self.expr(realize.predicate)})")
            frame.emit(f"T.reads({', '.join(self.region_text(r) for r in block.reads)})")
            frame.emit(f"T.writes({', '.join(self.region_text(r) for r in block.writes)})")
            if block.annotations:
                frame.emit(f"T.block_attr({self.dict_value(block.annotations)})")
            for buffer in block.alloc_buffers:
                self.emit_alloc_buffer(buffer, frame)
            for match in block.match_buffers:
                self.emit_match_buffer(match, frame)
            if block.init is not None:
                with self.scope() as init_frame:
                    self.body(block.init)
                frame.emit_scope("with T.init():", init_frame)
            self.body(block.body)
        no_realize = "" if realize is not None else ", no_realize=True"
        parent.emit_scope(f"with T.block({quote(block.name_hint)}{no_realize}):", frame)

    def emit_alloc_buffer(self, buffer, frame) -> None:
        rhs = self.buffer_call(buffer, "T.alloc_buffer", (), frame)
        frame.emit(f"{self.define_buffer(buffer, frame)} = {rhs}")

    def emit_match_buffer(self, match, frame) -> None:
        source = self.region_text(match.source)
        rhs = self.buffer_call(match.buffer, "T.match_buffer", (source,), frame)
        frame.emit(f"{self.define_buffer(match.buffer, frame)} = {rhs}")

    # -- iteration variables ------------------------------------------------------------
    def _iter_vars(self, block, realize) -> None:
        pending: list[int] = []
        for k, iter_var in enumerate(block.iter_vars):
            if self._remappable(iter_var, realize, k):
                pending.append(k)
                continue
            self._flush_remap(block, realize, pending)
            self._single_iter_var(block, realize, k)
        self._flush_remap(block, realize, pending)

    def _remappable(self, iter_var, realize, k) -> bool:
        """TVM's rule: a spatial/reduce var bound to an enclosing loop var whose loop has
        exactly the var's domain (same min, same extent)."""
        if realize is None or iter_var.iter_type not in _REMAP_LETTER:
            return False
        loop = self.loops.get(realize.iter_values[k])
        return (loop is not None and same_expr(loop.min, iter_var.dom.min)
                and same_expr(loop.extent, iter_var.dom.extent))

    def _flush_remap(self, block, realize, pending: list) -> None:
        if len(pending) == 1:
            self._single_iter_var(block, realize, pending[0])
        elif pending:
            names = [self.define_var(block.iter_vars[k].var) for k in pending]
            loops = [self.expr(realize.iter_values[k]) for k in pending]
            kinds = "".join(_REMAP_LETTER[block.iter_vars[k].iter_type] for k in pending)
            self.frame.emit(f"{', '.join(names)} = T.axis.remap({quote(kinds)}, "
                            f"[{', '.join(loops)}])")
        pending.clear()

    def _single_iter_var(self, block, realize, k) -> None:
        iter_var = block.iter_vars[k]
        kind = _AXIS_KIND.get(iter_var.iter_type, iter_var.iter_type.value)
        dom = iter_var.dom
        if is_const(dom.min, 0):
            args = [self.expr(dom.extent)]
        else:
            args = [f"({self.expr(dom.min)}, {self.expr(fold_add(dom.min, dom.extent))})"]
        if realize is not None:
            args.append(self.expr(realize.iter_values[k]))
        rhs = f"T.axis.{kind}({', '.join(args)})"
        self.frame.emit(f"{self.define_var(iter_var.var)} = {rhs}")
