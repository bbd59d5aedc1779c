"""InjectVirtualThread: ``vthread`` loops become interleaved statements of one thread.

A loop bound to ``vthread`` (``vthread.x``, ``cthread``...) is not launched: each GPU
thread runs all its virtual threads. Run in turn, as a serial loop, every virtual
thread would repeat what does not depend on it (the shared-memory fetch, its barriers)
and its accesses would be a tile apart. This pass, after FlattenBuffer, interleaves them
as TVM's InjectVirtualThread does::

    for vx in T.thread_binding(2, thread="vthread.x"):      # before
        C_local = T.allocate([4], "float32", "local")
        for k in range(16):
            A_shared[...] = A[...]                           # no vx: the block's fetch
            for i in range(4):
                C_local[i] = C_local[i] + A_shared[vx * 8 + i] * ...

    C_local = T.allocate([8], "float32", "local")            # after
    for k in range(16):
        A_shared[...] = A[...]                               # once
        for i in range(4):
            C_local[i] = C_local[i] + A_shared[i] * ...      # vx = 0
            C_local[4 + i] = C_local[4 + i] + A_shared[8 + i] * ...   # vx = 1

* **Buffers.** A ``"local"``/``"warp"`` buffer allocated inside the loop that some store
  fills with a value or at an index depending on the virtual thread (directly, or by
  reading such a buffer) gets one copy per virtual thread: its size times the extent,
  accessed at ``vx * size + index``. Others are shared by the virtual threads, which
  compute the same values in them. ``"shared"`` buffers are already sized for all
  virtual threads (CompactBufferAllocation relaxes them over vthread loops).
* **Statements.** The loop is pushed down through loops, sequences, allocations and
  conditions that do not depend on it. A statement that does not depend on it runs once;
  one that does is repeated for each virtual thread with the index substituted
  (adjacent copies), or, when it holds a loop that depends on it (an extent, a
  condition), wrapped in a serial loop over the virtual threads. A store into a buffer
  allocated outside the loop that reads that buffer (an accumulation) counts as
  depending on it: each virtual thread adds its part.
* The extent must be a constant; nested vthread loops multiply (inner ones first).
"""
from __future__ import annotations

import math

from ...ir.errors import CodegenError
from ...ir.transform import prim_func_pass
from ..expr import BufferLoad, IntImm, Ramp
from ..functor import StmtExprMutator, post_order_visit, substitute, uses_var
from ..stmt import (Allocate, BufferStore, DeclBuffer, For, ForKind, IfThenElse, LetStmt, seq,
                    SeqStmt)
from ._common import const_int
from .thread_nest import is_vthread, thread_tag

_SCALED_SCOPES = ("local", "warp")


class _Injector(StmtExprMutator):
    def __init__(self, name: str):
        self.name = name

    def visit_For(self, loop):
        loop = self.generic_visit(loop)     # inner vthread loops first
        tag = thread_tag(loop)
        return inject(loop, self.name) if tag and is_vthread(tag) else loop


def inject(loop: For, where: str = "main"):
    """The statements of vthread ``loop`` interleaved (module docstring)."""
    extent = const_int(loop.extent)
    if extent is None or const_int(loop.min) != 0:
        raise CodegenError(
            f"{where}: loop {loop.loop_var.name!r} bound to {thread_tag(loop)} has extent "
            f"{loop.extent} from {loop.min}; virtual threads need a constant extent from 0 "
            "(split the loop by a constant factor and bind the inner part)")
    var = loop.loop_var
    scaled = _scaled_buffers(loop.body, var)
    body = _Scale(scaled, var, extent).visit(loop.body) if scaled else loop.body
    outer = _outer_accumulations(body)
    return _Push(var, extent, outer).push(body)


def _allocated_inside(body) -> dict:
    allocs = {}
    post_order_visit(body, lambda n: allocs.__setitem__(n.buffer.data, n.buffer)
                     if isinstance(n, Allocate) else None)
    return allocs


def _scaled_buffers(body, var) -> dict:
    """``{data var: size}`` of the local buffers that need one copy per virtual thread."""
    local = {data: buf for data, buf in _allocated_inside(body).items()
             if (buf.scope or "global").startswith(_SCALED_SCOPES)}
    stores = []
    post_order_visit(body, lambda n: stores.append(n) if isinstance(n, BufferStore)
                     and n.buffer.data in local else None)
    touched, changed = set(), True
    while changed:        # reading a per-vthread buffer makes a value per-vthread too
        changed = False
        for store in stores:
            data = store.buffer.data
            if data not in touched and _depends(store, var, touched):
                touched.add(data)
                changed = True
    sizes = {}
    for data in touched:
        buffer = local[data]
        size = math.prod(const_int(s) or 0 for s in buffer.shape)
        if size <= 0 or len(buffer.shape) != 1:
            raise CodegenError(
                f"{buffer.name!r}: a buffer of virtual threads needs a constant flat shape, "
                f"found {buffer.shape}")
        sizes[data] = size
    return sizes


