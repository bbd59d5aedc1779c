"""CompactBufferAllocation: allocate each intermediate buffer where it is used, at the
size it is used.

A schedule leaves every intermediate buffer allocated at the root block with its full
shape. ``cache_write`` of a matmul gives a 1024 x 1024 ``"local"`` accumulator although
each tile of the parallel loop touches only 8 x 32 of it::

    C_local = T.alloc_buffer((1024, 1024), scope="local")      # root block
    for f in T.parallel(4096):
        for k, ii, jj in T.grid(1024, 8, 32):
            C_local[f // 32 * 8 + ii, f % 32 * 32 + jj] += ...

After this pass the allocation sits in the body of the lowest loop (or block) that
contains every access, shrunk to the region the loops inside it touch, and the
indices are shifted by the region's minimum::

    for f in T.parallel(4096):
        C_local = T.alloc_buffer((8, 32), scope="local")        # per tile, per thread
        for k, ii, jj in T.grid(1024, 8, 32):
            C_local[ii, jj] += ...                              # after Simplify

That is what lets the code generator keep a register tile in registers: a small
constant-size allocation becomes a stack slot, and once unrolling makes every index a
constant, LLVM promotes the slot's elements to SSA values. Each parallel iteration also
gets its own private storage instead of sharing one large buffer.

Rules (the placement follows TVM's ``PlanAndUpdateBufferAllocationLocation`` and
``CompactBufferAllocation``):

* the new place is the lowest common ancestor (loop or block) of all loads and stores
  of the buffer, as in TVM, but only where that is safe: an allocation moved into a
  loop lives for one iteration, so every loop it moves into must have constant bounds
  and iterations that touch disjoint parts of the buffer (checked by enumerating the
  iterations, up to 65536); otherwise it stops at the loop above (a partial sum that
  one iteration leaves for the next keeps its storage);
* a dimension shrinks to ``[lo, hi]`` when the loops inside the new place bound its
  indices by a constant-size interval no larger than the dimension, else it keeps its
  full extent;
* buffers used through ``match_buffer`` or whose data pointer is used directly (an
  extern call) stay as they are.

Runs on opaque blocks (after ``ConvertBlocksToOpaque``), before ``LowerOpaqueBlock``.

On a GPU (``compact_buffer_allocation(stmt, gpu=True)``, as TVM's pass does) the loops
bound to threads decide who shares a buffer, by its storage scope:

* ``"shared"``: one copy per thread block. Its region is relaxed over the
  ``threadIdx``/``vthread`` loops it sits under, above or below its new place (the copy
  holds what every thread of the block touches); ``blockIdx`` loops need no check;
* ``"local"``: one copy per thread, relaxed over no thread loop, and thread loops need
  no check either;
* ``"warp"``: one copy per warp, relaxed over the ``threadIdx.x`` loops (its lanes);
* ``"global"``: one copy for the grid, relaxed over every thread loop, and it never
  moves inside one (the host allocates it between kernel launches).

Serial loops crossed on the way down are still checked for disjoint footprints (with
the thread loop variables held fixed).
"""
from __future__ import annotations

import math

import numpy as np

from ...ir.transform import prim_func_pass
from ..buffer import Buffer, BufferRegion
from ..expr import (Add, And, BufferLoad, FloorDiv, FloorMod, IntImm, Max, Min, Mul, Range,
                    Sub, Var, binary, const)
from ..functor import StmtExprMutator, StmtExprVisitor, post_order_visit, substitute
from ..stmt import Block, BlockRealize, BufferStore, For
from ._common import _analyzer, const_int


