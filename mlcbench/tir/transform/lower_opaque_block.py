"""Remove blocks: ConvertBlocksToOpaque, LowerOpaqueBlock, and the CPU check on loop kinds.

Blocks carry scheduling information (iteration domains, declared accesses) that the
code generator does not need. Lowering them takes two steps, as in TVM:

``ConvertBlocksToOpaque`` replaces each block iteration variable by the expression it
is bound to, so the block no longer has iteration variables of its own::

    for i, j in T.grid(16, 16):              for i, j in T.grid(16, 16):
        with T.block("B"):                       with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])      B[i, j] = A[i, j] + 1.0
            B[vi, vj] = A[vi, vj] + 1.0

``LowerOpaqueBlock`` then drops the block wrappers: a non-trivial predicate
(``T.where``) becomes an ``if``; ``alloc_buffers`` become ``Allocate(buffer, body)``
where the block stood (root-block buffers are allocated around the whole body);
``match_buffers`` are resolved by rewriting every access of the matched buffer into an
access of its source buffer shifted by the region's start.
"""
from __future__ import annotations

from ...ir.errors import CodegenError
from ...ir.transform import prim_func_pass
from ..buffer import BufferRegion
from ..expr import Range, Var, const
from ..functor import StmtExprMutator, StmtExprVisitor
from ..stmt import Allocate, Block, BlockRealize, BufferStore, ForKind, IfThenElse
from ._common import const_int, is_true, plus


# -- ConvertBlocksToOpaque ------------------------------------------------------------

class _BlockToOpaque(StmtExprMutator):
    """Substitute block iteration variables by their bindings, block by block."""

    def __init__(self):
        self.bindings: dict[Var, object] = {}

    def visit_Var(self, var):
        return self.bindings.get(var, var)

    def visit_BlockRealize(self, realize: BlockRealize):
        values = tuple(self.visit(v) for v in realize.iter_values)
        predicate = self.visit(realize.predicate)
        block = realize.block
        for iter_var, value in zip(block.iter_vars, values):
            self.bindings[iter_var.var] = value
        changes = {name: self.visit(getattr(block, name))
                   for name in ("body", "init", "reads", "writes", "match_buffers")}
        changed = block.iter_vars or any(changes[k] is not getattr(block, k) for k in changes)
        if not changed and predicate is realize.predicate:
            return realize
        new_block = block.replace(iter_vars=(), **changes)
        return BlockRealize((), predicate, new_block)


def convert_blocks_to_opaque(stmt):
    return _BlockToOpaque().visit(stmt)


@prim_func_pass(opt_level=0, name="tir.ConvertBlocksToOpaque")
def _convert_blocks_to_opaque(func, mod, ctx):
    body = convert_blocks_to_opaque(func.body)
    return func if body is func.body else func.with_body(body)


def ConvertBlocksToOpaque():
    """Pass: replace block iteration variables by their binding values."""
    return _convert_blocks_to_opaque


# -- LowerOpaqueBlock -----------------------------------------------------------------

class _MatchedView:
    """How a ``match_buffer`` maps onto its source: ``dims[k]`` is the source dimension
    that the matched buffer's dimension ``k`` walks; other source dimensions stay at
    the region's start."""

    def __init__(self, buffer, source: BufferRegion):
        self.buffer, self.source = buffer, source.buffer
        self.mins = tuple(r.min for r in source.region)
        self.dims = _matched_dims(buffer, source)

    def indices(self, indices) -> tuple:
        full = list(self.mins)
        for k, index in zip(self.dims, indices):
            full[k] = plus(self.mins[k], index)
        return tuple(full)

    def region(self, ranges) -> tuple:
        full = [Range(m, const(1, m.dtype)) for m in self.mins]
        for k, r in zip(self.dims, ranges):
            full[k] = Range(plus(self.mins[k], r.min), r.extent)
        return tuple(full)


def _matched_dims(buffer, source: BufferRegion) -> tuple:
    region = source.region
    if len(region) == buffer.ndim:
        dims = tuple(range(len(region)))
    else:
        dims = tuple(k for k, r in enumerate(region) if const_int(r.extent) != 1)
        trailing = tuple(range(len(region) - buffer.ndim, len(region)))
        if len(dims) < buffer.ndim and set(dims) <= set(trailing):
            dims = trailing      # unit dimensions matched: align with the last ones
    if len(dims) != buffer.ndim:
        raise CodegenError(
            f"match_buffer {buffer.name}: expected a region of {source.buffer.name} with "
            f"{buffer.ndim} non-unit dimensions, found {len(dims)}; reshaping a matched "
            "region is not supported")
    for k, extent in zip(dims, buffer.shape):
        have, want = const_int(region[k].extent), const_int(extent)
        if have is not None and want is not None and have != want:
            raise CodegenError(
                f"match_buffer {buffer.name}: dimension of extent {want} is matched with a "
                f"region of extent {have} in {source.buffer.name}; the shapes must agree")
    return dims


