"""Can two iterations of a loop touch one element, at least one of them writing it?

``parallel`` and ``vectorize`` run the iterations of a loop at once, so they are legal
only when no iteration writes what another one reads or writes. TVM states this through
its block contract (blocks under the loop are complete or reduction blocks, and the loop
feeds only their spatial iter vars); a block can still break that contract by indexing
with the loop variable directly::

    for i in range(4095):
        with T.block("b"):
            T.reads(A[i:i + 2])
            T.writes(A[i + 1])
            A[i + 1] = A[i + 1] + A[i]      # iteration i reads what i - 1 wrote

so the declared regions are checked here. Iter vars are replaced by their bindings, so
every region is a function of the loop variables; the iterations are then enumerated
with numpy (one axis per loop variable) and every element written is matched against
every element read or written by another iteration (the enclosing loops taking the same
values on both sides).

When the iteration grid is larger than ``MAX_POINTS`` only a prefix of each loop's
range is enumerated: an overlap found there is a real one, so a refusal is always right,
but an overlap that first shows beyond the prefix is not seen. Regions that cannot be
evaluated (symbolic extents, data-dependent indices) are not checked.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..ir_utils import const_int
from ....ir.structural import structural_equal
from ...buffer import BufferRegion
from ...expr import (Add, And, EQ, FloorDiv, FloorMod, GE, GT, IntImm, LE, LT, Max, Min, Mul,
                     NE, Not, Or, Sub, Var)
from ...functor import substitute, uses_var
from ...stmt import BlockRealize, For, IfThenElse, SeqStmt

MAX_POINTS = 1 << 12


@dataclass
class Access:
    """One declared region of a block below the loop, in terms of loop variables."""
    block: str
    kind: str                     # "writes" or "reads"
    declared: BufferRegion        # as the block states it, for messages
    bounds: list                  # [(min, extent)] per dimension, over loop vars
    predicate: object             # the block's T.where over loop vars
    inner: tuple                  # loops between the checked loop and the block


@dataclass
class Overlap:
    """A witness: iteration ``first`` writes ``first_region``; ``second`` touches it."""
    write: Access
    other: Access
    first: dict
    second: dict
    first_region: str
    second_region: str


def find_overlap(loop: For, parents: tuple):
    """An :class:`Overlap` between two iterations of ``loop``, or None when none is seen."""
    extent = const_int(loop.extent)
    if extent is None or extent < 2:
        return None
    outer, vmap = _outer_context(parents)
    accesses = _collect(loop.body, vmap, ())
    written = {id(a.declared.buffer) for a in accesses if a.kind == "writes"}
    for write in (a for a in accesses if a.kind == "writes"):
        for other in accesses:
            if id(other.declared.buffer) != id(write.declared.buffer):
                continue
            if other.kind == "reads" and (id(other.declared.buffer) not in written
                                          or _same_region(write, other)):
                continue
            found = _pair_overlap(loop, outer, write, other)
            if found is not None:
                return found
    return None


def _same_region(write: Access, read: Access) -> bool:
    """A block that reads exactly what it writes (an accumulator) overlaps another
    iteration exactly when its write does, which the write-write check covers."""
    return write.block == read.block and structural_equal(write.declared, read.declared)


def _outer_context(parents):
    """Loops above the checked one and the bindings of the blocks above it."""
    outer, vmap = [], {}
    for node in parents:
        if isinstance(node, For):
            outer.append(node)
        elif isinstance(node, BlockRealize):
            for iv, value in zip(node.block.iter_vars, node.iter_values):
                vmap[iv.var] = substitute(value, vmap)
    return outer, vmap


def _collect(stmt, vmap, inner, guards=()) -> list:
    """The accesses of the outermost blocks below ``stmt`` (their regions cover the
    blocks nested in them); ``guards`` are the conditions of enclosing ``if``s."""
    if isinstance(stmt, BlockRealize):
        return _block_accesses(stmt, vmap, inner, guards)
    if isinstance(stmt, For):
        return _collect(stmt.body, vmap, inner + (stmt,), guards)
    if isinstance(stmt, SeqStmt):
        return [a for child in stmt.seq for a in _collect(child, vmap, inner, guards)]
    if isinstance(stmt, IfThenElse):
        cond = substitute(stmt.condition, vmap)
        out = _collect(stmt.then_case, vmap, inner, guards + (cond,))
        if stmt.else_case is not None:
            out += _collect(stmt.else_case, vmap, inner, guards + (Not(cond),))
        return out
    # a let-bound or otherwise unknown variable makes the regions unevaluable
    children = [getattr(stmt, "body", None)]
    return [a for child in children if child is not None
            for a in _collect(child, vmap, inner, guards)]


def _block_accesses(realize, vmap, inner, guards) -> list:
    block = realize.block
    local = dict(vmap)
    for iv, value in zip(block.iter_vars, realize.iter_values):
        local[iv.var] = substitute(value, vmap)
    predicate = substitute(realize.predicate, vmap)
    for cond in guards:
        predicate = cond & predicate
    out = []
    for kind in ("writes", "reads"):
        for region in getattr(block, kind):
            bounds = [(substitute(r.min, local), substitute(r.extent, local))
                      for r in region.region]
            out.append(Access(block.name_hint, kind, region, bounds, predicate, inner))
    return out


# -- enumeration ----------------------------------------------------------------------

def _used(access: Access, loops) -> list:
    exprs = [e for pair in access.bounds for e in pair] + [access.predicate]
    return [lp for lp in loops
            if any(uses_var(e, lambda v, var=lp.loop_var: v is var) for e in exprs)]


def _value_counts(loop, outer, write, other) -> dict | None:
    """``{id(loop): (loop, count)}``: how many values of each loop variable to enumerate
    (a prefix when the grid is over budget), the checked loop first."""
    touched = {id(lp) for lp in _used(write, outer) + _used(other, outer)}
    shared = [lp for lp in outer if id(lp) in touched]
    inner = _used(write, write.inner) + _used(other, other.inner)
    counts, budget = {}, MAX_POINTS
    for lp in [loop] + inner + shared:
        if const_int(lp.extent) is None or const_int(lp.min) is None:
            return None
        take = max(1, min(const_int(lp.extent), budget))
        counts[id(lp)] = (lp, take)
        budget = max(1, budget // take)
    return counts


def _pair_overlap(loop, outer, write: Access, other: Access):
    counts = _value_counts(loop, outer, write, other)
    if counts is None:
        return None
    shared = [lp for lp in outer if id(lp) in counts]
    first = _points(write, loop, shared, counts)
    second = first if other is write else _points(other, loop, shared, counts)
    if first is None or second is None:
        return None
    hit = _conflicting_rows(first, second, self_pair=other is write)
    if hit is None:
        return None
    (row_a, row_b) = hit
    return Overlap(write, other, first.iteration(row_a), second.iteration(row_b),
                   first.region_text(row_a), second.region_text(row_b))


class _Points:
    """The elements one access touches, one row per (iteration, element)."""

    def __init__(self, access, names, env_rows, keys, target, origin, mins, extents):
        self.access, self.names, self.env_rows = access, names, env_rows
        self.keys, self.target, self.origin = keys, target, origin
        self.mins, self.extents = mins, extents

    def iteration(self, row) -> dict:
        point = self.origin[row]
        return {name: int(values[point]) for name, values in zip(self.names, self.env_rows)}

    def region_text(self, row) -> str:
        point = self.origin[row]
        dims = []
        for lo, ext in zip(self.mins, self.extents):
            low, size = int(lo[point]), int(ext[point])
            dims.append(str(low) if size == 1 else f"{low}:{low + size}")
        return f"{self.access.declared.buffer.name}[{', '.join(dims)}]"


def _points(access: Access, loop, shared, counts):
    """Enumerate the iterations that run ``access`` and the elements they touch."""
    axes = [loop] + [lp for lp in access.inner if id(lp) in counts] + shared
    shape = [counts[id(lp)][1] for lp in axes]
    env = {}
    for axis, lp in enumerate(axes):
        view = [1] * len(axes)
        view[axis] = shape[axis]
        start = const_int(lp.min)
        env[lp.loop_var] = np.arange(start, start + shape[axis], dtype=np.int64).reshape(view)
    flat = lambda value: np.broadcast_to(np.asarray(value, dtype=np.int64), shape).ravel()
    active = _evaluate(access.predicate, env)
    bounds = [(_evaluate(lo, env), _evaluate(ext, env)) for lo, ext in access.bounds]
    if active is None or any(lo is None or ext is None for lo, ext in bounds):
        return None
    chosen = np.nonzero(flat(active))[0]
    mins = [flat(lo) for lo, _ in bounds]
    extents = [flat(ext) for _, ext in bounds]
    coords, origin = _expand(mins, extents, chosen)
    if coords is None:
        return None
    names = [lp.loop_var.name for lp in axes]
    env_rows = [flat(env[lp.loop_var]) for lp in axes]
    shared_cols = [env_rows[axes.index(lp)][origin] for lp in shared]
    keys = np.stack(shared_cols + coords, axis=1) if shared_cols or coords else \
        np.zeros((len(origin), 1), dtype=np.int64)
    return _Points(access, names, env_rows, keys, env_rows[0][origin], origin, mins, extents)


def _expand(mins, extents, chosen):
    """One row per element of each chosen point's box (None when too many)."""
    if not mins:
        return [], chosen
    if all(np.all(ext[chosen] == 1) for ext in extents):
        return [lo[chosen] for lo in mins], chosen
    sizes = [ext[chosen] for ext in extents]
    widest = [int(s.max(initial=1)) for s in sizes]
    if len(chosen) * math.prod(widest) > 4 * MAX_POINTS:
        return None, None
    offsets = np.stack(np.meshgrid(*[np.arange(w) for w in widest], indexing="ij"),
                       axis=-1).reshape(-1, len(widest))
    origin = np.repeat(chosen, len(offsets))
    offset = np.tile(offsets, (len(chosen), 1))
    inside = np.all(offset < np.stack([ext[origin] for ext in extents], axis=1), axis=1)
    origin, offset = origin[inside], offset[inside]
    coords = [lo[origin] + offset[:, d] for d, lo in enumerate(mins)]
    return coords, origin


