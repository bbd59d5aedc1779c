"""Tracing a kernel's memory accesses with numpy, all threads of a block at once.

The tracer walks the per-thread body of a kernel (:class:`~.launch.LaunchNest`) for a
few sample blocks: the corners of the grid and its middle. Every value is a numpy
array with one row per thread (``(threads, lanes)``, or ``(1, lanes)`` when the same
for all), so a statement costs a handful of numpy calls however many threads run it.
A condition that depends on the thread narrows the *mask* of active threads.

Loops are sampled too: a serial loop runs its first and last iterations, each
standing for half of them. When a condition inside the loop depends on its variable
(a reduction initializing at ``k == 0``, a guard cutting the last tile), it runs its
first, middle and last iterations instead, the middle one standing for all but the
first and last. For indices affine in the loop and thread variables the first and last
iterations and the corner blocks reach every extreme address, so out-of-bounds accesses
are still found; counts are exact when the iterations access memory alike (the usual
case). What an access costs is computed once per address pattern (the same pattern
shifted by whole sectors or bank rows costs the same).

What it checks, raising :class:`~.access.GPUSimulationError`: shared-memory data races
(two threads, one element, at least one store, no barrier between), out-of-bounds
accesses of any buffer, and barriers that not every thread of the block reaches.
Global memory is read from the arguments (zeros when none are given) and never
written: tracing leaves the arrays as they were.

Loads are counted as a CUDA compiler would leave them after unrolling constant loops
and keeping repeated loads in registers: a load whose index does not change with an
enclosing loop (and whose buffer that loop does not store to, nor synchronizes)
counts once per iteration of the loops it does depend on. ``C[i] += A[i, k] * B[k, j]``
inside ``for j`` loads ``A[i, k]`` once per ``k``, not once per ``(k, j)``. An element
of a global buffer that a loop accesses at one invariant index only (an accumulator
``C[i, j]`` inside ``for k``) stays in a register: loaded and stored once per loop.
"""
from __future__ import annotations

import numpy as np

from ...tir import expr as E
from ...tir import stmt as S
from ...tir.functor import post_order_visit
from .access import (BANK_BYTES, BANKS, SECTOR_BYTES, AccessCounts, GPUSimulationError,
                     SharedEpoch, global_sectors, shared_wavefronts)
from .evaluate import ExprEvaluator
from .launch import BLOCK_TAGS, LaunchNest, is_barrier
from .sampling import TracedLoop, loop_facts, sample_blocks, sample_iterations