def _row_major_strides(buffer) -> tuple:
    if buffer.strides:
        return buffer.strides
    # Strides take the shape's index type, so int64 shapes give int64 strides.
    strides, running = [], const(1, buffer.shape[-1].dtype if buffer.shape else "int32")
    for extent in reversed(buffer.shape):
        strides.append(running)
        running = running * extent
    return tuple(reversed(strides))


class _OpaqueBlockLowerer(StmtExprMutator):
    def __init__(self):
        self.views: dict = {}          # matched Buffer -> _MatchedView
        self.var_map: dict = {}        # matched buffer's data / elem_offset / stride vars
        self.data_views: dict = {}     # matched buffer's data Var -> (_MatchedView, Buffer)

    def visit_Var(self, var):
        return self.var_map.get(var, var)

    def visit_BlockRealize(self, realize: BlockRealize):
        # Blocks with iteration variables are made opaque here, so the pass also runs alone.
        if realize.block.iter_vars:
            realize = convert_blocks_to_opaque(realize)
        block: Block = realize.block
        if block.init is not None:
            raise CodegenError(f"block {block.name_hint!r} still has an init: run "
                               "LowerInitBlock before LowerOpaqueBlock")
        for match in block.match_buffers:
            self._bind_match_buffer(match)
        body = self.visit(block.body)
        # Reversed, so the first buffer's Allocate ends up outermost.
        for buffer in reversed(block.alloc_buffers):
            body = Allocate(buffer, body)
        predicate = self.visit(realize.predicate)
        return body if is_true(predicate) else IfThenElse(predicate, body)

    def _bind_match_buffer(self, match):
        source = self.visit(match.source)
        view = _MatchedView(match.buffer, source)
        self.views[match.buffer] = view
        self.var_map[match.buffer.data] = view.source.data
        self.data_views[match.buffer.data] = (view, match.buffer)
        if isinstance(match.buffer.elem_offset, Var):
            self.var_map[match.buffer.elem_offset] = view.source.offset_of(view.mins)
        source_strides = _row_major_strides(view.source)
        for k, stride in zip(view.dims, match.buffer.strides):
            if isinstance(stride, Var):
                self.var_map[stride] = source_strides[k]

    def visit_Call(self, call):
        """``tvm_access_ptr`` of a matched buffer: its address lies where the matched
        region starts in the source (an ``elem_offset`` Var says so by itself)."""
        found = self.data_views.get(call.args[1]) if call.op == "tir.tvm_access_ptr" else None
        if found is not None and not isinstance(found[1].elem_offset, Var):
            view, _ = found
            ptype, data, offset, extent, mask = call.args
            start = view.source.offset_of(view.mins)
            call = call.replace(args=(ptype, data, plus(start, offset), extent, mask))
        return self.generic_visit(call)

    def visit_BufferLoad(self, load):
        indices = self.visit(load.indices)
        view = self.views.get(load.buffer)
        if view is not None:
            return load.replace(buffer=view.source, indices=view.indices(indices))
        return load if indices is load.indices else load.replace(indices=indices)

    def visit_BufferStore(self, store: BufferStore):
        indices, value = self.visit(store.indices), self.visit(store.value)
        view = self.views.get(store.buffer)
        if view is not None:
            return BufferStore(view.source, value, view.indices(indices))
        if indices is store.indices and value is store.value:
            return store
        return BufferStore(store.buffer, value, indices)

    def visit_BufferRegion(self, region: BufferRegion):
        ranges = self.visit(region.region)
        view = self.views.get(region.buffer)
        if view is not None:
            return BufferRegion(view.source, view.region(ranges))
        return region if ranges is region.region else BufferRegion(region.buffer, ranges)


@prim_func_pass(opt_level=0, name="tir.LowerOpaqueBlock")
def _lower_opaque_block(func, mod, ctx):
    body = _OpaqueBlockLowerer().visit(func.body)
    return func if body is func.body else func.with_body(body)


def LowerOpaqueBlock():
    """Pass: drop blocks, keeping their predicate (as ``if``) and allocations (as ``Allocate``)."""
    return _lower_opaque_block


# -- VerifyCPUCompatible --------------------------------------------------------------

class _ThreadBindingFinder(StmtExprVisitor):
    def __init__(self, func_name):
        self.func_name = func_name

    def visit_For(self, loop):
        if loop.kind == ForKind.THREAD_BINDING:
            tag = loop.thread_binding.thread_tag if loop.thread_binding is not None else "?"
            raise CodegenError(
                f"{self.func_name}: loop {loop.loop_var.name!r} is bound to thread "
                f"{tag!r}; bind (thread_binding) targets GPUs, the CPU target cannot run it. "
                "For CPU use parallel: sch.parallel(loop)")
        self.generic_visit(loop)


@prim_func_pass(opt_level=0, name="tir.VerifyCPUCompatible")
def _verify_cpu_compatible(func, mod, ctx):
    name = func.attrs.get("global_symbol") or next(
        (gv.name_hint for gv, f in mod.items() if f is func), "function")
    _ThreadBindingFinder(name).visit(func.body)
    return func


def VerifyCPUCompatible():
    """Pass: raise ``CodegenError`` for GPU-only constructs (thread-bound loops)."""
    return _verify_cpu_compatible
