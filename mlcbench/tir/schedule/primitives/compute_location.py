"""compute_at / reverse_compute_at: move a block under a loop of its consumer/producer.

``reverse_compute_at(C, j_0)`` after a 4-way split of ``j``::

    for i, j_0 in T.grid(128, 32):
        for k, j_1 in T.grid(128, 4):
            with T.block("Y"): ...
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + ax0)

The moved block computes exactly the region the blocks under the loop produce
(reverse) or consume (compute_at) in one iteration of the loop: the region is the
interval of the access indices when the loops below ``loop`` range over their extents.
"""
from __future__ import annotations

from ....arith import Analyzer, eval_set
from ....arith.int_set import IntSet
from ..errors import fail
from ..ir_utils import (as_seq_list, block_realizes_under, const_int,
                        find_block, find_loop, replace_stmts, uses_any, walk)
from ...expr import Max, Min, Range, Var, binary, const
from ...function import PrimFunc
from ...functor import substitute
from ...stmt import Block, For, ForKind, IterType, seq


def _own_nest_top(func, primitive, hit):
    """The outermost loop that holds nothing but this block (or the realize itself)."""
    top = hit.node
    for loop in reversed(hit.loops()):
        if loop.body is not top:
            fail(primitive, f"block {hit.node.block.name_hint!r} must be the only statement "
                 f"under its loop {loop.loop_var.name!r}", func,
                 loops=[loop.loop_var], blocks=[hit.node.block.name_hint])
        top = loop
    return top


def _sibling_positions(func, primitive, scope_body, nest_top, loop_hit, block_name):
    """Indices, in the scope's statement list, of the block's nest and of ``loop``."""
    items = as_seq_list(scope_body)
    nest_at = next((n for n, s in enumerate(items) if s is nest_top), None)
    loop_at = next((n for n, s in enumerate(items) if s is loop_hit.node
                    or any(p is s for p in loop_hit.parents)), None)
    if nest_at is None or loop_at is None:
        fail(primitive, f"loop {loop_hit.node.loop_var.name!r} and block {block_name!r} must be "
             "in the same block scope", func, loops=[loop_hit.node.loop_var], blocks=[block_name])
    return items, nest_at, loop_at


def _relaxed_thread_loops(loops, scope: str) -> list:
    """The loops among ``loops`` (the target loop and those above it) over which a buffer
    of storage ``scope`` is shared: a block's threads share "shared" memory, so a copy
    into it computed under ``threadIdx`` loops must cover what every thread of the block
    reads (TVM sizes it the same way); "global" is shared by the whole grid; "local" by
    no one."""
    def shared_by(tag: str) -> bool:
        if scope.startswith("shared"):
            return tag.startswith(("threadIdx", "vthread"))
        return scope.startswith("global") and tag.startswith(("threadIdx", "blockIdx", "vthread"))
    return [lp for lp in loops if lp.thread_binding is not None
            and shared_by(lp.thread_binding.thread_tag)]


def _access_region(blocks_under, buffer, loop, analyzer, reads: bool, relaxed=()):
    """Per-dimension IntSets of ``buffer`` accessed by the blocks below ``loop``, over all
    iterations of the loops below it and of the ``relaxed`` loops above it."""
    sets = None
    for realize, loops_below in blocks_under:
        dom = {lp.loop_var: Range(lp.min, lp.extent) for lp in [*relaxed, *loops_below]}
        bind = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
        for region in (realize.block.reads if reads else realize.block.writes):
            if region.buffer is not buffer:
                continue
            dims = []
            for rng in region.region:
                lo = eval_set(substitute(rng.min, bind), dom, analyzer)
                # A point (extent 1, most accesses) spans what its index spans. This
                # analysis took 11.4 of a matmul tuning round's 46.9 s of search; without
                # the second evaluation the search went from 1.47 to 1.34 s per trial.
                hi = lo if const_int(rng.extent) == 1 else \
                    eval_set(substitute(rng.min + rng.extent - 1, bind), dom, analyzer)
                dims.append(IntSet(lo.min_value, hi.max_value))
            sets = dims if sets is None else [
                IntSet(analyzer.simplify(_min(a.min_value, b.min_value)),
                       analyzer.simplify(_max(a.max_value, b.max_value)))
                for a, b in zip(sets, dims)]
    return sets


