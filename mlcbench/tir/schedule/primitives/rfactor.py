"""rfactor: split a reduction into partial results along one reduction loop.

``rfactor(k_1, 1)`` on ``B[vi] += A[vi, vk]`` after splitting ``k`` into ``k_0, k_1``
(extent 16) gives::

    B_rf = T.alloc_buffer((16, 16))
    for i, k_0, k_1 in T.grid(16, 4, 16):
        with T.block("B_rf"):
            vk_1_rf, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
            with T.init():
                B_rf[vi, vk_1_rf] = T.float32(0)
            B_rf[vi, vk_1_rf] = B_rf[vi, vk_1_rf] + A[vi, vk_0 * 16 + vk_1_rf]
    for i, k_1 in T.grid(16, 16):
        with T.block("B"):
            vk_1_rf, vi = T.axis.remap("RS", [k_1, i])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + B_rf[vi, vk_1_rf]

The rf loop becomes a spatial iterator of ``B_rf``; every other loop of the reduction
bindings gets its own reduction iterator there. The partial results no longer depend
on each other along ``k_1``, so that loop of ``B_rf`` may be parallelized or
vectorized. Reductions with ``+``, ``T.max``, ``T.min`` and the ordered maximum and
minimum ``T.Select(X > e, X, e)`` / ``T.Select(X < e, X, e)`` are recognised (the last two
skip NaN where ``T.max`` returns it, and are one ``vmaxps`` / ``vminps``); the write-back
block keeps the original init, the ``_rf`` block starts from the reduction's identity.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import fail
from ..ir_utils import block_realizes_under, const_int, find_all, replace_stmts, uses_any
from ...buffer import Buffer, BufferRegion
from ...expr import GT, LT, Add, BufferLoad, Max, Min, Range, Select, Var, binary, const
from ...function import PrimFunc
from ...functor import substitute
from ...op import max_value, min_value
from ...stmt import Block, BlockRealize, BufferStore, For, ForKind, IterType, IterVar, seq


@dataclass(frozen=True)
class Reducer:
    """One form of reduction body: ``operands`` takes a combined value apart (``(a, b)``,
    or None when the value has another form), ``combine`` builds one, ``identity`` gives
    the starting value for a dtype."""
    operands: Callable
    combine: Callable
    identity: Callable


def _binary_reducer(cls, identity) -> Reducer:
    return Reducer(lambda v: (v.a, v.b) if type(v) is cls else None,
                   lambda a, b: binary(cls, a, b), identity)


def _select_reducer(compare, identity) -> Reducer:
    """``Select(a > b, a, b)`` (``compare`` GT) or ``Select(a < b, a, b)`` (LT)."""
    def operands(v):
        if not (isinstance(v, Select) and type(v.condition) is compare):
            return None
        cond = v.condition
        same = _same(cond.a, v.true_value) and _same(cond.b, v.false_value)
        return (v.true_value, v.false_value) if same else None

    return Reducer(operands, lambda a, b: Select(binary(compare, a, b), a, b), identity)


REDUCERS = (_binary_reducer(Add, lambda dt: const(0, dt)), _binary_reducer(Max, min_value),
            _binary_reducer(Min, max_value), _select_reducer(GT, min_value),
            _select_reducer(LT, max_value))


def _same(a, b) -> bool:
    return a is b or str(a) == str(b)


def _reducer(func, block):
    """``(reducer, store, the value combined in)`` of a reduction block body."""
    body = block.body
    for reducer in REDUCERS if isinstance(body, BufferStore) else ():
        pair = reducer.operands(body.value) or ()
        for own, other in (pair, pair[::-1]) if pair else ():
            if isinstance(own, BufferLoad) and own.buffer is body.buffer and all(
                    _same(a, b) for a, b in zip(own.indices, body.indices)):
                return reducer, body, other
    fail("rfactor", f"block {block.name_hint!r} is not a reduction rfactor understands: its "
         "body must be `X[idx] = X[idx] + e` (or T.max / T.min, or T.Select(X[idx] > e, "
         "X[idx], e) / T.Select(X[idx] < e, X[idx], e))", func, blocks=[block.name_hint])


def _locate(func, loop_var, primitive="rfactor"):
    hits = find_all(func, lambda n: isinstance(n, For) and n.loop_var is loop_var)
    if not hits:
        fail(primitive, f"the loop {loop_var.name!r} is no longer in the function", func)
    loop = hits[0].node
    realizes = [r for r in block_realizes_under(loop.body)]
    if len(realizes) != 1 or realizes[0].block.init is None:
        names = [r.block.name_hint for r in realizes]
        fail(primitive, f"loop {loop_var.name!r} must hold exactly one reduction block "
             f"(with T.init()); it holds {names}", func, loops=[loop_var])
    realize = realizes[0]
    block = realize.block
    (hit,) = find_all(func, lambda n: n is realize)
    return hit, realize, block


def _check_loop(func, realize, block, loop, loops):
    used = False
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if uses_any(value, [loop.loop_var]):
            used = True
            if iv.iter_type != IterType.COMM_REDUCE:
                fail("rfactor", f"loop {loop.loop_var.name!r} binds the spatial iterator "
                     f"{iv.var.name!r} of block {block.name_hint!r}; rfactor needs a "
                     "reduction loop", func, loops=[loop.loop_var], blocks=[block.name_hint])
    if not used:
        fail("rfactor", f"loop {loop.loop_var.name!r} binds no reduction iterator of block "
             f"{block.name_hint!r}", func, loops=[loop.loop_var], blocks=[block.name_hint])
    if const_int(loop.min) != 0 or const_int(loop.extent) is None:
        fail("rfactor", f"loop {loop.loop_var.name!r} needs min 0 and a constant extent",
             func, loops=[loop.loop_var])


def _insert(indices, axis, value):
    indices = list(indices)
    indices.insert(axis, value)
    return tuple(indices)


def _point(buffer, indices):
    return BufferRegion(buffer, tuple(Range(i, const(1, i.dtype)) for i in indices))


def _rf_block(block, realize, loop, loops, rf_buf, axis, combiner, store, rhs):
    """The partial reduction: the rf loop becomes a spatial iterator; every other loop of
    the reduction bindings gets its own reduction iterator, replacing the old ones."""
    rf_var = Var(f"v{loop.loop_var.name}_rf", loop.loop_var.dtype)
    pairs = list(zip(block.iter_vars, realize.iter_values))
    reduce_values = [v for iv, v in pairs if iv.iter_type != IterType.DATA_PAR]
    red_loops = [lp for lp in loops if lp is not loop
                 and any(uses_any(v, [lp.loop_var]) for v in reduce_values)]
    loop_to_iter = {lp.loop_var: Var(f"v{lp.loop_var.name}", lp.loop_var.dtype)
                    for lp in red_loops}
    loop_to_iter[loop.loop_var] = rf_var
    vmap = {iv.var: substitute(v, loop_to_iter) for iv, v in pairs
            if iv.iter_type != IterType.DATA_PAR}
    spatial = [(iv, v) for iv, v in pairs if iv.iter_type == IterType.DATA_PAR]
    iter_vars = ((IterVar(Range(loop.min, loop.extent), rf_var, IterType.DATA_PAR),)
                 + tuple(iv for iv, _ in spatial)
                 + tuple(IterVar(Range(lp.min, lp.extent), loop_to_iter[lp.loop_var],
                                 IterType.COMM_REDUCE) for lp in red_loops))
    values = ((loop.loop_var,) + tuple(v for _, v in spatial)
              + tuple(lp.loop_var for lp in red_loops))
    rf_idx = _insert(store.indices, axis, rf_var)
    identity = combiner.identity(store.buffer.dtype)

    def swap(regions):
        return tuple(_point(rf_buf, _insert([r.min for r in reg.region], axis, rf_var))
                     if reg.buffer is store.buffer else reg for reg in regions)

    new_block = Block(
        iter_vars, substitute(swap(block.reads), vmap), swap(block.writes),
        f"{block.name_hint}_rf",
        BufferStore(rf_buf, combiner.combine(BufferLoad(rf_buf, rf_idx),
                                             substitute(rhs, vmap)), rf_idx),
        BufferStore(rf_buf, identity, rf_idx), block.alloc_buffers, block.match_buffers)
    return BlockRealize(values, realize.predicate, new_block)


def _write_back(block, realize, loop, loops, rf_buf, axis, combiner, store):
    spatial = [(iv, v) for iv, v in zip(block.iter_vars, realize.iter_values)
               if iv.iter_type == IterType.DATA_PAR]
    kept = [lp for lp in loops if lp is loop or any(uses_any(v, [lp.loop_var])
                                                    for _, v in spatial)]
    loop_map = {lp.loop_var: Var(lp.loop_var.name, lp.loop_var.dtype) for lp in kept}
    iv_map = {iv.var: Var(iv.var.name, iv.var.dtype) for iv, _ in spatial}
    rf_var = Var(f"v{loop.loop_var.name}_rf", loop.loop_var.dtype)
    idx = substitute(store.indices, iv_map)
    rf_idx = _insert(idx, axis, rf_var)
    body = BufferStore(store.buffer, combiner.combine(BufferLoad(store.buffer, idx),
                                                      BufferLoad(rf_buf, rf_idx)), idx)
    new_block = Block(
        (IterVar(Range(loop.min, loop.extent), rf_var, IterType.COMM_REDUCE),) + tuple(
            IterVar(iv.dom, iv_map[iv.var], iv.iter_type) for iv, _ in spatial),
        (_point(rf_buf, rf_idx),), (_point(store.buffer, idx),), block.name_hint, body,
        substitute(block.init, iv_map))
    values = (loop_map[loop.loop_var],) + tuple(substitute(v, loop_map) for _, v in spatial)
    stmt = BlockRealize(values, const(True), new_block)
    for lp in reversed(kept):
        stmt = For(loop_map[lp.loop_var], lp.min, lp.extent, ForKind.SERIAL, stmt)
    return stmt


def rfactor(func: PrimFunc, loop_var: Var, factor_axis: int) -> tuple[PrimFunc, str]:
    """Apply rfactor at ``loop_var``; returns the new function and the rf block's name."""
    hit, realize, block = _locate(func, loop_var)
    loops = hit.loops()
    loop = next(lp for lp in loops if lp.loop_var is loop_var)
    _check_loop(func, realize, block, loop, loops)
    others = [r.block.name_hint for r in block_realizes_under(loops[0]) if r is not realize]
    if others:
        fail("rfactor", f"blocks {others} share the loops of block {block.name_hint!r}; "
             "apply rfactor before moving blocks under its loops", func,
             loops=[loops[0].loop_var], blocks=[block.name_hint] + others)
    combiner, store, rhs = _reducer(func, block)
    ndim = len(store.indices)
    if not -(ndim + 1) <= factor_axis <= ndim:
        fail("rfactor", f"factor_axis {factor_axis} is out of range for the {ndim}-d "
             f"buffer {store.buffer.name!r}; pass a value in [{-(ndim + 1)}, {ndim}]", func,
             blocks=[block.name_hint])
    axis = factor_axis % (ndim + 1)
    target = store.buffer
    rf_buf = Buffer(f"{target.name}_rf", _insert(target.shape, axis, loop.extent),
                    target.dtype, None, (), None, target.scope)
    rf_realize = _rf_block(block, realize, loop, loops, rf_buf, axis, combiner, store, rhs)
    back = _write_back(block, realize, loop, loops, rf_buf, axis, combiner, store)
    top = loops[0]
    scope = hit.scope_block()
    func = replace_stmts(func, {realize: rf_realize})
    new_top = next(h.node for h in find_all(func, lambda n: isinstance(n, For)
                                            and n.loop_var is top.loop_var))
    func = replace_stmts(func, {new_top: seq(new_top, back)})
    new_scope = next(h.node for h in find_all(func, lambda n: isinstance(n, BlockRealize)
                                              and n.block.name_hint == scope.name_hint))
    scope_block = new_scope.block.replace(alloc_buffers=new_scope.block.alloc_buffers
                                          + (rf_buf,))
    new_func = replace_stmts(func, {new_scope: new_scope.replace(block=scope_block)})
    return new_func, f"{block.name_hint}_rf"
