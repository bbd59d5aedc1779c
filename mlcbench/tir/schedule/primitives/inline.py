"""compute_inline / reverse_compute_inline: fold an elementwise block into its
neighbours and drop the intermediate buffer.

``compute_inline(B)`` where ``B[vi] = A[vi] * 2`` and ``C[vi] = B[vi] + 1``
leaves ``C[vi] = A[vi] * 2 + 1``. ``reverse_compute_inline(C)`` on the same pair
leaves block B computing ``C[vi] = A[vi] * 2 + 1``.
"""
from __future__ import annotations

from ..errors import fail
from ..ir_utils import block_realizes_under, find_all, find_block, replace_stmts
from ...expr import BufferLoad, Var
from ...function import PrimFunc
from ...functor import StmtExprMutator, post_order_visit, substitute
from ...stmt import Block, BlockRealize, BufferStore, IterType
from ....ir.structural import structural_equal
from .compute_location import _own_nest_top


def _check_elementwise(func, primitive, block: Block) -> BufferStore:
    name = block.name_hint
    store = block.body
    if not isinstance(store, BufferStore) or block.init is not None:
        fail(primitive, f"block {name!r} must be a single BufferStore without T.init()", func,
             blocks=[name])
    if any(iv.iter_type != IterType.DATA_PAR for iv in block.iter_vars):
        fail(primitive, f"block {name!r} has a reduction iter var; only spatial blocks can be "
             "inlined", func, blocks=[name])
    if store.buffer in func.buffer_map.values() and primitive == "compute_inline":
        fail(primitive, f"block {name!r} writes the function parameter {store.buffer.name!r}; "
             "an output cannot be inlined", func, blocks=[name])
    return store


def _index_vars(func, primitive, block, indices, what):
    """The iter vars used as ``indices``, which must be distinct bare iter vars."""
    own = {iv.var for iv in block.iter_vars}
    if not all(isinstance(i, Var) and i in own for i in indices) or len(set(indices)) != len(
            indices) or len(indices) != len(own):
        fail(primitive, f"{what} of block {block.name_hint!r} must be indexed by its iter vars "
             f"exactly once each (found [{', '.join(str(i) for i in indices)}])", func,
             blocks=[block.name_hint])
    return list(indices)


class _ReplaceLoads(StmtExprMutator):
    def __init__(self, buffer, make):
        self.buffer, self.make = buffer, make

    def visit_BufferLoad(self, load):
        load = self.generic_visit(load)
        return self.make(load) if load.buffer is self.buffer else load


def _merge_regions(regions, extra):
    out = list(regions)
    for region in extra:
        if not any(structural_equal(region, r) for r in out):
            out.append(region)
    return tuple(out)


def _drop_alloc(func, buffer):
    root = func.body.block
    allocs = tuple(b for b in root.alloc_buffers if b is not buffer)
    return func.with_body(func.body.replace(block=root.replace(alloc_buffers=allocs)))


def _writers(func, buffer):
    return [h for h in find_all(func, lambda n: isinstance(n, BlockRealize) and any(
        r.buffer is buffer for r in n.block.writes))]


def compute_inline(func: PrimFunc, block_name: str) -> PrimFunc:
    """Substitute the value block ``block_name`` stores into every load of its buffer."""
    hit = find_block(func, block_name, "compute_inline")
    block = hit.node.block
    store = _check_elementwise(func, "compute_inline", block)
    ivs = _index_vars(func, "compute_inline", block, store.indices, "the stored buffer")
    if len(_writers(func, store.buffer)) != 1:
        fail("compute_inline", f"buffer {store.buffer.name!r} has several writers", func,
             blocks=[block_name])
    nest_top = _own_nest_top(func, "compute_inline", hit)

    def make(load):
        return substitute(store.value, dict(zip(ivs, load.indices)))
    mapping = {nest_top: None}
    for realize in block_realizes_under(func.body):
        other = realize.block
        if other is block or not any(r.buffer is store.buffer for r in other.reads):
            continue
        new_block = _ReplaceLoads(store.buffer, make).visit(other)
        reads = [r for r in other.reads if r.buffer is not store.buffer]
        for region in other.reads:
            if region.buffer is store.buffer:
                sub = {iv: rng.min for iv, rng in zip(ivs, region.region)}
                reads.extend(substitute(block.reads, sub))
        mapping[realize] = realize.replace(block=new_block.replace(
            reads=_merge_regions([], reads)))
    new_func = replace_stmts(func, mapping)
    _check_no_loads_left(new_func, store.buffer, block_name)
    return _drop_alloc(new_func, store.buffer)