def _within_buffer(sets, buffer) -> list:
    """A consumer's read region cut to the buffer's shape where both bounds are constants.
    A padded read guards its index (``T.if_then_else(0 <= w - 1, row[w - 1], -inf)``) yet
    the region still spans ``[-1, 111]`` of a 112-wide row; computed over that, the moved
    producer would run 113 iterations, one under a predicate, and no vector tile fits."""
    clipped = []
    for dim, s in zip(buffer.shape, sets):
        lo, hi, extent = const_int(s.min_value), const_int(s.max_value), const_int(dim)
        if lo is not None and hi is not None and extent is not None and \
                max(lo, 0) <= min(hi, extent - 1):
            s = IntSet(const(max(lo, 0), s.min_value.dtype),
                       const(min(hi, extent - 1), s.max_value.dtype))
        clipped.append(s)
    return clipped


def _min(a, b):
    return binary(Min, a, b)


def _max(a, b):
    return binary(Max, a, b)


def _blocks_below(loop: For) -> list:
    """(BlockRealize, loops strictly below ``loop`` that enclose it) of the blocks in
    ``loop``'s scope. Blocks nested in those (the inner block of a blockized one) are
    left out: their accesses use the outer block's iterators, which the outer block's
    own regions already cover in terms of the loops."""
    out = []

    def visit(node, parents):
        if type(node).__name__ == "BlockRealize":
            if not any(type(p).__name__ == "Block" for p in parents):
                out.append((node, [p for p in parents if isinstance(p, For)]))
    walk(loop.body, visit)
    return out


def _iter_ranges(block, regions, needed, analyzer):
    """Range of each iter var of ``block`` whose access index is that bare var."""
    ranges = {}
    for region in regions:
        sets = needed.get(id(region.buffer))
        if sets is None:
            continue
        for rng, s in zip(region.region, sets):
            if isinstance(rng.min, Var) and const_int(rng.extent) == 1 and s.is_bounded():
                old = ranges.get(rng.min)
                ranges[rng.min] = s if old is None else IntSet(
                    analyzer.simplify(_min(old.min_value, s.min_value)),
                    analyzer.simplify(_max(old.max_value, s.max_value)))
    return ranges


def _new_nest(block_realize, ranges, preserve_unit_loops, analyzer):
    """The block realized over the needed ranges, under fresh loops ``ax0, ax1, ...``."""
    block = block_realize.block
    bindings, loops, predicates = [], [], []
    for iv in block.iter_vars:
        full_lo, full_hi = iv.dom.min, analyzer.simplify(iv.dom.min + iv.dom.extent - 1)
        s = ranges.get(iv.var) or IntSet(full_lo, full_hi)
        lo, extent = s.min_value, analyzer.simplify(s.max_value - s.min_value + 1)
        if const_int(extent) == 1 and not preserve_unit_loops:
            binding = lo
        else:
            var = Var(f"ax{len(loops)}", iv.var.dtype)
            loops.append((var, extent))
            binding = var if const_int(lo) == 0 else lo + var
        if not analyzer.can_prove(lo >= full_lo):
            predicates.append(full_lo <= binding)
        if not analyzer.can_prove(s.max_value <= full_hi):
            predicates.append(binding <= full_hi)
        bindings.append(binding)
    predicate = const(True)
    for cond in predicates:
        predicate = cond if const_int(predicate) == 1 else predicate & cond
    stmt = block_realize.replace(iter_values=tuple(bindings), predicate=predicate)
    for var, extent in reversed(loops):
        stmt = For(var, const(0, var.dtype), extent, ForKind.SERIAL, stmt)
    return stmt