class _AccessCollector(StmtExprVisitor):
    """For every allocated buffer: the ancestor path of each access and the index tuples,
    with the loops enclosing each access (``[(For, ...)]``)."""

    def __init__(self):
        self.path: list = []                 # enclosing For / Block nodes, outermost first
        self.allocated: dict = {}            # Buffer -> the Block that allocates it
        self.accesses: dict = {}             # Buffer -> [(path tuple, indices)]
        self.pinned: set = set()             # buffers that must stay where they are
        self.data_vars: dict = {}            # data Var -> Buffer
        self.predicates: list = []           # enclosing blocks' non-trivial T.where

    def visit_BlockRealize(self, realize):
        self.visit(realize.iter_values)
        self.visit(realize.predicate)
        block = realize.block
        for buffer in block.alloc_buffers:
            self.allocated[buffer] = block
            self.accesses[buffer] = []
            self.data_vars[buffer.data] = buffer
        for match in block.match_buffers:
            self.pinned.add(match.source.buffer)
        guarded = not (isinstance(realize.predicate, IntImm) and realize.predicate.value)
        self.predicates += [realize.predicate] if guarded else []
        self.path.append(block)
        self.visit(block.body)
        self.path.pop()
        del self.predicates[len(self.predicates) - guarded:]

    def visit_For(self, loop):
        self.visit(loop.min)
        self.visit(loop.extent)
        self.path.append(loop)
        self.visit(loop.body)
        self.path.pop()

    def _record(self, buffer, indices):
        if buffer in self.accesses:
            self.accesses[buffer].append((tuple(self.path), indices, tuple(self.predicates)))
        self.visit(indices)

    def visit_BufferLoad(self, load):
        self._record(load.buffer, load.indices)

    def visit_BufferStore(self, store):
        self._record(store.buffer, store.indices)
        self.visit(store.value)

    def visit_Var(self, var):
        buffer = self.data_vars.get(var)
        if buffer is not None:
            self.pinned.add(buffer)


def _lowest_common_ancestor(paths) -> tuple:
    """The common prefix of the ancestor paths (node identity)."""
    common = list(paths[0])
    for path in paths[1:]:
        size = 0
        while size < min(len(common), len(path)) and common[size] is path[size]:
            size += 1
        del common[size:]
    return tuple(common)


def _compact_region(buffer, accesses, depth: int, analyzer, relaxed=None):
    """``[(lo, extent)]`` per dimension: the interval the loops below ``depth`` (and the
    ``relaxed`` loops above it) touch (``lo = 0`` and the full extent where it cannot be
    bounded by a constant size). With ``relaxed`` given (on a GPU), the blocks'
    predicates tighten the upper end, as TVM's pass does: the window sum's shared copy
    ``T.where(ax0_0 * 128 + ax0_1 < 130)`` holds 130 elements, not 256."""
    use_predicates = relaxed is not None
    relaxed = relaxed or (lambda loop: False)
    lows = [[] for _ in buffer.shape]
    highs = [[] for _ in buffer.shape]
    for path, indices, predicates in accesses:
        _bind_outer_loops([n for n in path[:depth] if not relaxed(n)], analyzer)
        doms = {node.loop_var: Range(node.min, node.extent)
                for k, node in enumerate(path) if isinstance(node, For)
                and (k >= depth or relaxed(node))}
        for dim, index in enumerate(indices):
            interval = analyzer.int_set(index, doms)
            high = interval.max_value
            if use_predicates and predicates and high is not None \
                    and interval.min_value is not None:
                high = _guarded_max(index, interval.min_value, high, predicates, doms,
                                    analyzer)
            lows[dim].append(interval.min_value)
            highs[dim].append(high)
    region = []
    for dim, extent in enumerate(buffer.shape):
        lo, hi = _extreme(lows[dim], analyzer, -1), _extreme(highs[dim], analyzer, 1)
        size = None if lo is None or hi is None else const_int(analyzer.simplify(hi - lo + 1))
        full = const_int(extent)
        # No smaller than the buffer: keep the full extent, so no index needs shifting.
        if size is None or size <= 0 or full is None or size >= full:
            region.append((const(0, extent.dtype), extent))
        else:
            region.append((lo, IntImm(extent.dtype, size)))
    return region