def _depends(node, var, touched) -> bool:
    if uses_var(node, lambda v: v is var):
        return True
    found = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, BufferLoad)
                     and n.buffer.data in touched else None)
    return bool(found)


class _Scale(StmtExprMutator):
    """Per-vthread copies: allocations times ``extent``, accesses at ``var * size + i``."""

    def __init__(self, sizes: dict, var, extent: int):
        self.sizes, self.var, self.extent = sizes, var, extent
        self.buffers: dict = {}

    def _buffer(self, buffer):
        if buffer not in self.buffers:
            size = self.sizes[buffer.data] * self.extent
            self.buffers[buffer] = buffer.replace(shape=(IntImm(buffer.shape[0].dtype, size),))
        return self.buffers[buffer]

    def _index(self, buffer, index):
        offset = self.var * self.sizes[buffer.data]
        if isinstance(index, Ramp):
            return Ramp(index.base + offset, index.stride, index.lanes)
        return index + offset

    def visit_BufferLoad(self, load):
        load = self.generic_visit(load)
        if load.buffer.data not in self.sizes:
            return load
        return load.replace(buffer=self._buffer(load.buffer),
                            indices=(self._index(load.buffer, load.indices[0]),))

    def visit_BufferStore(self, store):
        store = self.generic_visit(store)
        if store.buffer.data not in self.sizes:
            return store
        return store.replace(buffer=self._buffer(store.buffer),
                             indices=(self._index(store.buffer, store.indices[0]),))

    def visit_Allocate(self, alloc):
        alloc = self.generic_visit(alloc)
        if alloc.buffer.data not in self.sizes:
            return alloc
        return alloc.replace(buffer=self._buffer(alloc.buffer))

    def visit_DeclBuffer(self, decl):
        decl = self.generic_visit(decl)
        if decl.buffer.data not in self.sizes:
            return decl
        return decl.replace(buffer=self._buffer(decl.buffer))


def _outer_accumulations(body) -> set:
    """Stores into a buffer allocated outside ``body`` whose value reads that buffer."""
    inside = _allocated_inside(body)
    found = set()

    def visit(node):
        if isinstance(node, BufferStore) and node.buffer.data not in inside:
            data = node.buffer.data
            loads = []
            post_order_visit(node.value, lambda n: loads.append(n)
                             if isinstance(n, BufferLoad) and n.buffer.data is data else None)
            if loads:
                found.add(id(node))
    post_order_visit(body, visit)
    return found


class _Push:
    """Push the vthread loop down to the statements that depend on it."""

    def __init__(self, var, extent: int, accumulations: set):
        self.var, self.extent, self.accumulations = var, extent, accumulations

    def _uses(self, node) -> bool:
        return uses_var(node, lambda v: v is self.var)

    def _depends(self, stmt) -> bool:
        if self._uses(stmt):
            return True
        found = []
        post_order_visit(stmt, lambda n: found.append(n) if id(n) in self.accumulations
                         else None)
        return bool(found)

    def push(self, stmt):
        if not self._depends(stmt):
            return stmt                      # the same for every virtual thread: once
        if isinstance(stmt, SeqStmt):
            return seq(*[self.push(s) for s in stmt.seq])
        if isinstance(stmt, For) and not self._uses((stmt.min, stmt.extent)):
            return stmt.replace(body=self.push(stmt.body))
        if isinstance(stmt, IfThenElse) and not self._uses(stmt.condition):
            else_case = self.push(stmt.else_case) if stmt.else_case is not None else None
            return stmt.replace(then_case=self.push(stmt.then_case), else_case=else_case)
        if isinstance(stmt, (Allocate, DeclBuffer)):
            return stmt.replace(body=self.push(stmt.body))
        if isinstance(stmt, LetStmt) and not self._uses(stmt.value):
            return stmt.replace(body=self.push(stmt.body))
        return self._leaf(stmt)

    def _leaf(self, stmt):
        loops = []
        post_order_visit(stmt, lambda n: loops.append(n) if isinstance(n, For) else None)
        if loops:
            # A loop that depends on the virtual thread cannot be interleaved: run them in turn.
            return For(self.var, 0, self.extent, ForKind.SERIAL, stmt)
        dtype = self.var.dtype
        return seq(*[substitute(stmt, {self.var: IntImm(dtype, i)})
                     for i in range(self.extent)])


@prim_func_pass(opt_level=0, name="tir.InjectVirtualThread")
def _inject_virtual_thread(func, mod, ctx):
    name = func.attrs.get("global_symbol") or "main"
    body = _Injector(name).visit(func.body)
    return func if body is func.body else func.with_body(body)


def InjectVirtualThread():
    """Pass: interleave the virtual threads of ``vthread`` loops (module docstring)."""
    return _inject_virtual_thread
