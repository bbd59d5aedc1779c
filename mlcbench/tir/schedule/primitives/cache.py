"""cache_read / cache_write: stage a buffer through a copy in another storage scope.

``cache_read(C, 0, "local")`` on a block reading ``A`` adds, before the readers::

    for ax0, ax1 in T.grid(128, 128):
        with T.block("A_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_local[v0, v1] = A[v0, v1]

and makes the readers load ``A_local``. ``cache_write(C, 0, "local")`` makes block C
write ``C_local`` and adds block ``C_local`` copying it back to ``C`` right after.
The cached region is the whole buffer; the copy sits in the root scope, so the block's
loops must be its own (apply caching before compute_at moves neighbours in).
"""
from __future__ import annotations

from ..errors import fail
from ..ir_utils import as_seq_list, block_realizes_under, find_block, replace_stmts
from ...buffer import Buffer, BufferRegion
from ...expr import Range, Var, const
from ...function import PrimFunc
from ...functor import StmtExprMutator
from ...stmt import Block, BlockRealize, BufferStore, For, ForKind, IterType, IterVar, seq


def _scoped_copy(buffer: Buffer, scope: str) -> Buffer:
    name = f"{buffer.name}_{scope.replace('.', '_')}"
    return Buffer(name, buffer.shape, buffer.dtype, None, (), None, scope)


def _copy_nest(src: Buffer, dst: Buffer, name: str):
    """``for ax..: with T.block(name): dst[v..] = src[v..]`` over the whole buffer."""
    loop_vars = [Var(f"ax{n}", s.dtype) for n, s in enumerate(src.shape)]
    iter_vars = [IterVar(Range(const(0, s.dtype), s), Var(f"v{n}", s.dtype), IterType.DATA_PAR)
                 for n, s in enumerate(src.shape)]
    idx = [iv.var for iv in iter_vars]
    point = lambda buf: BufferRegion(buf, tuple(Range(v, const(1, v.dtype)) for v in idx))
    block = Block(tuple(iter_vars), (point(src),), (point(dst),), name,
                  BufferStore(dst, src[tuple(idx)], tuple(idx)))
    stmt = BlockRealize(tuple(loop_vars), const(True), block)
    for var, extent in reversed(list(zip(loop_vars, src.shape))):
        stmt = For(var, const(0, var.dtype), extent, ForKind.SERIAL, stmt)
    return stmt


class _Retarget(StmtExprMutator):
    """Point loads (and, for writes, stores and regions) of ``old`` at ``new``."""

    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_Buffer(self, buf):
        return self.new if buf is self.old else buf


def _root_items(func, primitive, hit):
    root = func.body.block
    if hit.scope_block() is not root:
        fail(primitive, f"block {hit.node.block.name_hint!r} must be in the root scope",
             func, blocks=[hit.node.block.name_hint])
    items = as_seq_list(root.body)
    top = next(n for n, s in enumerate(items) if s is hit.node or any(
        p is s for p in hit.parents))
    return root, items, top


def _check_alone(func, primitive, item, buffer, me):
    for realize in block_realizes_under(item):
        other = realize.block
        if other is not me and any(r.buffer is buffer for r in other.reads + other.writes):
            fail(primitive, f"block {other.name_hint!r} shares loops with block "
                 f"{me.name_hint!r} and also accesses {buffer.name!r}; cache before moving "
                 "blocks together", func, blocks=[other.name_hint, me.name_hint])


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


def _with_root(func, root, items, alloc):
    new_root = root.replace(body=seq(*items), alloc_buffers=root.alloc_buffers + (alloc,))
    return func.with_body(func.body.replace(block=new_root))


def cache_read(func: PrimFunc, block_name: str, index, scope: str,
               consumers=None) -> tuple[PrimFunc, str]:
    """Copy the ``index``-th read buffer of the block into ``scope``; readers use it."""
    hit = find_block(func, block_name, "cache_read")
    buffer = _pick(func, "cache_read", hit.node.block, hit.node.block.reads, index, "read")
    cache = _scoped_copy(buffer, scope)
    readers = [r for r in block_realizes_under(func.body) if r.block.name_hint != "root"
               and any(x.buffer is buffer for x in r.block.reads)
               and (consumers is None or r.block.name_hint in consumers)]
    writers = [r for r in block_realizes_under(func.body) if r.block.name_hint != "root"
               and any(x.buffer is buffer for x in r.block.writes)]
    mapping = {r: _Retarget(buffer, cache).visit(r) for r in readers}
    func2 = replace_stmts(func, mapping)
    root, items = func2.body.block, as_seq_list(func2.body.block.body)
    position = 0
    for n, item in enumerate(as_seq_list(func.body.block.body)):
        inside = block_realizes_under(item)
        if any(w in inside for w in writers):
            if any(r in inside for r in readers):
                fail("cache_read", f"{buffer.name!r} is written and read under the same "
                     "loops; the cache copy cannot sit between them", func,
                     blocks=[block_name])
            position = n + 1
    items.insert(position, _copy_nest(buffer, cache, cache.name))
    return _with_root(func2, root, items, cache), cache.name


def cache_write(func: PrimFunc, block_name: str, index, scope: str,
                consumers=None) -> tuple[PrimFunc, str]:
    """Make the block write a ``scope`` copy of its ``index``-th written buffer, then copy
    it back right after the block's loop nest."""
    hit = find_block(func, block_name, "cache_write")
    block = hit.node.block
    buffer = _pick(func, "cache_write", block, block.writes, index, "written")
    if block.init is None and any(r.buffer is buffer for r in block.reads):
        fail("cache_write", f"block {block_name!r} reads {buffer.name!r} before writing it "
             "and has no init, so the cache would start uninitialized (its init is in "
             "another block); apply cache_write before decompose_reduction", func,
             blocks=[block_name])
    cache = _scoped_copy(buffer, scope)
    root, items, top = _root_items(func, "cache_write", hit)
    _check_alone(func, "cache_write", items[top], buffer, block)
    new_realize = _Retarget(buffer, cache).visit(hit.node)
    items[top] = replace_stmts(func.with_body(items[top]), {hit.node: new_realize}).body
    items.insert(top + 1, _copy_nest(cache, buffer, cache.name))
    return _with_root(func, root, items, cache), cache.name
