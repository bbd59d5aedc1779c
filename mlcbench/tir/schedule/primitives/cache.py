"""cache_read / cache_write: stage a buffer through a copy in another storage scope.

``cache_read(C, 0, "local")`` on a block reading the parameter ``A`` adds, at the start
of the block's scope, a copy of the whole buffer, and makes the readers load it::

    for ax0, ax1 in T.grid(128, 128):
        with T.block("A_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_local[v0, v1] = A[v0, v1]

When the buffer is produced by a block of the same scope, the copy goes right after
that producer, under the lowest loop that holds the producer and every reader, and it
copies the region the producer writes in one iteration of that loop. So after
``compute_at(B, i)`` a ``cache_read`` of ``B`` copies one row inside loop ``i``.

``cache_write(C, 0, "local")`` makes block C write ``C_local`` and adds block ``C_local``
copying it back: under the lowest loop holding C and the blocks that read ``C`` (right
after C's statement there), or at the end of the scope when nothing reads ``C``. The
copy covers what C writes in one iteration of that loop.

Both check region cover: every reader of the copy under the insertion loop must read
only what the copy provides in that iteration (readers that cache_write leaves on the
original buffer see every earlier copy-back, so they need no check). The cache buffer
keeps the full shape; lowering shrinks it to the region actually used
(``CompactBufferAllocation``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ....arith import Analyzer
from ....arith.int_set import IntSet
from ..errors import fail
from ..ir_utils import as_seq_list, find_all, find_block, replace_stmts
from ...buffer import Buffer, BufferRegion
from ...expr import Range, Var, const
from ...function import PrimFunc
from ...functor import StmtExprMutator
from ...stmt import Block, BlockRealize, BufferStore, For, ForKind, IterType, IterVar, seq
from .compute_location import _access_region, _max, _min


def _scoped_copy(func, buffer: Buffer, scope: str) -> Buffer:
    """``A_shared`` for ``A`` in "shared" (``A_shared_1`` when that name is taken)."""
    base = f"{buffer.name}_{scope.replace('.', '_')}"
    taken = set()
    for hit in find_all(func, lambda n: isinstance(n, Block)):
        taken.add(hit.node.name_hint)
        taken.update(b.name for b in hit.node.alloc_buffers)
    taken.update(b.name for _, b in func.buffer_params())
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return Buffer(name, buffer.shape, buffer.dtype, None, (), None, scope)


def _copy_nest(src: Buffer, dst: Buffer, name: str, region, analyzer):
    """``for ax..: with T.block(name): dst[v..] = src[v..]`` over ``region`` (IntSets)."""
    loop_vars = [Var(f"ax{n}", s.dtype) for n, s in enumerate(src.shape)]
    iter_vars = [IterVar(Range(const(0, s.dtype), s), Var(f"v{n}", s.dtype), IterType.DATA_PAR)
                 for n, s in enumerate(src.shape)]
    idx = [iv.var for iv in iter_vars]
    point = lambda buf: BufferRegion(buf, tuple(Range(v, const(1, v.dtype)) for v in idx))
    block = Block(tuple(iter_vars), (point(src),), (point(dst),), name,
                  BufferStore(dst, src[tuple(idx)], tuple(idx)))
    bindings = tuple(var if _is_zero(dim.min_value) else analyzer.simplify(dim.min_value + var)
                     for var, dim in zip(loop_vars, region))
    stmt = BlockRealize(bindings, const(True), block)
    for var, dim in reversed(list(zip(loop_vars, region))):
        extent = analyzer.simplify(dim.max_value - dim.min_value + 1)
        stmt = For(var, const(0, var.dtype), extent, ForKind.SERIAL, stmt)
    return stmt


def _is_zero(expr) -> bool:
    return type(expr).__name__ == "IntImm" and expr.value == 0


class _Retarget(StmtExprMutator):
    """Point loads (and, for writes, stores and regions) of ``old`` at ``new``."""

    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_Buffer(self, buf):
        return self.new if buf is self.old else buf


def _pick(func, primitive, block, regions, index, what):
    buffers = []
    for r in regions:
        if r.buffer not in buffers:
            buffers.append(r.buffer)
    if isinstance(index, str):
        match = [b for b in buffers if b.name == index]
        if match:
            return match[0]
    elif 0 <= index < len(buffers):
        return buffers[index]
    fail(primitive, f"block {block.name_hint!r} has no {what} buffer {index!r}; its {what} "
         f"buffers are {[b.name for b in buffers]}", func, blocks=[block.name_hint])


@dataclass
class _Place:
    """Where the copy goes: the statement list of ``owner`` (a For or the scope Block),
    at ``position``; ``loops`` are the loops from the scope block down to ``owner``."""
    owner: object
    items: list
    position: int
    loops: list


def _scope_accessors(func, scope, buffer, reads: bool):
    """Located BlockRealizes directly in block ``scope`` that read (or write) ``buffer``."""
    out = []
    for hit in find_all(func, lambda n: isinstance(n, BlockRealize)):
        if hit.node.block is scope or not any(isinstance(p, Block) for p in hit.parents):
            continue
        if hit.scope_block() is not scope:
            continue
        regions = hit.node.block.reads if reads else hit.node.block.writes
        if any(r.buffer is buffer for r in regions):
            out.append(hit)
    return out


def _lowest_common(hits, scope) -> tuple:
    """The lowest For (or ``scope``) above every hit, and the loops from scope down to it."""
    chains = [h.parents for h in hits]
    owner, loops = scope, []
    start = next(n for n, p in enumerate(chains[0]) if p is scope)
    for depth in range(start + 1, min(len(c) for c in chains)):
        node = chains[0][depth]
        if any(c[depth] is not node for c in chains):
            break
        if isinstance(node, For):
            owner = node
            loops.append(node)
    return owner, loops


def _items(owner) -> list:
    return as_seq_list(owner.body)


def _item_of(items, hit) -> int:
    return next(n for n, s in enumerate(items) if s is hit.node or any(p is s for p in hit.parents))


def _relaxed(hits, buffer, place, reads, analyzer):
    """Per-dimension IntSets of ``buffer`` accessed by ``hits`` in one iteration of the
    loops of ``place`` (loops below it range over their extents), clipped to the buffer's
    shape (a predicate such as ``T.where(i < 2)`` is not used to narrow the indices)."""
    below = []
    for hit in hits:
        chain = list(hit.parents)
        start = chain.index(place.owner) + 1 if any(p is place.owner for p in chain) else 0
        below.append((hit.node, [p for p in chain[start:] if isinstance(p, For)]))
    sets = _access_region(below, buffer, None, analyzer, reads=reads)
    return [IntSet(analyzer.simplify(_max(s.min_value, const(0, extent.dtype))),
                   analyzer.simplify(_min(s.max_value, extent - 1)))
            for s, extent in zip(sets, buffer.shape)]


def _analyzer(place):
    analyzer = Analyzer()
    for loop in place.loops:
        analyzer.bind(loop.loop_var, Range(loop.min, loop.extent))
    return analyzer


def _check_cover(func, primitive, readers, buffer, place, region, analyzer, copy_name):
    """Every reader under the insertion point reads only what the copy holds."""
    inside = [h for h in readers if any(p is place.owner for p in h.parents)
              or isinstance(place.owner, Block)]
    if not inside:
        return
    wanted = _relaxed(inside, buffer, place, True, analyzer)
    for dim, (have, want) in enumerate(zip(region, wanted)):
        if analyzer.can_prove(want.min_value >= have.min_value) and \
                analyzer.can_prove(want.max_value <= have.max_value):
            continue
        where = f"loop {place.owner.loop_var.name!r}" if isinstance(place.owner, For) \
            else "the block scope"
        fail(primitive, f"the copy {copy_name!r} would hold {buffer.name!r} (dimension {dim}) "
             f"in [{have.min_value}, {have.max_value}] per iteration of {where}, but its "
             f"readers there need [{want.min_value}, {want.max_value}] (values written in "
             f"other iterations); apply {primitive} before compute_at brings the blocks "
             "under one loop",
             func, blocks=[h.node.block.name_hint for h in inside])


def _insert(func, place, copy, cache, scope, retargets):
    """Rebuild ``func`` with ``copy`` inserted, ``retargets`` applied and ``cache`` allocated
    in ``scope``."""
    items = list(place.items)
    items = [replace_stmts(func.with_body(item), retargets).body for item in items]
    items.insert(place.position, copy)
    if isinstance(place.owner, For):
        func = replace_stmts(func, {place.owner: place.owner.replace(body=seq(*items))})
        new_scope = _find_scope(func, scope)
        return replace_stmts(func, {new_scope: new_scope.replace(
            alloc_buffers=new_scope.alloc_buffers + (cache,))})
    return replace_stmts(func, {scope: scope.replace(
        body=seq(*items), alloc_buffers=scope.alloc_buffers + (cache,))})


def _find_scope(func, scope):
    """The rebuilt version of block ``scope`` (blocks are rebuilt, names are kept)."""
    if func.body.block.name_hint == scope.name_hint:
        return func.body.block
    return find_block(func, scope.name_hint, "cache").node.block


def _no_other_writer(func, primitive, writers, me, buffer):
    others = [w for w in writers if w.node is not me.node]
    if others:
        names = [w.node.block.name_hint for w in writers]
        fail(primitive, f"{buffer.name!r} is written by several blocks {names}; the cache copy "
             "needs a single producer to follow (for a reduction, cache before "
             "decompose_reduction splits it into init and update)", func,
             blocks=names)


def _full_region(buffer):
    return [IntSet(const(0, s.dtype), s - 1) for s in buffer.shape]


def cache_read(func: PrimFunc, block_name: str, index, scope: str,
               consumers=None) -> tuple[PrimFunc, str]:
    """Copy the ``index``-th read buffer of the block into ``scope``; readers use it."""
    hit = find_block(func, block_name, "cache_read")
    buffer = _pick(func, "cache_read", hit.node.block, hit.node.block.reads, index, "read")
    cache = _scoped_copy(func, buffer, scope)
    scope_block = hit.scope_block()
    readers = [r for r in _scope_accessors(func, scope_block, buffer, reads=True)
               if consumers is None or r.node.block.name_hint in consumers]
    writers = _scope_accessors(func, scope_block, buffer, reads=False)
    both = [r.node.block.name_hint for r in readers if any(r.node is w.node for w in writers)]
    if both:
        fail("cache_read", f"block {both[0]!r} both reads and writes {buffer.name!r}, so it "
             "cannot read a copy; cache_write that block instead", func, blocks=both)
    if not writers:
        place = _Place(scope_block, _items(scope_block), 0, [])
        region = _full_region(buffer)
    else:
        _no_other_writer(func, "cache_read", writers, writers[0], buffer)
        place, region = _after_writer(func, "cache_read", writers[0], readers, buffer,
                                      scope_block)
    analyzer = _analyzer(place)
    _check_cover(func, "cache_read", readers, buffer, place, region, analyzer, cache.name)
    copy = _copy_nest(buffer, cache, cache.name, region, analyzer)
    retargets = {r.node: _Retarget(buffer, cache).visit(r.node) for r in readers}
    return _insert(func, place, copy, cache, scope_block, retargets), cache.name


def _after_writer(func, primitive, writer, readers, buffer, scope_block):
    """Right after ``writer``'s statement under the lowest loop holding it and ``readers``,
    with the region it writes per iteration there."""
    owner, loops = _lowest_common([writer] + readers, scope_block)
    items = _items(owner)
    position = _item_of(items, writer) + 1
    for reader in readers:
        if reader.node is writer.node:
            continue
        at = _item_of(items, reader)
        if at < position:
            what = "reads" if at < position - 1 else "shares its loops with"
            fail(primitive, f"block {reader.node.block.name_hint!r} {what} {buffer.name!r} "
                 f"before block {writer.node.block.name_hint!r} finishes writing it, so no "
                 "single place for the copy exists", func,
                 blocks=[reader.node.block.name_hint, writer.node.block.name_hint])
    place = _Place(owner, items, position, loops)
    region = _relaxed([writer], buffer, place, False, _analyzer(place))
    return place, region


def cache_write(func: PrimFunc, block_name: str, index, scope: str,
                consumers=None) -> tuple[PrimFunc, str]:
    """Make the block write a ``scope`` copy of its ``index``-th written buffer, then copy
    it back right after the block's statement (see the module docstring for where)."""
    hit = find_block(func, block_name, "cache_write")
    block = hit.node.block
    buffer = _pick(func, "cache_write", block, block.writes, index, "written")
    if block.init is None and any(r.buffer is buffer for r in block.reads):
        fail("cache_write", f"block {block_name!r} reads {buffer.name!r} before writing it "
             "and has no init, so the cache would start uninitialized (its init is in "
             "another block); apply cache_write before decompose_reduction", func,
             blocks=[block_name])
    cache = _scoped_copy(func, buffer, scope)
    scope_block = hit.scope_block()
    _no_other_writer(func, "cache_write", _scope_accessors(func, scope_block, buffer, False),
                     hit, buffer)
    readers = [r for r in _scope_accessors(func, scope_block, buffer, reads=True)
               if r.node is not hit.node]
    if readers:
        place, region = _after_writer(func, "cache_write", hit, readers, buffer, scope_block)
    else:
        items = _items(scope_block)
        place = _Place(scope_block, items, len(items), [])
        region = _relaxed([hit], buffer, place, False, _analyzer(place))
    analyzer = _analyzer(place)
    moved = [r for r in readers if consumers is not None and r.node.block.name_hint in consumers]
    _check_cover(func, "cache_write", moved, buffer, place, region, analyzer, cache.name)
    retargets = {r.node: _Retarget(buffer, cache).visit(r.node) for r in [hit] + moved}
    copy = _copy_nest(cache, buffer, cache.name, region, analyzer)
    return _insert(func, place, copy, cache, scope_block, retargets), cache.name
