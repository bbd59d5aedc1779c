"""Bounds checks compiled into the simulator's CPU code, so that no kernel can crash the
Python process with an out-of-bounds access, whatever its data.

The tracer (:mod:`.trace`) checks accesses on sample blocks only; a gather whose index
array sends a thread of another block out of bounds would reach the CPU code. So every
global, shared and local access of a kernel gets a compare against its buffer's shape,
unless the index is proven inside from the loop and thread ranges and the enclosing
conditions (the usual case: affine indices cost nothing; facts about loaded data prove
nothing, as a store may change the data before the access).

A statement with a failing access is skipped: a store whose own index fails is not
made; a store whose loads fail writes the element's old value back, its loads read
only when inside (``if_then_else``), so the thread loop still vectorizes (with masked
loads). The failing access is noted in the thread's slot of two per-block arrays (the
thread's first failure), and after the block the lowest failing thread's note goes to
the block's error record::

    record[block * 4 + 0] = access id + 1    # which buffer, index and statement
    record[block * 4 + 1] = thread id        # threadIdx.x + blockDim.x * (...)
    record[block * 4 + 2] = the offending index (the first lane of a vector access)

:func:`raise_on_record` names the first failing block's access after the call. A load
outside a statement's own work (a loop bound, an ``if`` condition, a ``let`` value) is
checked by a statement just before it and clamped to index 0, so it stays safe.
Vector loads whose index is neither a ``Ramp`` nor a ``Broadcast`` (a vector gather)
are clamped lane by lane without a note (only the tracer reports those); such a vector
store is refused at build time.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ...arith import Analyzer
from ...ir.errors import CodegenError
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.buffer import decl_buffer
from ...tir.functor import StmtExprMutator, post_order_visit, substitute
from .access import GPUSimulationError

RECORD_FIELDS = 4


@dataclass(frozen=True)
class CheckedAccess:
    """What an access id in the error record stands for."""
    buffer: str
    shape: tuple
    index: str
    statement: str


class _Loads(StmtExprMutator):
    """Collects the bounds conditions of the loads of one expression; clamps them where
    asked (``clamp``) or where the generated code evaluates them eagerly although a
    vector condition guards them."""

    def __init__(self, checker, clamp: bool):
        self.checker, self.clamp = checker, clamp
        self.checks: list = []
        self.guards: list = []
        self.lets: list = []

    def visit_BufferLoad(self, op):
        indices = tuple(self.visit(i) for i in op.indices)
        check = self.checker.condition(op.buffer, indices)
        if check is None:
            return E.BufferLoad(op.buffer, _clamp_lanes(op.buffer, indices), op.dtype)
        ok, first = check
        if ok is True:
            return op if indices == op.indices else E.BufferLoad(op.buffer, indices, op.dtype)
        # Under a vector condition both sides are evaluated: such a load is clamped, not noted.
        vector_guarded = any(g.dtype.lanes > 1 for g in self.guards)
        if not vector_guarded:
            self.checks.append((self._guarded(ok), self.checker.access_id(op.buffer, op),
                                self._guarded(first, guard=False)))
        if self.clamp == "lazy" and not vector_guarded and op.dtype.lanes == 1:
            # A load only when inside, so a contiguous access stays one (a masked load
            # when the thread loop is vectorized) instead of a gather of clamped indices.
            load = E.BufferLoad(op.buffer, indices, op.dtype)
            return E.Call(op.dtype, "tir.if_then_else", (ok, load, E.const(0, op.dtype)))
        if self.clamp or vector_guarded:
            indices = _clamp(indices, ok)
        return E.BufferLoad(op.buffer, indices, op.dtype)

    def _guarded(self, expr, guard: bool = True):
        for var, value in reversed(self.lets):
            expr = substitute(expr, {var: value})
        for cond in self.guards if guard else ():
            expr = _or(E.Not(cond), expr)
        return expr

    def visit_Call(self, op):
        if op.op != "tir.if_then_else":
            return self.generic_visit(op)
        cond = self.visit(op.args[0])
        self.guards.append(cond)
        then = self.visit(op.args[1])
        # The else side runs where the condition is false: its loads are guarded by the negation.
        self.guards[-1] = E.Not(cond)
        other = self.visit(op.args[2])
        self.guards.pop()
        return E.Call(op.dtype, op.op, (cond, then, other))

    def visit_Let(self, op):
        value = self.visit(op.value)
        self.lets.append((op.var, value))
        body = self.visit(op.body)
        self.lets.pop()
        return E.Let(op.var, value, body)


def _clamp(indices, ok):
    """Indices that stay inside when ``ok`` is false (index 0 of every dimension)."""
    zero = [E.const(0, i.dtype.with_lanes(1)) for i in indices]
    if len(indices) == 1 and isinstance(indices[0], E.Ramp):
        ramp = indices[0]
        return (E.Ramp(E.Select(ok, ramp.base, zero[0]), ramp.stride, ramp.lanes),)
    return tuple(E.Select(ok, i, z if i.dtype.lanes == 1 else E.Broadcast(z, i.dtype.lanes))
                 for i, z in zip(indices, zero))


def _clamp_lanes(buffer, indices):
    """A vector gather's lanes outside the buffer read element 0 instead."""
    (index,) = indices
    lanes = index.dtype.lanes
    size = _flat_size(buffer, index.dtype.with_lanes(1))
    zero = E.Broadcast(E.const(0, index.dtype.with_lanes(1)), lanes)
    inside = _and(index >= zero, index < E.Broadcast(size, lanes))
    return (E.Select(inside, index, zero),)