def _check_no_loads_left(func, buffer, block_name):
    """A load of the inlined buffer that no block declares reading (an assert, a
    condition or an opaque access in the root block) would read a buffer that no longer
    exists: refuse instead of dropping it."""
    left = []
    post_order_visit(func.body, lambda n: left.append(n) if isinstance(n, BufferLoad)
                     and n.buffer is buffer else None)
    if left:
        fail("compute_inline", f"buffer {buffer.name!r} of block {block_name!r} is also read "
             f"outside the blocks that declare reading it (at {left[0]}), which cannot take "
             "the inlined value", func, blocks=[block_name])


def reverse_compute_inline(func: PrimFunc, block_name: str) -> PrimFunc:
    """Fold consumer ``block_name`` into the block producing the buffer it reads."""
    hit = find_block(func, block_name, "reverse_compute_inline")
    block = hit.node.block
    store = _check_elementwise(func, "reverse_compute_inline", block)
    sources = [r.buffer for r in block.reads if r.buffer not in func.buffer_map.values()
               and r.buffer is not store.buffer]
    producers = [(b, _writers(func, b)) for b in sources]
    producers = [(b, w) for b, w in producers if w]
    if len(producers) != 1 or len(producers[0][1]) != 1:
        fail("reverse_compute_inline", f"block {block_name!r} must read exactly one "
             "intermediate buffer with exactly one producer block", func, blocks=[block_name])
    buffer, [producer_hit] = producers[0]
    producer = producer_hit.node.block
    p_store = _check_elementwise(func, "reverse_compute_inline", producer)
    loads = []
    _collect_loads(store.value, buffer, loads)
    readers = [h for h in find_all(func, lambda n: isinstance(n, BlockRealize) and any(
        r.buffer is buffer for r in n.block.reads))]
    if not loads or len(readers) != 1:
        fail("reverse_compute_inline", f"block {block_name!r} must be the only reader of "
             f"{buffer.name!r} and load it in its stored value", func, blocks=[block_name])
    p_vars = _index_vars(func, "reverse_compute_inline", producer, p_store.indices,
                         f"the store to {buffer.name!r}")
    first = _index_vars(func, "reverse_compute_inline", block, loads[0].indices,
                        f"the load of {buffer.name!r}")
    if any(not structural_equal(load.indices, loads[0].indices) for load in loads):
        fail("reverse_compute_inline", f"block {block_name!r} loads {buffer.name!r} at "
             "different indices", func, blocks=[block_name])
    vmap = dict(zip(first, p_store.indices))
    doms = {iv.var: iv.dom for iv in block.iter_vars + producer.iter_vars}
    if not all(structural_equal(doms[c], doms[p]) for c, p in zip(first, p_vars)):
        fail("reverse_compute_inline", f"blocks {producer.name_hint!r} and {block_name!r} "
             f"iterate over different domains of {buffer.name!r}", func,
             blocks=[producer.name_hint, block_name])
    new_value = _ReplaceLoads(buffer, lambda load: p_store.value).visit(
        substitute(store.value, vmap))
    new_store = BufferStore(store.buffer, new_value, substitute(store.indices, vmap))
    reads = [r for r in producer.reads] + [substitute(r, vmap) for r in block.reads
                                           if r.buffer is not buffer]
    new_producer = producer.replace(body=new_store, reads=_merge_regions([], reads),
                                    writes=tuple(substitute(block.writes, vmap)))
    nest_top = _own_nest_top(func, "reverse_compute_inline", hit)
    func = replace_stmts(func, {nest_top: None, producer_hit.node: producer_hit.node.replace(
        block=new_producer)})
    return _drop_alloc(func, buffer)


def _collect_loads(expr, buffer, out):
    post_order_visit(expr, lambda n: out.append(n) if isinstance(n, BufferLoad)
                     and n.buffer is buffer else None)