def _move(func, primitive, block_name, loop_var, preserve_unit_loops, reverse: bool,
          index: int = -1):
    hit = find_block(func, block_name, primitive)
    loop_hit = find_loop(func, loop_var, primitive)
    if any(p is loop_hit.node for p in hit.parents):
        fail(primitive, f"loop {loop_var.name!r} is already above block {block_name!r}", func,
             loops=[loop_var], blocks=[block_name])
    if const_int(hit.node.predicate) != 1:
        fail(primitive, f"block {block_name!r} has a predicate; move it before splitting its "
             "loops unevenly", func, blocks=[block_name])
    nest_top = _own_nest_top(func, primitive, hit)
    scope = hit.scope_block()
    items, nest_at, loop_at = _sibling_positions(func, primitive, scope.body, nest_top,
                                                 loop_hit, block_name)
    if reverse and nest_at < loop_at or not reverse and nest_at > loop_at:
        order = "after" if reverse else "before"
        fail(primitive, f"block {block_name!r} must come {order} loop {loop_var.name!r} in "
             "program order", func, loops=[loop_var], blocks=[block_name])
    _check_between(func, primitive, items, nest_at, loop_at, hit.node.block)
    analyzer = Analyzer()
    for enclosing in [p for p in loop_hit.parents if isinstance(p, For)] + [loop_hit.node]:
        analyzer.bind(enclosing.loop_var, Range(enclosing.min, enclosing.extent))
    block = hit.node.block
    own = block.reads if reverse else block.writes
    needed = {}
    loops_at = [p for p in loop_hit.parents if isinstance(p, For)] + [loop_hit.node]
    for region in own:
        relaxed = _relaxed_thread_loops(loops_at, region.buffer.scope)
        sets = _access_region(_blocks_below(loop_hit.node), region.buffer, loop_hit.node,
                              analyzer, reads=not reverse, relaxed=relaxed)
        if sets is not None:
            needed[id(region.buffer)] = sets if reverse else \
                _within_buffer(sets, region.buffer)
    if not needed:
        role = "producer" if reverse else "consumer"
        fail(primitive, f"no {role} of block {block_name!r} is under loop {loop_var.name!r}",
             func, loops=[loop_var], blocks=[block_name])
    _check_dependences(func, primitive, loop_hit, block, scope, reverse)
    ranges = _iter_ranges(block, own, needed, analyzer)
    nest = _new_nest(hit.node, ranges, preserve_unit_loops, analyzer)
    _check_cover(func, primitive, nest, needed, analyzer, reverse, loop_var, block_name)
    if reverse:
        _check_no_repeated_reduction(func, primitive, loop_hit, nest, block_name)
    loop = loop_hit.node
    items = as_seq_list(loop.body)
    at = _insertion_point(func, primitive, items, block, index, loop_var)
    body = seq(*items[:at], nest, *items[at:])
    return replace_stmts(func, {nest_top: None, loop: loop.replace(body=body)})


def _statements_touching(items, role: str, buffers: set) -> list:
    """Positions of the statements in ``items`` holding a block whose ``role`` regions
    ("reads" or "writes") use one of ``buffers``."""
    return [n for n, stmt in enumerate(items) if any(
        {id(r.buffer) for r in getattr(realize.block, role)} & buffers
        for realize in block_realizes_under(stmt))]


