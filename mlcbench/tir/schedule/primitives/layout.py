"""Buffer layout primitives: transform_layout, set_scope, storage_align.

``transform_layout(C, ("read", 1), lambda k, j: (j // 32, k, j % 32))`` on a cached
``B_global`` of shape (64, 64) gives it shape (2, 64, 32) and rewrites every access::

    B_global[v0, v1] = B[v0, v1]            ->  B_global[v1 // 32, v0, v1 % 32] = B[v0, v1]
    ... B_global[vk, vj] ...                ->  ... B_global[vj // 32, vk, vj % 32] ...

As in TVM, a function parameter may be transformed too: the function's signature then
takes the buffer in its new shape (the caller must pass it packed). The map must be
injective on the buffer's shape and give non-negative indices; padding is not done.
"""
from __future__ import annotations

import numpy as np

from ..errors import fail
from ..ir_utils import const_int, find_block, replace_stmts
from .index_map import as_index_map
from ...buffer import Buffer, BufferRegion
from ...expr import Range, Var, const
from ...function import PrimFunc
from ...functor import StmtExprMutator
from ....arith import Analyzer


def pick_buffer(func, primitive, block, buffer) -> Buffer:
    """The buffer ``("read"|"write", index)`` or named ``buffer`` of ``block``."""
    reads = [r.buffer for r in block.reads]
    writes = [r.buffer for r in block.writes]
    if isinstance(buffer, str):
        for candidate in writes + reads:
            if candidate.name == buffer:
                return candidate
        known = sorted({b.name for b in reads + writes})
        fail(primitive, f"block {block.name_hint!r} accesses no buffer named {buffer!r}; "
             f"it accesses {known}", func, blocks=[block.name_hint])
    if isinstance(buffer, Buffer) and buffer in reads + writes:
        return buffer
    kind, index = (buffer if isinstance(buffer, (tuple, list)) and len(buffer) == 2
                   else (None, None))
    regions = {"read": reads, "write": writes}.get(kind)
    if regions is None or not isinstance(index, int):
        fail(primitive, f"expected the buffer as (\"read\", i), (\"write\", i) or a name, "
             f"found {buffer!r}", func, blocks=[block.name_hint])
    if not 0 <= index < len(regions):
        fail(primitive, f"block {block.name_hint!r} has {len(regions)} {kind} buffers "
             f"{[b.name for b in regions]}; index {index} is out of range", func,
             blocks=[block.name_hint])
    return regions[index]


class BufferRewriter(StmtExprMutator):
    """Replace ``old`` by ``new`` everywhere; ``index_fn``/``region_fn`` (optional)
    rewrite the indices of its accesses and its regions."""

    def __init__(self, old, new, index_fn=None, region_fn=None):
        self.old, self.new = old, new
        self.index_fn, self.region_fn = index_fn, region_fn

    def visit_Buffer(self, buf):
        return self.new if buf is self.old else buf

    def _access(self, op):
        new = self.generic_visit(op)
        if op.buffer is self.old and self.index_fn is not None:
            new = new.replace(indices=tuple(self.index_fn(new.indices)))
        return new

    visit_BufferLoad = visit_BufferStore = _access

    def visit_BufferRegion(self, op):
        new = self.generic_visit(op)
        if op.buffer is self.old and self.region_fn is not None:
            new = BufferRegion(new.buffer, tuple(self.region_fn(new.region)))
        return new

    def visit_MatchBufferRegion(self, op):
        if op.source.buffer is self.old and self.index_fn is not None:
            raise _MatchedBuffer(op.buffer.name)
        return self.generic_visit(op)


class _MatchedBuffer(Exception):
    pass


class _RelayoutRewriter(BufferRewriter):
    """BufferRewriter that tells its analyzer the range of every loop and block iterator
    on the way down, so mapped indices simplify (``(vo * 16 + vi) // 16`` -> ``vo``)."""

    def __init__(self, old, new, imap, analyzer):
        super().__init__(old, new,
                         lambda idx: [analyzer.simplify(e) for e in imap.map_indices(idx)],
                         lambda region: _map_region(imap, region, analyzer))
        self.analyzer = analyzer

    def visit_For(self, op):
        self.analyzer.bind(op.loop_var, Range(op.min, op.extent), allow_override=True)
        return self.generic_visit(op)

    def visit_Block(self, op):
        for iv in op.iter_vars:
            self.analyzer.bind(iv.var, iv.dom, allow_override=True)
        return self.generic_visit(op)


def _new_shape(func, imap, buffer, block_name):
    analyzer = Analyzer()
    for var, extent in zip(imap.initial_indices, buffer.shape):
        analyzer.bind(var, Range(const(0, extent.dtype), extent))
    shape = []
    for expr in imap.final_indices:
        bound = analyzer.const_int_bound(expr)
        if bound.min_value < 0:
            fail("transform_layout", f"the index map {imap.as_python()} gives the index "
                 f"{expr} negative values (down to {bound.min_value}) on the shape "
                 f"{[str(s) for s in buffer.shape]} of {buffer.name!r}", func,
                 blocks=[block_name])
        shape.append(const(bound.max_value + 1, buffer.shape[0].dtype))
    return shape


