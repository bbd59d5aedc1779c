"""A device kernel as a CPU function with GPU semantics, in the CPU lowered form.

A thread block runs its threads in lock step only at barriers, so between two barriers
the threads can run one after another. The kernel becomes::

    for block in T.parallel(num_blocks):         # blockIdx.* from `block`
        <shared Allocates>                        # one copy per block
        <phase 1: for tz, ty, tx: statements up to the first barrier>
        <phase 2: ...>

Thread loops are pushed down to barrier-free statements: a statement holding a barrier
(a serial loop with uniform bounds, an if with a uniform condition, a SeqStmt, a let)
keeps its shape and gets the thread loops inside; a SeqStmt splits at its barriers.
A long innermost loop with uniform bounds (``for k in range(1024)`` of a naive matmul)
gets the thread loops inside too, as if it held a barrier: consecutive threads then
touch consecutive addresses in the innermost loop, which the CPU vectorizes. That is
sound because a kernel without data races does not depend on the order of its threads
between barriers.
Whatever a thread keeps across a barrier lives in an array indexed by the thread:
``Allocate(scope="local")`` buffers grow by the block size, and a let whose value
depends on the thread becomes a store to a per-thread array plus loads from it.
"""
from __future__ import annotations

import dataclasses
import math

from ...ir.errors import CodegenError
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.buffer import decl_buffer
from ...tir.functor import StmtExprMutator, post_order_visit, substitute
from ...tir.function import PrimFunc
from .bounds import BoundsChecks
from .launch import LaunchNest, is_barrier

PUSH_MIN_EXTENT = 16
"""Innermost uniform loops at least this long get the thread loops inside them."""


SIMULATED_SCOPES = ("global", "shared", "local")


def kernel_as_cpu_func(kernel: PrimFunc, nest: LaunchNest) -> tuple:
    """``(func, accesses)``: the CPU PrimFunc that runs every block of ``kernel`` (see the
    module docstring) with its accesses bounds-checked, its last parameter the error
    record of :mod:`.bounds`, and what the record's access ids stand for."""
    _check_scopes(kernel, nest.name)
    block = E.Var("block_id", "int32")
    checks = BoundsChecks(nest, block if nest.blocks else E.const(0),
                          _linear_thread_id(nest.threads))
    body = ThreadDistributor(nest).distribute(checks.instrument(nest.body))
    body = nest.wrap(checks.wrap_block(body))
    if nest.blocks:
        stride = 1
        for axis in nest.blocks:
            # A grid computed at launch: its extents, of the symbolic dimensions, as int32.
            extent = axis.extent if isinstance(axis.extent, int) else \
                E.Cast("int32", axis.extent)
            # blockIdx.x varies fastest in the linear block id, as CUDA numbers blocks.
            value = (block // stride) % extent if not (isinstance(stride, int)
                                                       and stride == 1) else block % extent
            if value.dtype != axis.var.dtype:
                value = E.Cast(axis.var.dtype, value)
            body = S.LetStmt(axis.var, value, body)
            stride = stride * extent
        stride = E.const(stride) if isinstance(stride, int) else stride
        body = S.For(block, E.const(0), stride, S.ForKind.PARALLEL, body)
    attrs = {k: v for k, v in kernel.attrs.items() if k not in ("calling_conv", "target")}
    record = checks.record
    func = dataclasses.replace(kernel, body=body, attrs=attrs,
                               params=tuple(kernel.params) + (record.data,),
                               buffer_map={**kernel.buffer_map, record.data: record})
    return func, checks.accesses


def _check_scopes(kernel: PrimFunc, name: str) -> None:
    """Storage the simulator does not model (``warp``: registers shared by a warp) is
    refused by name instead of being run with the wrong sharing."""
    def visit(node):
        if isinstance(node, S.Allocate):
            scope = node.buffer.scope.split(".")[0]
            if scope not in SIMULATED_SCOPES:
                raise CodegenError(f"kernel {name!r}: buffer {node.buffer.name!r} has storage "
                                   f"scope {node.buffer.scope!r}; the simulated GPU runs "
                                   f"{', '.join(SIMULATED_SCOPES)} memory only")
    post_order_visit(kernel.body, visit)