def _flat_size(buffer, dtype):
    size = None
    for dim in buffer.shape:
        dim = E.cast(dtype, dim) if dim.dtype != dtype else dim
        size = dim if size is None else size * dim
    return size


class BoundsChecks:
    """Instruments one kernel body (before its threads are distributed)."""

    def __init__(self, nest, block_id, thread_id):
        self.nest = nest
        self.block_id, self.thread_id = block_id, thread_id
        self.accesses: list = []
        # A grid computed at launch has a record as long as the launch's (new_record).
        length = (max(nest.num_blocks, 1) * RECORD_FIELDS if not nest.symbolic
                  else E.Var("sim_bounds_record_len", "int64"))
        self.record = decl_buffer((length,), "int64",
                                  "sim_bounds_record", data=E.Var("sim_bounds_record", "handle"))
        threads = max(nest.num_threads, 1)
        self.thread_access = decl_buffer((threads,), "int32", "sim_bounds_access",
                                         data=E.Var("sim_bounds_access", "handle"),
                                         scope="local")
        self.thread_index = decl_buffer((threads,), "int64", "sim_bounds_index",
                                        data=E.Var("sim_bounds_index", "handle"),
                                        scope="local")
        self.analyzer = Analyzer()
        self._statement = None
        for axis in nest.blocks + nest.threads:
            extent = E.const(axis.extent) if isinstance(axis.extent, int) else axis.extent
            self.analyzer.bind(axis.var, E.Range(E.const(0), extent),
                               allow_override=True)

    # -- conditions -------------------------------------------------------------------
    def condition(self, buffer, indices):
        """``(ok, first index)`` for an access, ``(True, ...)`` when proven inside,
        None when the index is a vector gather (clamped, not recorded)."""
        terms, proven = [], True
        for dim, index in zip(buffer.shape, indices):
            # A contiguous vector is inside when its first and last lanes are.
            if isinstance(index, E.Ramp):
                ends = [index.base, index.base + index.stride * E.const(index.lanes - 1)]
            elif isinstance(index, E.Broadcast):
                ends = [index.value]
            elif index.dtype.lanes > 1:
                return None
            else:
                ends = [index]
            for end in ends:
                size = E.cast(end.dtype, dim) if dim.dtype != end.dtype else dim
                inside = _and(end >= E.const(0, end.dtype), end < size)
                if not self.analyzer.can_prove(inside):
                    proven = False
                    terms.append(inside)
        # The index reported on failure: the first lane of a vector access.
        first = _first_lane(indices[0]) if len(indices) == 1 else indices[0]
        if proven:
            return True, first
        ok = terms[0]
        for term in terms[1:]:
            ok = _and(ok, term)
        return ok, first

    def access_id(self, buffer, node) -> int:
        index = ", ".join(str(i) for i in node.indices)
        self.accesses.append(CheckedAccess(buffer.name, tuple(str(d) for d in buffer.shape),
                                           index, self._statement))
        return len(self.accesses) - 1

    # -- statements -------------------------------------------------------------------
    def instrument(self, stmt) -> S.Stmt:
        method = getattr(self, "_stmt_" + type(stmt).__name__, None)
        return method(stmt) if method is not None else self._leaf(stmt)

    def _expr(self, expr, stmt, clamp: bool):
        self._statement = str(stmt).strip().splitlines()[0]
        loads = _Loads(self, clamp)
        return loads.visit(expr), loads.checks

    def _leaf(self, stmt):
        """A BufferStore or Evaluate, whose failing accesses are noted and skipped."""
        self._statement = str(stmt).strip().splitlines()[0]
        if isinstance(stmt, S.BufferStore):
            return self._store(stmt)
        if isinstance(stmt, S.Evaluate):
            loads = _Loads(self, clamp=False)
            return self._guard(S.Evaluate(loads.visit(stmt.value)), loads.checks)
        return stmt

    def _store(self, stmt):
        """Branch-free where only loads are checked, so the thread loop still vectorizes:
        the loads are clamped and a failing statement stores the element's old value."""
        loads = _Loads(self, clamp="lazy")
        value = loads.visit(stmt.value)
        indices = tuple(loads.visit(i) for i in stmt.indices)
        check = self.condition(stmt.buffer, indices)
        if check is None:
            raise CodegenError(f"kernel {self.nest.name!r}: a vector store through "
                               f"gathered indices cannot be bounds-checked: {stmt}")
        checks = list(loads.checks)
        if checks:
            old = E.BufferLoad(stmt.buffer, indices, value.dtype)
            value = E.Select(_all(checks), value, old)
        store = S.BufferStore(stmt.buffer, value, indices)
        if check[0] is not True:
            checks.append((check[0], self.access_id(stmt.buffer, stmt), check[1]))
            store = S.IfThenElse(check[0], store)
        return S.SeqStmt((store, self._record(checks))) if checks else store

    def _guard(self, stmt, checks):
        if not checks:
            return stmt
        return S.IfThenElse(_all(checks), stmt, self._record(checks))

    def _record(self, checks) -> S.Stmt:
        """Note the failing access of ``checks`` (if one fails and the thread has none
        yet) in its slot: stores indexed by the thread, which vectorize over the thread
        loop."""
        # Plus one, so that 0 in a thread's slot means "no failure yet".
        access, index = E.const(checks[-1][1] + 1, "int32"), _as_i64(checks[-1][2])
        for ok, aid, first in reversed(checks[:-1]):
            access = E.Select(E.Not(ok), E.const(aid + 1, "int32"), access)
            index = E.Select(E.Not(ok), _as_i64(first), index)
        slot = (self.thread_id,)
        noted = E.BufferLoad(self.thread_access, slot)
        keep = _or(_all(checks), noted != E.const(0, "int32"))     # the thread's first
        return S.SeqStmt((
            S.BufferStore(self.thread_index, E.Select(
                keep, E.BufferLoad(self.thread_index, slot), index), slot),
            S.BufferStore(self.thread_access, E.Select(keep, noted, access), slot)))

    def wrap_block(self, body) -> S.Stmt:
        """``body`` (one block, threads distributed) between clearing the threads' slots
        and copying the lowest failing thread's into the block's record."""
        if not self.accesses:
            return body
        t = E.Var("sim_thread", "int32")
        count = E.const(self.nest.num_threads)
        clear = S.For(t, E.const(0), count, S.ForKind.SERIAL,
                      S.BufferStore(self.thread_access, E.const(0, "int32"), (t,)))
        slot = _as_i64(self.block_id) * E.const(RECORD_FIELDS, "int64")
        # Threads in order and only while the record is empty: the lowest failing thread wins.
        failed = _and(E.BufferLoad(self.thread_access, (t,)) != E.const(0, "int32"),
                      E.BufferLoad(self.record, (slot,)) == E.const(0, "int64"))
        copy = S.SeqStmt((
            S.BufferStore(self.record, _as_i64(t), (slot + E.const(1, "int64"),)),
            S.BufferStore(self.record, E.BufferLoad(self.thread_index, (t,)),
                          (slot + E.const(2, "int64"),)),
            S.BufferStore(self.record, _as_i64(E.BufferLoad(self.thread_access, (t,))),
                          (slot,))))
        scan = S.For(t, E.const(0), count, S.ForKind.SERIAL, S.IfThenElse(failed, copy))
        inner = S.Allocate(self.thread_index, S.SeqStmt((clear, body, scan)))
        return S.Allocate(self.thread_access, inner)

    def _checked_first(self, stmt, expr):
        """``expr`` clamped, and the statement that records its failures (or None)."""
        new, checks = self._expr(expr, stmt, clamp=True)
        if not checks:
            return new, None
        return new, self._guard(S.Evaluate(E.const(0)), checks)

    def _before(self, check, stmt):
        return stmt if check is None else S.SeqStmt((check, stmt))

    def _stmt_SeqStmt(self, stmt):
        return S.SeqStmt(tuple(self.instrument(s) for s in stmt.seq))

    def _stmt_For(self, stmt):
        lo, check_lo = self._checked_first(stmt, stmt.min)
        extent, check_extent = self._checked_first(stmt, stmt.extent)
        # Only bounds that read no memory are facts the analyzer may keep.
        if not _has_load(lo) and not _has_load(extent):
            self.analyzer.bind(stmt.loop_var, E.Range(lo, extent), allow_override=True)
        body = self.instrument(stmt.body)
        loop = dataclasses.replace(stmt, min=lo, extent=extent, body=body)
        return self._before(check_lo, self._before(check_extent, loop))

    def _stmt_IfThenElse(self, stmt):
        cond, check = self._checked_first(stmt, stmt.condition)
        # A fact about loaded data could be stale by the access (a store in between).
        known = E.const(True) if _has_load(cond) else cond
        with self.analyzer.constraint_scope(known):
            then = self.instrument(stmt.then_case)
        other = None
        if stmt.else_case is not None:
            with self.analyzer.constraint_scope(E.Not(known) if known is cond
                                                else E.const(True)):
                other = self.instrument(stmt.else_case)
        return self._before(check, S.IfThenElse(cond, then, other))

    def _stmt_LetStmt(self, stmt):
        value, check = self._checked_first(stmt, stmt.value)
        # The analyzer binds scalar integers; a value read from memory may change before use.
        if not _has_load(value) and value.dtype.is_int and value.dtype.lanes == 1:
            self.analyzer.bind(stmt.var, value, allow_override=True)
        body = self.instrument(stmt.body)
        return self._before(check, dataclasses.replace(stmt, value=value, body=body))

    def _stmt_AssertStmt(self, stmt):
        cond, check = self._checked_first(stmt, stmt.condition)
        body = self.instrument(stmt.body)
        return self._before(check, dataclasses.replace(stmt, condition=cond, body=body))

    def _stmt_Allocate(self, stmt):
        return dataclasses.replace(stmt, body=self.instrument(stmt.body))

    def _stmt_DeclBuffer(self, stmt):
        return dataclasses.replace(stmt, body=self.instrument(stmt.body))