def _check_injective(func, imap, buffer, shape, block_name):
    """Evaluate the map on every index (small constant shapes) and look for collisions."""
    old = [const_int(s) for s in buffer.shape]
    if None in old or int(np.prod(old)) > (1 << 22):
        return
    new = tuple(int(s.value) for s in shape)
    # A tuning search packs the same 1M-element panels the same way in hundreds of
    # candidates a round: the answer depends only on the map's text and the shapes.
    key = (imap.as_python(), tuple(old), new)
    if key not in _INJECTIVE_CACHE:
        if len(_INJECTIVE_CACHE) >= _INJECTIVE_CACHE_SIZE:
            _INJECTIVE_CACHE.pop(next(iter(_INJECTIVE_CACHE)))
        _INJECTIVE_CACHE[key] = _collision(imap, old, new)
    collision = _INJECTIVE_CACHE[key]
    if collision is not None:
        a, b = collision
        fail("transform_layout", f"the index map {imap.as_python()} is not injective on "
             f"{buffer.name!r}: {list(a)} and {list(b)} map to the same element; a layout "
             "transformation must keep every element apart", func, blocks=[block_name])


_INJECTIVE_CACHE: dict = {}     # (map text, old shape, new shape) -> a collision or None
_INJECTIVE_CACHE_SIZE = 256


def _collision(imap, old: list, new: tuple):
    """Two indices of shape ``old`` that ``imap`` sends to one element of ``new``, or
    None (also when the map cannot run on numpy arrays: maps using T.* functions)."""
    try:
        grids = np.indices(old).reshape(len(old), -1)
        outs = imap.python_callable()(*grids)
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        flat = np.ravel_multi_index([np.broadcast_to(np.asarray(o), grids[0].shape)
                                     for o in outs], new)
    except Exception:    # noqa: BLE001 -- such a map is not checked here
        return None
    # counting beats sorting (np.unique) on the 1M-element panels of a matmul
    counts = np.bincount(flat, minlength=1)
    if not (counts > 1).any():
        return None
    dup = int(np.argmax(counts > 1))
    hits = np.nonzero(flat == dup)[0][:2]
    return tuple(tuple(int(g[h]) for g in grids) for h in hits)


def _map_region(imap, region, analyzer):
    if all(const_int(r.extent) == 1 for r in region):
        return [Range(analyzer.simplify(e), const(1, e.dtype))
                for e in imap.map_indices([r.min for r in region])]
    fresh = [Var(f"r{n}", r.min.dtype) for n, r in enumerate(region)]
    dom = {v: r for v, r in zip(fresh, region)}
    out = []
    for expr in imap.map_indices(fresh):
        iset = analyzer.int_set(expr, dom)
        lo, hi = analyzer.simplify(iset.min), analyzer.simplify(iset.max)
        out.append(Range(lo, analyzer.simplify(hi - lo + 1)))
    return out


def transform_layout(func: PrimFunc, block_name: str, buffer, index_map) -> PrimFunc:
    """Give the selected buffer the layout ``index_map`` in the whole function."""
    hit = find_block(func, block_name, "transform_layout")
    target = pick_buffer(func, "transform_layout", hit.node.block, buffer)
    imap = as_index_map(index_map, target.ndim)
    if imap.ndim != target.ndim:
        fail("transform_layout", f"the index map {imap.as_python()} takes {imap.ndim} "
             f"indices but {target.name!r} has {target.ndim} dimensions", func,
             blocks=[block_name])
    shape = _new_shape(func, imap, target, block_name)
    _check_injective(func, imap, target, shape, block_name)
    new = Buffer(target.name, tuple(shape), target.dtype, None, (), None, target.scope)
    rewriter = _RelayoutRewriter(target, new, imap, Analyzer())
    try:
        return rewriter.visit(func)
    except _MatchedBuffer as err:
        fail("transform_layout", f"{target.name!r} is viewed through match_buffer "
             f"{err.args[0]!r}; its layout cannot change under the view", func,
             blocks=[block_name])


def set_scope(func: PrimFunc, block_name: str, buffer_index, scope: str) -> PrimFunc:
    """Move the ``buffer_index``-th buffer the block writes to storage ``scope``."""
    hit = find_block(func, block_name, "set_scope")
    index = buffer_index if not isinstance(buffer_index, int) else ("write", buffer_index)
    target = pick_buffer(func, "set_scope", hit.node.block, index)
    if any(b is target for b in func.buffer_map.values()):
        fail("set_scope", f"{target.name!r} is a parameter of the function; only buffers "
             "allocated inside it (T.alloc_buffer) can change scope", func,
             blocks=[block_name])
    if target.scope == scope:
        return func
    new = Buffer(target.name, target.shape, target.dtype, None, target.strides,
                 target.elem_offset, scope, target.axis_separators, target.align,
                 target.offset_factor)
    return BufferRewriter(target, new).visit(func)


def storage_align(func: PrimFunc, block_name: str, buffer_index: int, axis: int,
                  factor: int, offset: int) -> PrimFunc:
    """Annotate the block so that lowering pads the stride of ``axis`` of its
    ``buffer_index``-th written buffer to ``k * factor + offset`` elements."""
    hit = find_block(func, block_name, "storage_align")
    block = hit.node.block
    target = pick_buffer(func, "storage_align", block, ("write", buffer_index))
    if not -target.ndim <= axis < target.ndim:
        fail("storage_align", f"axis {axis} is out of range for the {target.ndim}-d buffer "
             f"{target.name!r}", func, blocks=[block_name])
    if factor <= 0 or not 0 <= offset < factor:
        fail("storage_align", f"need factor > 0 and 0 <= offset < factor, found factor="
             f"{factor}, offset={offset}", func, blocks=[block_name])
    axis = axis % target.ndim
    entries = [list(e) for e in block.annotations.get("buffer_dim_align", ())
               if not (e[0] == buffer_index and e[1] == axis)]
    entries.append([buffer_index, axis, factor, offset])
    annotations = {**block.annotations, "buffer_dim_align": entries}
    return replace_stmts(func, {hit.node: hit.node.replace(
        block=block.replace(annotations=annotations))})