class ThreadDistributor:
    """Pushes the thread loops of one kernel down to its barrier-free statements."""

    def __init__(self, nest: LaunchNest):
        self.nest = nest
        self.thread_vars = {axis.var for axis in nest.threads}
        self.num_threads = nest.num_threads
        self.thread_id = _linear_thread_id(nest.threads)
        self._has_barrier: dict = {}

    # -- which statements need splitting --------------------------------------------------
    def has_barrier(self, stmt) -> bool:
        # Memoized by identity: pushable and needs_split ask again for the same subtrees.
        key = id(stmt)
        if key not in self._has_barrier:
            found = []
            post_order_visit(stmt, lambda n: found.append(True) if is_barrier(n) else None)
            self._has_barrier[key] = bool(found)
        return self._has_barrier[key]

    def is_uniform(self, expr) -> bool:
        """Same value in every thread of a block: no thread index, no per-thread data."""
        varying = []

        def check(node):
            if isinstance(node, E.Var) and node in self.thread_vars:
                varying.append(node)
            # Local memory is per thread, so what it holds may differ between threads.
            elif isinstance(node, E.BufferLoad) and node.buffer.scope == "local":
                varying.append(node)
        post_order_visit(expr, check)
        return not varying

    def pushable(self, stmt) -> bool:
        """Whether thread loops go below ``stmt`` to reach a long innermost loop with
        uniform bounds, through uniform statements only."""
        if isinstance(stmt, S.For):
            if not (self.is_uniform(stmt.min) and self.is_uniform(stmt.extent)):
                return False
            if _has_loop(stmt.body):
                return self.pushable(stmt.body)
            return isinstance(stmt.extent, E.IntImm) and stmt.extent.value >= PUSH_MIN_EXTENT
        if isinstance(stmt, S.SeqStmt):
            return any(self.pushable(item) for item in stmt.seq)
        if isinstance(stmt, S.IfThenElse):
            return self.is_uniform(stmt.condition) and (self.pushable(stmt.then_case) or (
                stmt.else_case is not None and self.pushable(stmt.else_case)))
        if isinstance(stmt, S.Allocate):
            return _constant_count(stmt.buffer) is not None and self.pushable(stmt.body)
        if isinstance(stmt, (S.LetStmt, S.DeclBuffer, S.AssertStmt)):
            return self.pushable(stmt.body)
        return False

    def needs_split(self, stmt) -> bool:
        return self.has_barrier(stmt) or self.pushable(stmt)

    def require_uniform(self, expr, what: str, stmt) -> None:
        if not self.is_uniform(expr):
            raise CodegenError(f"kernel {self.nest.name!r}: {what} `{expr}` depends on the "
                               "thread, but the statement holds a barrier "
                               "(tvm_storage_sync), which every thread of a block must reach: "
                               f"\n{stmt}")

    # -- the transformation ---------------------------------------------------------------
    def distribute(self, stmt) -> S.Stmt:
        if is_barrier(stmt):
            # Splitting the sequence at this point is the barrier: the next phase starts after it.
            return S.Evaluate(E.const(0))
        if not self.needs_split(stmt):
            return self.thread_loops(stmt)
        method = getattr(self, "_split_" + type(stmt).__name__, None)
        if method is None:
            raise CodegenError(f"kernel {self.nest.name!r}: a barrier inside a "
                               f"{type(stmt).__name__} cannot be simulated:\n{stmt}")
        return method(stmt)

    def thread_loops(self, stmt) -> S.Stmt:
        """``for tz, ty, tx: stmt`` with fresh loop variables (threadIdx.x innermost)."""
        # Each phase binds its own thread variables: a variable is defined once.
        fresh = {axis.var: E.Var(axis.var.name, axis.var.dtype) for axis in self.nest.threads}
        body = substitute(stmt, fresh)
        for axis in self.nest.threads:
            dtype = axis.var.dtype      # int64 where the kernel's shapes are symbolic
            body = S.For(fresh[axis.var], E.const(0, dtype), E.const(axis.extent, dtype),
                         S.ForKind.SERIAL, body)
        return body

    def _split_SeqStmt(self, stmt):
        phases, pending = [], []

        def flush():
            if pending:
                phases.append(self.thread_loops(_seq(pending)))
                pending.clear()
        for item in stmt.seq:
            if is_barrier(item):
                flush()
            elif self.needs_split(item):
                flush()
                phases.append(self.distribute(item))
            else:
                pending.append(item)
        flush()
        return _seq(phases)

    def _split_For(self, stmt):
        self.require_uniform(stmt.min, f"the bound of loop {stmt.loop_var.name!r}", stmt)
        self.require_uniform(stmt.extent, f"the extent of loop {stmt.loop_var.name!r}", stmt)
        # Serial: every thread must see the loop's barriers in the same iteration.
        return dataclasses.replace(stmt, kind=S.ForKind.SERIAL, body=self.distribute(stmt.body))

    def _split_IfThenElse(self, stmt):
        self.require_uniform(stmt.condition, "the condition", stmt)
        other = None if stmt.else_case is None else self.distribute(stmt.else_case)
        return S.IfThenElse(stmt.condition, self.distribute(stmt.then_case), other)

    def _split_AssertStmt(self, stmt):
        self.require_uniform(stmt.condition, "the assertion", stmt)
        return dataclasses.replace(stmt, body=self.distribute(stmt.body))

    def _split_DeclBuffer(self, stmt):
        return dataclasses.replace(stmt, body=self.distribute(stmt.body))

    def _split_LetStmt(self, stmt):
        if self.is_uniform(stmt.value):
            return dataclasses.replace(stmt, body=self.distribute(stmt.body))
        lanes = stmt.var.dtype.lanes
        array = decl_buffer((self.num_threads * lanes,), stmt.var.dtype.with_lanes(1),
                            stmt.var.name + "_per_thread", data=E.Var(stmt.var.name, "handle"),
                            scope="local")
        index = self._thread_slot(lanes)
        body = substitute(stmt.body, {stmt.var: E.BufferLoad(array, (index,))})
        fill = self.thread_loops(S.BufferStore(array, stmt.value, (index,)))
        return S.Allocate(array, _seq([fill, self.distribute(body)]))

    def _split_Allocate(self, stmt):
        buffer = stmt.buffer
        # Shared memory is one copy per block already: only its body is split.
        if buffer.scope.startswith("shared"):
            return dataclasses.replace(stmt, body=self.distribute(stmt.body))
        count = _constant_count(buffer)
        if count is None:
            raise CodegenError(f"kernel {self.nest.name!r}: local buffer {buffer.name!r} "
                               f"lives across a barrier, so it needs a constant size, found "
                               f"shape {buffer.shape}")
        private = decl_buffer((count * self.num_threads,), buffer.dtype, buffer.name,
                              data=E.Var(buffer.name, "handle"), scope="local")
        offset = self._thread_slot(1) * E.const(count) if self.num_threads > 1 else None
        body = _PrivateBuffer(buffer.data, private, offset).visit(stmt.body)
        return S.Allocate(private, self.distribute(body), stmt.annotations)

    def _thread_slot(self, lanes: int):
        """Index of this thread's ``lanes`` elements in a per-thread array."""
        if lanes == 1:
            return self.thread_id
        return E.Ramp(self.thread_id * E.const(lanes), E.const(1), lanes)