def _insertion_point(func, primitive, items, block, index, loop_var) -> int:
    """Where the moved nest goes among the statements ``items`` of the loop body, as in
    TVM: after every statement writing what the block reads, before every one reading
    what it writes. ``index`` -1 takes the last such position, -2 the first, n >= 0
    position n if it is one of them."""
    producers = _statements_touching(items, "writes", {id(r.buffer) for r in block.reads})
    consumers = _statements_touching(items, "reads", {id(r.buffer) for r in block.writes})
    first = producers[-1] + 1 if producers else 0
    last = consumers[0] if consumers else len(items)
    name = block.name_hint
    if first > last:
        fail(primitive, f"under loop {loop_var.name!r}, statement {last} reads what block "
             f"{name!r} writes before statement {producers[-1]} writes what it reads: no "
             "position fits it", func, loops=[loop_var], blocks=[name])
    if isinstance(index, bool) or not isinstance(index, int):
        fail(primitive, f"argument 'index': expected an int (-1, -2 or a position), found "
             f"{type(index).__name__} {index!r}", func, loops=[loop_var], blocks=[name])
    if index in (-1, -2):
        return last if index == -1 else first
    if not first <= index <= last:
        fail(primitive, f"argument 'index': {index} is not a position where block {name!r} "
             f"may go under loop {loop_var.name!r}; it may go at positions {first} to {last} "
             f"of the {len(items)} statements there (-2 for {first}, -1 for {last})", func,
             loops=[loop_var], blocks=[name])
    return index


def _nest_blocks(nest) -> list:
    """[(BlockRealize, loops of ``nest`` above it)] of a freshly built nest."""
    out = []
    walk(nest, lambda node, parents: out.append(
        (node, [p for p in parents if isinstance(p, For)]))
        if type(node).__name__ == "BlockRealize" else None)
    return out


def _check_cover(func, primitive, nest, needed, analyzer, reverse, loop_var, block_name):
    """Region cover, per iteration of ``loop``: a moved consumer reads only what the
    producers under the loop wrote (reverse); a moved producer writes all that the
    consumers under the loop read (forward). An access such as ``yy + ry`` that cannot
    be narrowed to one iteration fails the first rule."""
    for buffer_id, sets in needed.items():
        realize = _nest_blocks(nest)[0][0]
        regions = realize.block.reads if reverse else realize.block.writes
        buffer = next(r.buffer for r in regions if id(r.buffer) == buffer_id)
        moved = _access_region(_nest_blocks(nest), buffer, None, analyzer, reads=reverse)
        for dim, (have, want) in enumerate(zip(moved, sets)):
            inner, outer = (have, want) if reverse else (want, have)
            if analyzer.can_prove(inner.min_value >= outer.min_value) and \
                    analyzer.can_prove(inner.max_value <= outer.max_value):
                continue
            role = "reads" if reverse else "must provide"
            other = "what the producers under it write" if reverse else \
                "what its consumers under it read"
            fail(primitive, f"block {block_name!r} {role} {buffer.name!r} (dimension {dim}) "
                 f"outside {other} in one iteration of loop {loop_var.name!r}; move it "
                 "under an outer loop", func, loops=[loop_var], blocks=[block_name])


def _check_no_repeated_reduction(func, primitive, loop_hit, nest, block_name):
    """A consumer whose reduction is spread over the outer loops must not run again for
    an outer loop it does not depend on (it would add its terms twice)."""
    outer = []
    for p in loop_hit.parents + (loop_hit.node,):
        if isinstance(p, Block):
            outer = []
        elif isinstance(p, For) and const_int(p.extent) != 1:
            outer.append(p.loop_var)
    realize = _nest_blocks(nest)[0][0]
    pairs = list(zip(realize.block.iter_vars, realize.iter_values))
    spread = any(iv.iter_type != IterType.DATA_PAR and uses_any(v, outer) for iv, v in pairs)
    unused = [v for v in outer if not any(uses_any(value, [v]) for _, value in pairs)]
    if spread and unused:
        fail(primitive, f"reduction block {block_name!r} would accumulate again on every "
             f"iteration of loop {unused[0].name!r}, which none of its axes depends on",
             func, loops=unused, blocks=[block_name])