def _guarded_max(index, low, high, predicates, doms, analyzer):
    """The largest ``index`` where the ``predicates`` hold (``high`` when they say
    nothing tighter): a guarded tail reaches no further than its guard lets it."""
    for var, dom in doms.items():
        analyzer.bind(var, dom, allow_override=True)
    condition = predicates[0]
    for predicate in predicates[1:]:
        condition = binary(And, condition, predicate)
    with analyzer.constraint_scope(condition):
        reach = analyzer.const_int_bound(analyzer.simplify(index - low)).max_value
    # A bound this large means the guard did not bound the index at all.
    if reach is None or reach >= 1 << 30:
        return high
    slack = const_int(analyzer.simplify(high - (low + reach)))
    # Only ever tighten: a guard looser than the loops' own reach changes nothing.
    return low + reach if slack is not None and slack > 0 else high


def _bind_outer_loops(path, analyzer) -> None:
    """Tell ``analyzer`` the ranges of the loops above the new place, so bounds written
    differently compare equal (``f % 12544 // 784`` is ``f // 784`` when ``f < 12544``:
    a fused loop and its writeback spell the same index both ways)."""
    for node in path:
        if isinstance(node, For):
            analyzer.bind(node.loop_var, Range(node.min, node.extent), allow_override=True)


def _extreme(bounds, analyzer, sign: int):
    """The least (``sign=-1``) or greatest (``sign=1``) of symbolic bounds that differ by
    constants, else ``None`` (unbounded, or not comparable)."""
    if not bounds or any(b is None for b in bounds):
        return None
    best = bounds[0]
    for bound in bounds[1:]:
        difference = const_int(analyzer.simplify(bound - best))
        if difference is None:
            return None
        if difference * sign > 0:
            best = bound
    return best


class _Plan:
    """Where one buffer goes and how its indices shift."""

    def __init__(self, old: Buffer, new: Buffer, anchor, offsets):
        self.old, self.new, self.anchor, self.offsets = old, new, anchor, offsets


def _plan_buffer(buffer, accesses, owner, analyzer, gpu: bool = False):
    """Where ``buffer`` goes: the deepest ancestor between its allocating block and the
    lowest common ancestor of its accesses where the per-iteration footprints of the
    loops it moves into are disjoint (else it would lose values carried across them)."""
    if not accesses:
        return None
    ancestors = _lowest_common_ancestor([access[0] for access in accesses])
    owner_depth = next((k for k, node in enumerate(ancestors) if node is owner), None)
    if owner_depth is None:
        return None
    scope = buffer.scope or "global"
    relaxed = (lambda loop: _shares_storage(loop, scope)) if gpu else None
    # Deepest place first: the lowest safe ancestor gives the smallest, most private copy.
    for depth in range(len(ancestors), owner_depth, -1):
        if gpu and scope.startswith("global") and any(
                _thread_tag(n) for n in ancestors[:depth]):
            continue
        region = _compact_region(buffer, accesses, depth, analyzer, relaxed)
        crossed = [n for n in ancestors[owner_depth + 1:depth]
                   if isinstance(n, For) and not (gpu and _thread_tag(n))]
        fixed = {n.loop_var for n in ancestors[:depth] if gpu and _thread_tag(n)}
        if not crossed or _footprints_disjoint(region, crossed, fixed):
            return _make_plan(buffer, region, ancestors[depth - 1], owner)
    return None


def _thread_tag(node) -> str:
    """The thread tag of a loop bound to a thread, else ``""``."""
    binding = getattr(node, "thread_binding", None)
    return binding.thread_tag if binding is not None else ""


def _shares_storage(node, scope: str) -> bool:
    """Whether the threads of loop ``node`` share one copy of a buffer of ``scope`` (so
    its region covers all of them): a block's threads share "shared" memory, the whole
    grid shares "global", nobody shares "local"."""
    tag = _thread_tag(node)
    if not tag:
        return False
    if scope.startswith("shared"):
        return tag.startswith(("threadIdx", "vthread"))
    if scope.startswith("warp"):         # the lanes of a warp: threadIdx.x
        return tag == "threadIdx.x"
    return scope.startswith("global")