class _PrivateBuffer(StmtExprMutator):
    """Accesses of the buffer on ``data`` go to ``private`` at ``offset + index``."""

    def __init__(self, data, private, offset):
        self.data, self.private, self.offset = data, private, offset

    def _index(self, indices):
        (index,) = indices
        return (_add_offset(self.visit(index), self.offset),)

    def visit_BufferLoad(self, op):
        if op.buffer.data is not self.data:
            return self.generic_visit(op)
        return E.BufferLoad(self.private, self._index(op.indices), op.dtype)

    def visit_BufferStore(self, op):
        if op.buffer.data is not self.data:
            return self.generic_visit(op)
        return S.BufferStore(self.private, self.visit(op.value), self._index(op.indices))

    def visit_DeclBuffer(self, op):
        return self.visit(op.body) if op.buffer.data is self.data else self.generic_visit(op)


def _add_offset(index, offset):
    if offset is None:
        return index
    if isinstance(index, E.Ramp):
        return E.Ramp(_add_offset(index.base, offset), index.stride, index.lanes)
    # The offset follows the index's integer type (int32 or int64).
    if offset.dtype != index.dtype:
        offset = E.cast(index.dtype, offset)
    return index + offset


def _linear_thread_id(threads):
    """threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)."""
    thread_id, stride = None, 1
    for axis in threads:
        term = axis.var if stride == 1 else axis.var * E.const(stride)
        thread_id = term if thread_id is None else thread_id + term
        stride *= axis.extent
    return thread_id if thread_id is not None else E.const(0)


def _has_loop(stmt) -> bool:
    found = []
    post_order_visit(stmt, lambda n: found.append(True) if isinstance(n, S.For) else None)
    return bool(found)


def _constant_count(buffer):
    dims = [d.value if isinstance(d, E.IntImm) else None for d in buffer.shape]
    return None if None in dims else math.prod(dims)


def _seq(stmts):
    stmts = [s for s in stmts if not (isinstance(s, S.Evaluate) and isinstance(s.value, E.IntImm))]
    if not stmts:
        return S.Evaluate(E.const(0))
    return stmts[0] if len(stmts) == 1 else S.SeqStmt(tuple(stmts))