class KernelTracer(ExprEvaluator):
    """Traces one kernel; ``counts`` and ``flops`` hold grid-wide totals afterwards."""

    def __init__(self, nest: LaunchNest, globals_: dict, warp_size: int = 32):
        """``globals_``: flat arrays by data var, scalar values by var."""
        super().__init__(nest.num_threads)
        self.nest, self.globals, self.warp_size = nest, globals_, warp_size
        self.counts: dict = {}
        self.flops = 0.0
        self.statements: list = []
        self.loops: list = []
        self.deps: dict = {}
        self.access_weight = None
        self._loop_facts: dict = {}
        self._expr_deps: dict = {}
        self._costs: dict = {}

    # -- driving ----------------------------------------------------------------------
    def run(self) -> "KernelTracer":
        blocks = sample_blocks(self.nest.grid)
        # Each sampled block stands for an equal share of the grid in the counts.
        # An empty grid (ceildiv(n, 256) blocks for n = 0) samples nothing and counts 0.
        block_weight = self.nest.num_blocks / max(len(blocks), 1)
        tids = np.arange(self.num_threads)
        for block in blocks:
            self.block = block
            self.env = {var: np.array([[value]]) for var, value in self.globals.items()
                        if not isinstance(value, np.ndarray)}
            self.env.update({a.var: np.array([[block[BLOCK_TAGS.index(a.tag)]]])
                             for a in self.nest.blocks})
            stride = 1
            for axis in self.nest.threads:
                self.env[axis.var] = ((tids // stride) % axis.extent)[:, None]
                stride *= axis.extent
            self.memory, self.epochs = {}, {}
            self.weight = self.block_weight = block_weight
            for wrapper in self.nest.wrappers:
                if isinstance(wrapper, S.Allocate):
                    self._allocate(wrapper.buffer)
            self.exec(self.nest.body, np.ones(self.num_threads, dtype=bool))
        return self

    # -- statements -------------------------------------------------------------------
    def exec(self, stmt, mask) -> None:
        getattr(self, "_exec_" + type(stmt).__name__)(stmt, mask)

    def _exec_SeqStmt(self, stmt, mask):
        for item in stmt.seq:
            self.exec(item, mask)

    def _exec_BufferStore(self, stmt, mask):
        self.current = stmt
        index = self._flat_index(stmt.buffer, stmt.indices, mask)
        value = self.eval(stmt.value, mask)
        self.access_weight = self._store_weight(stmt.buffer)
        try:
            self.store(stmt.buffer, index, value, mask)
        finally:
            self.access_weight = None

    def _store_weight(self, buffer) -> float:
        """A store to an element kept in a register across a loop reaches memory once."""
        weight = self.block_weight
        for loop in self.loops:
            if buffer.data not in loop.facts.promoted:
                weight *= loop.factor
            elif not loop.first:
                return 0.0
        return weight

    def _exec_Evaluate(self, stmt, mask):
        self.current = stmt
        if is_barrier(stmt):
            self._barrier(stmt, mask)
        elif not isinstance(stmt.value, (E.IntImm, E.FloatImm)):
            self.eval(stmt.value, mask)

    def _exec_LetStmt(self, stmt, mask):
        self.deps[stmt.var] = self._deps_of(stmt.value)
        self.env[stmt.var] = self.eval(stmt.value, mask)
        self.exec(stmt.body, mask)

    def _exec_IfThenElse(self, stmt, mask):
        self.current = stmt
        # Threads diverge: each side runs with the threads whose condition sends them there.
        cond = np.broadcast_to(self.eval(stmt.condition, mask)[:, 0], mask.shape)
        if (mask & cond).any():
            self.exec(stmt.then_case, mask & cond)
        if stmt.else_case is not None and (mask & ~cond).any():
            self.exec(stmt.else_case, mask & ~cond)

    def _exec_AssertStmt(self, stmt, mask):
        self.exec(stmt.body, mask)

    def _exec_DeclBuffer(self, stmt, mask):
        self.exec(stmt.body, mask)

    def _exec_Allocate(self, stmt, mask):
        self._allocate(stmt.buffer)
        self.exec(stmt.body, mask)

    def _exec_For(self, stmt, mask):
        self.current = stmt
        shape = (self.num_threads, 1)
        lows = np.broadcast_to(self.eval(stmt.min, mask), shape)[:, 0]
        highs = lows + np.broadcast_to(self.eval(stmt.extent, mask), shape)[:, 0]
        # The union of the active threads' ranges; each iteration masks the threads outside it.
        start, stop = int(lows[mask].min()), int(highs[mask].max())
        if stop <= start:
            return
        saved = self.weight
        # Loop facts depend only on the loop's code: computed once, reused for every block.
        facts = self._loop_facts.get(id(stmt))
        if facts is None:
            facts = self._loop_facts[id(stmt)] = loop_facts(stmt)
        loop = TracedLoop(stmt.loop_var, facts)
        self.loops.append(loop)
        for i, weight in sample_iterations(start, stop, facts.branches):
            inside = mask & (lows <= i) & (i < highs)
            loop.factor, self.weight = weight, saved * weight
            if inside.any():
                self.env[stmt.loop_var] = np.array([[i]])
                self.exec(stmt.body, inside)
                # Later iterations find loop-invariant loads already in registers.
                loop.first = False
        self.loops.pop()
        self.weight = saved

    def _deps_of(self, expr):
        """Loop variables ``expr`` depends on (through lets); None: it loads data, so
        it may depend on anything. Computed once per expression."""
        key = id(expr)
        if key not in self._expr_deps:
            self._expr_deps[key] = self._collect_deps(expr)
        return self._expr_deps[key]

    def _collect_deps(self, expr):
        found, data = set(), []

        def visit(node):
            if isinstance(node, E.Var):
                found.update(self.deps.get(node, ()) or ())
                if self.deps.get(node, ()) is None:
                    data.append(True)
                found.add(node)
            elif isinstance(node, E.BufferLoad):
                data.append(True)
        post_order_visit(expr, visit)
        return None if data else found

    def _flat_index(self, buffer, indices, mask):
        """The element index into the buffer's storage (after its ``elem_offset``)."""
        index = self.eval(indices[0], mask)
        offset = buffer.elem_offset
        if offset is None or (isinstance(offset, E.IntImm) and offset.value == 0):
            return index
        return index + self.eval(offset, mask)

    def _eval_BufferLoad(self, expr, mask):
        index = self._flat_index(expr.buffer, expr.indices, mask)
        deps = self._deps_of(expr.indices[0])
        weight = self.block_weight
        for loop in self.loops:
            if deps is None or loop.var in deps or loop.changes(expr.buffer):
                weight *= loop.factor
            elif not loop.first:
                weight = 0.0        # kept in a register since an earlier iteration
                break
        self.access_weight = weight
        try:
            return self.load(expr.buffer, index, mask)
        finally:
            self.access_weight = None

    def _barrier(self, stmt, mask):
        if not mask.all():
            missing = self.thread_name(int(np.argmin(mask)))
            raise GPUSimulationError(
                f"kernel {self.nest.name!r}, block {self.block_name()}: thread {missing} "
                f"does not reach the barrier `{_line(stmt)}`: every thread of a block must "
                "reach each tvm_storage_sync (move it out of the thread-dependent if)")
        # A barrier orders every access before it against every one after: races restart.
        for epoch in self.epochs.values():
            epoch.reset()

    def _allocate(self, buffer):
        size = int(np.prod([int(d) for d in buffer.shape]))
        np_dtype = buffer.dtype.with_lanes(1).to_numpy()
        if buffer.scope == "local":
            # Local memory is per thread: one row each.
            self.memory[buffer.data] = np.zeros((self.num_threads, size), dtype=np_dtype)
        else:
            self.memory[buffer.data] = np.zeros(size, dtype=np_dtype)
            if buffer.scope.startswith("shared"):
                self.epochs[buffer.data] = SharedEpoch(size)

    # -- memory -----------------------------------------------------------------------
    def _storage(self, buffer):
        if buffer.data in self.memory:
            return self.memory[buffer.data]
        found = self.globals.get(buffer.data)
        if not isinstance(found, np.ndarray):
            raise GPUSimulationError(f"kernel {self.nest.name!r}: buffer {buffer.name!r} is "
                                     "neither a kernel parameter nor allocated in the kernel")
        return found

    def load(self, buffer, index, mask):
        storage = self._storage(buffer)
        threads, addrs = self._access(buffer, storage, index, mask, is_write=False)
        values = np.zeros((self.num_threads, index.shape[1]), dtype=storage.dtype)
        rows = np.flatnonzero(mask)
        if storage.ndim == 2:
            values[rows] = storage[rows[:, None], addrs]
        else:
            values[rows] = storage[addrs]
        return values

    def store(self, buffer, index, value, mask) -> None:
        storage = self._storage(buffer)
        threads, addrs = self._access(buffer, storage, index, mask, is_write=True)
        if buffer.data not in self.memory:
            return          # global memory is not written while tracing
        value = np.broadcast_to(value, (self.num_threads, index.shape[1]))[threads]
        if storage.ndim == 2:
            storage[threads[:, None], addrs] = value
        else:
            storage[addrs] = value

    def _access(self, buffer, storage, index, mask, is_write: bool):
        threads = np.flatnonzero(mask)
        addrs = np.broadcast_to(index, (self.num_threads, index.shape[1]))[threads]
        addrs = addrs.astype(np.int64)
        size = storage.shape[-1]
        bad = (addrs < 0) | (addrs >= size)
        if bad.any():
            row = int(np.argmax(bad.any(axis=1)))
            raise GPUSimulationError(
                f"kernel {self.nest.name!r}: out-of-bounds {'store to' if is_write else 'load of'}"
                f" {buffer.name!r} (size {size}) at index {int(addrs[row][bad[row]][0])} by "
                f"thread {self.thread_name(int(threads[row]))} of block {self.block_name()}, "
                f"in `{_line(self.current)}`")
        self._count(buffer, threads, addrs, is_write)
        epoch = self.epochs.get(buffer.data)
        if epoch is not None:
            self._check_race(buffer, epoch, threads, addrs, is_write)
        return threads, addrs

    def _count(self, buffer, threads, addrs, is_write: bool) -> None:
        scope = "shared" if buffer.scope.startswith("shared") else buffer.scope
        # Local buffers live in registers: no memory traffic to count.
        if scope == "local":
            return
        kind = "store" if is_write else "load"
        key = (buffer.name, scope, kind)
        counts = self.counts.get(key)
        if counts is None:
            counts = self.counts[key] = AccessCounts(buffer.name, scope, kind)
        weight = self.weight if self.access_weight is None else self.access_weight
        if weight == 0:
            return
        requests, transactions, ideal = self._cost(scope, buffer.dtype.itemsize, threads, addrs)
        itemsize = buffer.dtype.itemsize
        counts.requests += requests * weight
        counts.transactions += transactions * weight
        counts.ideal += ideal * weight
        counts.bytes += addrs.size * itemsize * weight

    def _cost(self, scope: str, itemsize: int, threads, addrs) -> tuple:
        """What one access costs, memoized on its pattern: shifting every address by
        whole sectors (global) or bank rows (shared) changes nothing."""
        row = (SECTOR_BYTES if scope != "shared" else BANKS * BANK_BYTES) // itemsize or 1
        base = int(addrs.min())
        key = (scope, itemsize, base % row, addrs.shape, threads.tobytes(),
               (addrs - (base - base % row)).tobytes())
        found = self._costs.get(key)
        if found is None:
            measure = shared_wavefronts if scope == "shared" else global_sectors
            found = self._costs[key] = measure(threads, addrs - (base - base % row),
                                               itemsize, self.warp_size)
        return found

    def _check_race(self, buffer, epoch, threads, addrs, is_write: bool) -> None:
        self.statements.append(self.current)
        race = epoch.access(threads, addrs, is_write, len(self.statements) - 1)
        if race is None:
            return
        address, this, other, other_stmt, other_did = race
        did = "writes" if is_write else "reads"
        raise GPUSimulationError(
            f"kernel {self.nest.name!r}: data race on shared buffer {buffer.name!r} at index "
            f"{address} in block {self.block_name()}: thread {self.thread_name(this)} {did} it "
            f"in `{_line(self.current)}` and thread {self.thread_name(other)} {other_did} it "
            f"in `{_line(self.statements[other_stmt])}` with no barrier between (add "
            "T.tvm_storage_sync(\"shared\") between the two)")

    def count_flops(self, n: int) -> None:
        self.flops += n * self.weight

    # -- naming -----------------------------------------------------------------------
    def thread_name(self, tid: int) -> str:
        """``threadIdx(x=3, y=1)`` of linear thread id ``tid``."""
        parts, stride = [], 1
        for axis in self.nest.threads:
            parts.append(f"{axis.tag[-1]}={(tid // stride) % axis.extent}")
            stride *= axis.extent
        return f"threadIdx({', '.join(parts) or '0'})"

    def block_name(self) -> str:
        """``blockIdx(x=0, y=15)`` of the block being traced."""
        used = {a.tag for a in self.nest.blocks}
        parts = [f"{tag[-1]}={v}" for tag, v in zip(BLOCK_TAGS, self.block) if tag in used]
        return f"blockIdx({', '.join(parts) or '0'})"


def _line(stmt) -> str:
    text = str(stmt).strip().splitlines()
    return text[0] if text else type(stmt).__name__