def _make_plan(buffer, region, anchor, owner):
    shape = tuple(extent for _, extent in region)
    if anchor is owner and all(e is old for e, old in zip(shape, buffer.shape)):
        return None
    index_dtype = shape[0].dtype if shape else buffer.elem_offset.dtype
    # A fresh data variable: the moved buffer is a new allocation, not an alias of the old.
    data = Var(buffer.name, buffer.data.dtype, buffer.data.type_annotation)
    new = buffer.replace(shape=shape, data=data, strides=(),
                         elem_offset=IntImm(index_dtype, 0))
    return _Plan(buffer, new, anchor, tuple(lo for lo, _ in region))


MAX_CHECKED_ITERATIONS = 1 << 16


def _footprints_disjoint(region, loops, fixed=frozenset()) -> bool:
    """True when no two iterations of ``loops`` (constant extents, enumerated) touch a
    common element: each iteration's box ``[lo, lo + extent)`` is checked against the
    others (grid-aligned boxes compare by their corners).

    The iterations are enumerated all at once: each loop variable is a numpy axis, so
    a corner coordinate is one array over the whole iteration grid. Variables in
    ``fixed`` (thread indices) are held constant: a corner is checked as its offset from
    the first iteration's, which must not depend on them."""
    extents = [const_int(loop.extent) for loop in loops]
    mins = [const_int(loop.min) for loop in loops]
    if None in extents or None in mins:
        return False
    count = math.prod(extents)
    # Too many iterations to enumerate cheaply: answer "may overlap", which is always safe.
    if count > MAX_CHECKED_ITERATIONS:
        return False
    # A rank-0 buffer is one element: only a loop of one iteration can own it.
    if not region:
        return count == 1
    env = {}
    for axis, (loop, lo, extent) in enumerate(zip(loops, mins, extents)):
        shape = [1] * len(loops)
        shape[axis] = extent
        env[loop.loop_var] = np.arange(lo, lo + extent, dtype=np.int64).reshape(shape)
    columns = []
    for lo, _ in region:
        if fixed:
            lo = _offset_from_first(lo, loops, fixed)
        value = _evaluate(lo, env) if lo is not None else None
        if value is None:
            return False
        columns.append(np.broadcast_to(np.asarray(value, dtype=np.int64), extents).ravel())
    corners = np.stack(columns, axis=1)
    # Two iterations with the same corner touch the same elements.
    if len(np.unique(corners, axis=0)) < count:
        return False
    sizes = [const_int(extent) for _, extent in region]
    # With every corner on one grid of the box's size, distinct boxes cannot overlap.
    return all(size is not None and size > 0 and np.ptp(corners[:, d] % size) == 0
               for d, size in enumerate(sizes))


def _offset_from_first(lo, loops, fixed):
    """``lo`` minus its value at the loops' first iteration, or ``None`` when that
    difference still depends on a ``fixed`` variable (the corners would then differ from
    one thread to the next)."""
    from ._common import simplify_expr
    first = substitute(lo, {loop.loop_var: loop.min for loop in loops})
    offset = simplify_expr(lo - first)
    used = []
    post_order_visit(offset, lambda n: used.append(n) if isinstance(n, Var) else None)
    return None if any(v in fixed for v in used) else offset


# A zero divisor in any iteration gives None, and the move is refused.
_INT_OPS = {Add: lambda a, b: a + b, Sub: lambda a, b: a - b, Mul: lambda a, b: a * b,
            FloorDiv: lambda a, b: None if np.any(b == 0) else a // b,
            FloorMod: lambda a, b: None if np.any(b == 0) else a % b,
            Min: np.minimum, Max: np.maximum}


def _evaluate(expr, env: dict):
    """Integer value (an int or an int64 array over the iteration grid) of ``expr`` with
    the vars of ``env`` bound, ``None`` when it uses anything else."""
    if isinstance(expr, IntImm):
        return expr.value
    if isinstance(expr, Var):
        return env.get(expr)
    op = _INT_OPS.get(type(expr))
    if op is None:
        return None
    a, b = _evaluate(expr.a, env), _evaluate(expr.b, env)
    return None if a is None or b is None else op(a, b)


