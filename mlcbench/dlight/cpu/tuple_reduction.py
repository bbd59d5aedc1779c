"""Split a reduction with several independent outputs into one block per output.

layer_norm reduces each row to its sum and its sum of squares in one block::

    for i0, k1 in T.grid(128, 768):
        with T.block("red"):
            v_i0, v_k1 = T.axis.remap("SR", [i0, k1])
            with T.init():
                red_v0[v_i0] = T.float32(0)
                red_v1[v_i0] = T.float32(0)
            v0: T.float32 = red_v0[v_i0] + x[v_i0, v_k1]
            v1: T.float32 = red_v1[v_i0] + x[v_i0, v_k1] * x[v_i0, v_k1]
            red_v0[v_i0] = v0
            red_v1[v_i0] = v1

``rfactor`` (and so the vector partial sums of the Reduction rule) handles a block with
one output only, so this one ran as a scalar chain of adds. Neither output reads the
other, so the block becomes two blocks, each under its own copy of the loops, each a
plain ``red_vN[v_i0] = red_vN[v_i0] + e`` that rfactor understands. The row is read
twice, from L1. Reductions whose outputs depend on each other (argmax's index and
value) are left alone.
"""
from __future__ import annotations

from ...tir.expr import Add, BufferLoad, Var
from ...tir.functor import StmtExprMutator, post_order_visit, substitute
from ...tir.stmt import Block, BlockRealize, BufferStore, For, IterVar, LetStmt, SeqStmt, seq


def _components(block: Block):
    """``[(init_store, output_store, combined_value)]`` when ``block`` is a reduction
    whose outputs each add a value that reads no other output and no other let; None
    otherwise."""
    if block.init is None or not isinstance(block.init, SeqStmt):
        return None
    # Keyed by id(): == on expressions builds an EQ node instead of comparing.
    lets, body = {}, block.body             # id(var) -> value
    while isinstance(body, LetStmt):
        lets[id(body.var)] = body.value
        body = body.body
    stores, inits = getattr(body, "seq", ()), block.init.seq
    if len(stores) < 2 or len(stores) != len(inits):
        return None
    outputs = {s.buffer for s in stores}
    found = []
    for init, store in zip(inits, stores):
        value = lets.get(id(store.value)) if isinstance(store.value, Var) else store.value
        addend = _addend(value, store)
        if (addend is None or not isinstance(init, BufferStore) or init.buffer is not store.buffer
                or _reads_any(addend, outputs, set(lets))):
            return None
        found.append((init, store, addend))
    return found


def _addend(value, store):
    """``e`` when ``value`` is ``store.buffer[store.indices] + e`` (either order)."""
    if not isinstance(value, Add):
        return None
    for own, other in ((value.a, value.b), (value.b, value.a)):
        # Text equality stands in for structural equality of these small indices.
        if (isinstance(own, BufferLoad) and own.buffer is store.buffer
                and all(str(a) == str(b) for a, b in zip(own.indices, store.indices))):
            return other
    return None


def _reads_any(expr, buffers, let_var_ids) -> bool:
    hits = []
    post_order_visit(expr, lambda n: hits.append(n) if (
        (isinstance(n, BufferLoad) and n.buffer in buffers) or id(n) in let_var_ids) else None)
    return bool(hits)


def _one_output_block(block: Block, n: int, init, store, addend) -> Block:
    """Block ``n`` of the split, with fresh iterators (binders are identities)."""
    # Each split block binds its own iterators: binders must not be shared between blocks.
    fresh = {iv.var: Var(iv.var.name, iv.var.dtype) for iv in block.iter_vars}
    load = BufferLoad(store.buffer, store.indices)
    body = BufferStore(store.buffer, load + addend, store.indices)
    new = Block(tuple(IterVar(iv.dom, fresh[iv.var], iv.iter_type) for iv in block.iter_vars),
                substitute(block.reads, fresh),
                substitute(tuple(w for w in block.writes if w.buffer is store.buffer), fresh),
                f"{block.name_hint}_v{n}", substitute(body, fresh), substitute(init, fresh))
    return new


class _Split(StmtExprMutator):
    def visit_SeqStmt(self, stmt):
        parts = [self.visit(s) for s in stmt.seq]
        return stmt if all(a is b for a, b in zip(parts, stmt.seq)) else seq(*parts)

    def visit_For(self, loop):
        nest, body = [loop], loop.body
        while isinstance(body, For):
            nest.append(body)
            body = body.body
        parts = _components(body.block) if isinstance(body, BlockRealize) else None
        if parts is None:
            return self.generic_visit(loop)
        return seq(*[_copy_nest(nest, body, _one_output_block(body.block, n, *part))
                     for n, part in enumerate(parts)])


def _copy_nest(nest, realize: BlockRealize, block: Block):
    """The loops ``nest`` around ``block`` with fresh loop variables."""
    fresh = {lp.loop_var: Var(lp.loop_var.name, lp.loop_var.dtype) for lp in nest}
    stmt = BlockRealize(substitute(realize.iter_values, fresh),
                        substitute(realize.predicate, fresh), block)
    for lp in reversed(nest):
        stmt = lp.replace(loop_var=fresh[lp.loop_var], min=substitute(lp.min, fresh),
                          extent=substitute(lp.extent, fresh), body=stmt)
    return stmt


def split_tuple_reductions(func):
    """``func`` with every independent multi-output reduction split (module docstring)."""
    body = _Split().visit(func.body)
    return func if body is func.body else func.with_body(body)