def _check_dependences(func, primitive, loop_hit, block, scope, reverse):
    """reverse: every producer under ``loop`` finishes its region within one iteration
    (``loop`` and the loops above it are spatial for the producer). Forward: every
    consumer of the block in the scope sits under ``loop``."""
    outer_loops = [p.loop_var for p in loop_hit.parents if isinstance(p, For)]
    outer_loops.append(loop_hit.node.loop_var)
    under = {id(r) for r in block_realizes_under(loop_hit.node)}
    if reverse:
        read = {id(r.buffer) for r in block.reads}
        for realize in block_realizes_under(loop_hit.node):
            other = realize.block
            if not {id(r.buffer) for r in other.writes} & read:
                continue
            for iv, value in zip(other.iter_vars, realize.iter_values):
                if iv.iter_type != IterType.DATA_PAR and uses_any(value, outer_loops):
                    fail(primitive, f"producer block {other.name_hint!r} has not finished its "
                         f"{iv.iter_type.value} over {iv.var.name!r} within one iteration of "
                         f"loop {loop_hit.node.loop_var.name!r}", func,
                         loops=[loop_hit.node.loop_var], blocks=[other.name_hint])
        return
    written = {id(r.buffer) for r in block.writes}
    _check_no_reset_of_accumulator(func, primitive, loop_hit, block, written, outer_loops)
    for realize in block_realizes_under(scope.body):
        other = realize.block
        if other is not block and {id(r.buffer) for r in other.reads} & written and \
                id(realize) not in under:
            fail(primitive, f"consumer block {other.name_hint!r} of block {block.name_hint!r} "
                 f"is not under loop {loop_hit.node.loop_var.name!r}", func,
                 loops=[loop_hit.node.loop_var], blocks=[other.name_hint])


def _check_no_reset_of_accumulator(func, primitive, loop_hit, block, written, outer_loops):
    """compute_at of an init such as ``C_init`` under a loop that its reduction (which
    accumulates into the same buffer) spans would reset the sum on every iteration."""
    for realize in block_realizes_under(loop_hit.node):
        other = realize.block
        if not {id(r.buffer) for r in other.writes} & written:
            continue
        for iv, value in zip(other.iter_vars, realize.iter_values):
            if iv.iter_type != IterType.DATA_PAR and uses_any(value, outer_loops):
                fail(primitive, f"block {other.name_hint!r} accumulates into what block "
                     f"{block.name_hint!r} writes, and its {iv.iter_type.value} over "
                     f"{iv.var.name!r} spans loop {loop_hit.node.loop_var.name!r}: the "
                     f"moved block would reset the result on every iteration", func,
                     loops=[loop_hit.node.loop_var], blocks=[block.name_hint, other.name_hint])


def _check_between(func, primitive, items, nest_at, loop_at, block):
    """No statement between the two may touch the moved block's buffers."""
    touched = {id(r.buffer) for r in block.reads + block.writes}
    lo, hi = sorted((nest_at, loop_at))
    for stmt in items[lo + 1:hi]:
        for realize in block_realizes_under(stmt):
            other = realize.block
            if {id(r.buffer) for r in other.reads + other.writes} & touched:
                fail(primitive, f"block {other.name_hint!r} between them accesses a buffer of "
                     f"block {block.name_hint!r}", func, blocks=[other.name_hint, block.name_hint])


def compute_at(func: PrimFunc, block_name: str, loop_var: Var,
               preserve_unit_loops: bool = False, index: int = -1) -> PrimFunc:
    """Move producer ``block_name`` into ``loop_var``'s body: by default (``index=-1``)
    right before the first statement there that reads what it writes."""
    return _move(func, "compute_at", block_name, loop_var, preserve_unit_loops,
                 reverse=False, index=index)


def reverse_compute_at(func: PrimFunc, block_name: str, loop_var: Var,
                       preserve_unit_loops: bool = False, index: int = -1) -> PrimFunc:
    """Move consumer ``block_name`` into ``loop_var``'s body: by default (``index=-1``)
    at its end, or before a statement there that reads what it writes."""
    return _move(func, "reverse_compute_at", block_name, loop_var, preserve_unit_loops,
                 reverse=True, index=index)