class _Rewriter(StmtExprMutator):
    """Move the allocations to their anchors and shift the indices of every access."""

    def __init__(self, plans: dict):
        self.plans = plans                                   # old Buffer -> _Plan
        self.by_anchor: dict = {}
        for plan in plans.values():
            self.by_anchor.setdefault(id(plan.anchor), []).append(plan.new)

    def _shift(self, buffer, indices):
        plan = self.plans.get(buffer)
        if plan is None:
            return buffer, indices
        # No "- 0" left behind when the region starts at zero.
        shifted = tuple(index if const_int(lo) == 0 else index - lo
                        for index, lo in zip(indices, plan.offsets))
        return plan.new, shifted

    def visit_BufferLoad(self, load):
        buffer, indices = self._shift(load.buffer, self.visit(load.indices))
        if buffer is load.buffer and indices is load.indices:
            return load
        return BufferLoad(buffer, indices, load.dtype)

    def visit_BufferStore(self, store):
        value = self.visit(store.value)
        buffer, indices = self._shift(store.buffer, self.visit(store.indices))
        if buffer is store.buffer and indices is store.indices and value is store.value:
            return store
        return BufferStore(buffer, value, indices)

    def visit_BufferRegion(self, region):
        plan = self.plans.get(region.buffer)
        if plan is None:
            return self.generic_visit(region)
        ranges = tuple(Range(r.min if const_int(lo) == 0 else r.min - lo, r.extent)
                       for r, lo in zip(self.visit(region.region), plan.offsets))
        return BufferRegion(plan.new, ranges)

    def visit_BlockRealize(self, realize):
        block = realize.block
        moved = [b for b in block.alloc_buffers if b in self.plans]
        new_block = self.visit(block)
        if moved or id(block) in self.by_anchor:
            kept = tuple(b for b in new_block.alloc_buffers if b not in self.plans)
            added = tuple(self.by_anchor.get(id(block), ()))
            new_block = new_block.replace(alloc_buffers=kept + added)
        if new_block is block:
            return self.generic_visit(realize)
        return realize.replace(iter_values=self.visit(realize.iter_values),
                               predicate=self.visit(realize.predicate), block=new_block)

    def visit_For(self, loop):
        body = self.visit(loop.body)
        added = self.by_anchor.get(id(loop))
        if added:
            # A For cannot hold an allocation: an opaque block around its body carries it.
            body = BlockRealize((), const(True, "bool"), Block(
                (), (), (), "", body, alloc_buffers=tuple(added)))
        return loop if body is loop.body else loop.replace(body=body)


def compact_buffer_allocation(stmt, gpu: bool = False):
    """Move and shrink the block-allocated buffers of ``stmt`` (see the module docstring;
    ``gpu=True``: thread loops share or split storage by scope)."""
    collector = _AccessCollector()
    collector.visit(stmt)
    analyzer = _analyzer()
    # Without the arithmetic package no region can be bounded; leave the allocations alone.
    if analyzer is None:
        return stmt
    plans = {}
    for buffer, owner in collector.allocated.items():
        if buffer in collector.pinned:
            continue
        plan = _plan_buffer(buffer, collector.accesses[buffer], owner, analyzer, gpu)
        if plan is not None:
            plans[buffer] = plan
    return _Rewriter(plans).visit(stmt) if plans else stmt


@prim_func_pass(opt_level=0, name="tir.CompactBufferAllocation")
def _compact_buffer_allocation(func, mod, ctx):
    body = compact_buffer_allocation(func.body)
    return func if body is func.body else func.with_body(body)


@prim_func_pass(opt_level=0, name="tir.CompactBufferAllocation")
def _compact_buffer_allocation_gpu(func, mod, ctx):
    body = compact_buffer_allocation(func.body, gpu=True)
    return func if body is func.body else func.with_body(body)


def CompactBufferAllocation(gpu: bool = False):
    """Pass: allocate intermediate buffers at the lowest common ancestor of their
    accesses, shrunk to the accessed region (module docstring); ``gpu=True`` makes
    thread loops share storage by scope, as on a GPU."""
    return _compact_buffer_allocation_gpu if gpu else _compact_buffer_allocation
