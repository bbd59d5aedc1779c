"""Warp shuffles on the simulated GPU: a shuffled register becomes a slot of a per-block
array, read at the source lane's slot between two barriers.

``tir.tvm_warp_shuffle(mask, B[i], lane, width, warp_size)`` (from LowerWarpMemory)
reads register ``B[i]`` of another lane of the caller's group of ``width`` lanes. The
simulator runs a block's threads one after another between barriers, so a lane's
registers are not visible to the others. Before the kernel is compiled for the CPU,
:func:`simulate_shuffles` rewrites it:

* every local buffer ``B`` read by a shuffle becomes a ``"shared"`` array of one slot
  of ``B``'s size per thread of the block, thread ``t``'s ``B[i]`` at ``t * size + i``
  (``t``: the thread's linear index ``tx + X * (ty + Y * tz)``, whose groups of
  ``width`` consecutive values are the lanes a GPU groups);
* a statement with shuffles reads each one's value into a variable, then runs, with a
  barrier before the reads (the other lanes' writes are done) and one after (none of
  them is overwritten before every lane has read it), as a warp executes a shuffle:
  all lanes together, with the values they had before it.

The shuffle reads are counted as shared-memory accesses (wavefronts) by the counters,
which is about what one costs on a GPU. A shuffle under a condition that depends on
the thread is refused by the simulator as a barrier not every thread reaches (on a GPU
a full-mask ``__shfl_sync`` there is undefined too).
"""
from __future__ import annotations

from ...ir.errors import CodegenError
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.buffer import Buffer
from ...tir.functor import StmtExprMutator, post_order_visit
from ...tir.op import floormod
from .launch import BARRIER_OP, BLOCK_TAGS, THREAD_TAGS

SHUFFLE_OP = "tir.tvm_warp_shuffle"


def _is_shuffle(node) -> bool:
    return isinstance(node, E.Call) and node.op == SHUFFLE_OP


def _shuffles(node) -> list:
    found = []
    post_order_visit(node, lambda n: found.append(n) if _is_shuffle(n) else None)
    return found


def _threads(body) -> tuple:
    """({tag: (var, extent)} of the launch nest, the linear thread index)."""
    axes = {}
    while True:
        binding = getattr(body, "thread_binding", None)
        if isinstance(body, S.For) and binding is not None:
            axes[binding.thread_tag] = (body.loop_var, body.extent)
        elif not isinstance(body, (S.Allocate, S.DeclBuffer)):
            break
        body = body.body
    linear, stride = E.IntImm("int32", 0), E.IntImm("int32", 1)
    for tag in THREAD_TAGS:
        if tag in axes:
            var, extent = axes[tag]
            linear, stride = linear + var * stride, stride * extent
    return axes, linear, stride


def simulate_shuffles(kernel, name: str):
    """``kernel`` with its shuffled registers in per-block arrays (module docstring)."""
    calls = _shuffles(kernel.body)
    if not calls:
        return kernel
    for call in calls:
        if not isinstance(call.args[1], E.BufferLoad):
            raise CodegenError(f"kernel {name!r}: a warp shuffle of {call.args[1]} reads no "
                               "register; the simulator shuffles loads of a local buffer")
    _, linear, count = _threads(kernel.body)
    lanes = {}
    for call in calls:
        buffer = call.args[1].buffer
        if buffer.data not in lanes:
            size = int(buffer.shape[0])
            lanes[buffer.data] = (size, Buffer(f"{buffer.name}_lanes", (count * size,),
                                               buffer.dtype, scope="shared"))
    body = _Rewrite(lanes, linear).visit(kernel.body)
    return kernel.with_body(_hoist(body, [b for _, b in lanes.values()]))


class _Rewrite(StmtExprMutator):
    def __init__(self, lanes: dict, linear):
        self.lanes, self.linear = lanes, linear
        self.pending: list = []        # (var, load) of the shuffles of the current statement

    def _slot(self, data, thread, index):
        size, array = self.lanes[data]
        return E.BufferLoad(array, (thread * size + index,))

    def visit_Allocate(self, alloc):
        body = self.visit(alloc.body)
        return body if alloc.buffer.data in self.lanes else alloc.replace(body=body)

    def visit_DeclBuffer(self, decl):
        body = self.visit(decl.body)
        return body if decl.buffer.data in self.lanes else decl.replace(body=body)

    def visit_BufferLoad(self, load):
        load = self.generic_visit(load)
        if load.buffer.data not in self.lanes:
            return load
        return self._slot(load.buffer.data, self.linear, load.indices[0])

    def visit_Call(self, call):
        if not _is_shuffle(call):
            return self.generic_visit(call)
        _, value, lane, width = call.args[:4]
        lane, index = self.visit(lane), self.visit(value.indices[0])
        source = self.linear - floormod(self.linear, width) + lane
        var = E.Var(f"{value.buffer.name}_shfl", value.dtype)
        self.pending.append((var, self._slot(value.buffer.data, source, index)))
        return var

    def _statement(self, stmt, rewritten):
        if not self.pending:
            return rewritten
        pending, self.pending = self.pending, []
        barrier = S.Evaluate(E.Call("int32", BARRIER_OP, (E.StringImm("shared"),)))
        body = S.seq(barrier, rewritten)
        for var, load in reversed(pending):
            body = S.LetStmt(var, load, body)
        return S.seq(barrier, body)

    def visit_BufferStore(self, store):
        new = self.generic_visit(store)
        if store.buffer.data in self.lanes:
            new = S.BufferStore(self.lanes[store.buffer.data][1], new.value,
                                (self.linear * self.lanes[store.buffer.data][0]
                                 + new.indices[0],))
        return self._statement(store, new)

    def visit_Evaluate(self, stmt):
        return self._statement(stmt, self.generic_visit(stmt))


def _hoist(body, arrays):
    """Allocate ``arrays`` at the block level: inside the last blockIdx loop."""
    binding = getattr(body, "thread_binding", None)
    if isinstance(body, S.For) and binding is not None and binding.thread_tag in BLOCK_TAGS:
        return body.replace(body=_hoist(body.body, arrays))
    if isinstance(body, (S.Allocate, S.DeclBuffer)) and _above_threads(body):
        return body.replace(body=_hoist(body.body, arrays))
    for array in reversed(arrays):
        body = S.Allocate(array, body)
    return body


def _above_threads(stmt) -> bool:
    """Whether ``stmt`` (an allocation) sits above the threadIdx loops."""
    while isinstance(stmt, (S.Allocate, S.DeclBuffer)):
        stmt = stmt.body
    binding = getattr(stmt, "thread_binding", None)
    return isinstance(stmt, S.For) and binding is not None