def _conflicting_rows(first: _Points, second: _Points, self_pair: bool):
    """Rows ``(a, b)`` touching one element from two different iterations, or None."""
    keys = np.concatenate([first.keys, second.keys]) if not self_pair else first.keys
    if len(keys) == 0:
        return None
    _, inverse = np.unique(_packed(keys), return_inverse=True)
    inverse = inverse.ravel()
    n_first = len(first.keys)
    ids_a, ids_b = inverse[:n_first], (inverse if self_pair else inverse[n_first:])
    lo_a, hi_a = _per_key(ids_a, first.target, inverse.max() + 1)
    lo_b, hi_b = _per_key(ids_b, second.target, inverse.max() + 1)
    both = (hi_a >= lo_a) & (hi_b >= lo_b)
    clash = both & ~((lo_a == hi_a) & (lo_b == hi_b) & (lo_a == lo_b))
    if not clash.any():
        return None
    key = int(np.argmax(clash))
    rows_a, rows_b = np.nonzero(ids_a == key)[0], np.nonzero(ids_b == key)[0]
    for a in rows_a:
        differs = rows_b[second.target[rows_b] != first.target[a]]
        if len(differs):
            return int(a), int(differs[0])
    return None


def _packed(keys):
    """One int64 per row, equal exactly when the rows are (sorting rows is slow)."""
    low = keys.min(axis=0)
    spans = keys.max(axis=0) - low + 1
    if math.prod(int(x) for x in spans) >= 1 << 62:
        return np.unique(keys, axis=0, return_inverse=True)[1].ravel()
    strides = np.cumprod(np.concatenate([[1], spans[:0:-1]]))[::-1]
    return ((keys - low) * strides).sum(axis=1)