def _has_load(expr) -> bool:
    found = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, E.BufferLoad) else None)
    return bool(found)


def _all(checks):
    ok = checks[0][0]
    for check in checks[1:]:
        ok = _and(ok, check[0])
    return ok


def _and(a, b):
    return E.binary(E.And, a, b)


def _or(a, b):
    return E.binary(E.Or, a, b)


def _first_lane(index):
    if isinstance(index, E.Ramp):
        return index.base
    if isinstance(index, E.Broadcast):
        return index.value
    return index


def _as_i64(expr):
    return expr if str(expr.dtype) == "int64" else E.cast("int64", expr)


def new_record(num_blocks: int) -> np.ndarray:
    return np.zeros(max(num_blocks, 1) * RECORD_FIELDS, dtype=np.int64)


def raise_on_record(kernel_name: str, nest, record: np.ndarray, accesses: list) -> None:
    """Raise GPUSimulationError naming the first block whose record is set."""
    failed = np.flatnonzero(record[::RECORD_FIELDS])
    if failed.size == 0:
        return
    block = int(failed[0])
    access_id, thread, index = (int(v) for v in record[block * RECORD_FIELDS:][:3])
    access = accesses[access_id - 1]
    raise GPUSimulationError(
        f"kernel {kernel_name!r}: out-of-bounds access of buffer {access.buffer!r} "
        f"(shape {', '.join(access.shape)}) at index {index} (`{access.index}`) by thread "
        f"{_thread_coords(nest, thread)} of block {_block_coords(nest, block)} in "
        f"`{access.statement}`; the access was skipped, {failed.size} block(s) had one. "
        f"The output arrays hold what the other accesses wrote")


def _block_coords(nest, block: int) -> str:
    return _coords(nest.blocks, block)


def _thread_coords(nest, thread: int) -> str:
    return _coords(nest.threads, thread)


def _coords(axes, linear: int) -> str:
    parts = []
    for axis in axes:
        parts.append(f"{axis.tag}={linear % axis.extent}")
        linear //= axis.extent
    return "(" + ", ".join(parts) + ")" if parts else "(0)"