def _per_key(ids, values, count):
    lo = np.full(count, np.iinfo(np.int64).max)
    hi = np.full(count, np.iinfo(np.int64).min)
    np.minimum.at(lo, ids, values)
    np.maximum.at(hi, ids, values)
    return lo, hi


_OPS = {Add: np.add, Sub: np.subtract, Mul: np.multiply, Min: np.minimum, Max: np.maximum,
        LT: np.less, LE: np.less_equal, GT: np.greater, GE: np.greater_equal, EQ: np.equal,
        NE: np.not_equal, And: np.logical_and, Or: np.logical_or}


def _evaluate(expr, env: dict):
    """Integer (or boolean) value of ``expr`` over the grid; None when it uses anything
    the enumeration does not bind (symbolic sizes, loads, calls)."""
    if isinstance(expr, IntImm):
        return expr.value
    if isinstance(expr, Var):
        return env.get(expr)
    if isinstance(expr, Not):
        value = _evaluate(expr.a, env)
        return None if value is None else np.logical_not(value)
    if isinstance(expr, (FloorDiv, FloorMod)):
        a, b = _evaluate(expr.a, env), _evaluate(expr.b, env)
        if a is None or b is None or np.any(np.asarray(b) == 0):
            return None
        return a // b if isinstance(expr, FloorDiv) else a % b
    op = _OPS.get(type(expr))
    if op is None:
        return None
    a, b = _evaluate(expr.a, env), _evaluate(expr.b, env)
    return None if a is None or b is None else op(a, b)
