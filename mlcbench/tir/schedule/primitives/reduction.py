"""decompose_reduction: hoist a reduction block's ``T.init()`` into its own block.

Before (``decompose_reduction(Y, k)``)::

    for i, j, k in T.grid(128, 128, 128):
        with T.block("Y"):
            ...
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]

After::

    for i, j in T.grid(128, 128):
        with T.block("Y_init"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads()
            T.writes(Y[vi, vj])
            Y[vi, vj] = T.float32(0)
        for k in range(128):
            with T.block("Y_update"):
                ...
"""
from __future__ import annotations

from ..errors import fail
from ..ir_utils import const_int, find_block, replace_stmts, uses_any
from ...expr import Var
from ...function import PrimFunc
from ...functor import substitute
from ...stmt import Block, BlockRealize, For, ForKind, IterType, IterVar, seq


def _init_loops(loops_below, bindings):
    """Copies (``<name>_init``) of the loops the init block's bindings use."""
    vmap, copies = {}, []
    for loop in loops_below:
        if any(uses_any(b, [loop.loop_var]) for b in bindings):
            var = Var(loop.loop_var.name + "_init", loop.loop_var.dtype)
            vmap[loop.loop_var] = var
            copies.append((loop, var))
    return vmap, copies


def _check_no_reduction_above(func, block, realize, loops_above, loop_var):
    """The init must run once per output element: no reduction loop may enclose it."""
    for loop in loops_above:
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.iter_type != IterType.DATA_PAR and uses_any(value, [loop.loop_var]):
                fail("decompose_reduction", f"loop {loop.loop_var.name!r} above "
                     f"{loop_var.name!r} is a reduction loop of block {block.name_hint!r}; "
                     f"decompose at {loop.loop_var.name!r} or a loop above it", func,
                     loops=[loop.loop_var, loop_var], blocks=[block.name_hint])


def _check_no_repeat_below(func, block, realize, loops_below):
    """Every loop from ``loop`` down must drive an axis of the block: a loop none of
    them uses would repeat the update without running the init again."""
    for loop in loops_below:
        if const_int(loop.extent) != 1 and not any(
                uses_any(value, [loop.loop_var]) for value in realize.iter_values):
            fail("decompose_reduction", f"loop {loop.loop_var.name!r} drives no axis of block "
                 f"{block.name_hint!r}, so the update would repeat without its init; "
                 f"decompose at a loop below {loop.loop_var.name!r}", func,
                 loops=[loop.loop_var], blocks=[block.name_hint])


def decompose_reduction(func: PrimFunc, block_name: str, loop_var: Var) -> PrimFunc:
    """Split block ``block_name`` into ``<name>_init`` (placed before ``loop_var``) and
    ``<name>_update``."""
    hit = find_block(func, block_name, "decompose_reduction")
    realize, block = hit.node, hit.node.block
    if block.init is None:
        fail("decompose_reduction", f"block {block_name!r} has no T.init(); only reduction "
             "blocks with an init statement can be decomposed", func, blocks=[block_name])
    loops = hit.loops()
    position = next((n for n, lp in enumerate(loops) if lp.loop_var is loop_var), None)
    if position is None:
        fail("decompose_reduction", f"loop {loop_var.name!r} is not above block "
             f"{block_name!r}; pass one of its loops {[lp.loop_var.name for lp in loops]}",
             func, loops=[loop_var], blocks=[block_name])
    _check_no_reduction_above(func, block, realize, loops[:position], loop_var)
    _check_no_repeat_below(func, block, realize, loops[position:])
    spatial = [(iv, v) for iv, v in zip(block.iter_vars, realize.iter_values)
               if iv.iter_type == IterType.DATA_PAR]
    loop_map, copies = _init_loops(loops[position:], [v for _, v in spatial])
    if uses_any(realize.predicate, [lp.loop_var for lp in loops[position:]
                                    if lp.loop_var not in loop_map]):
        fail("decompose_reduction", f"the predicate of block {block_name!r} uses a loop the "
             "init block would not have", func, blocks=[block_name])
    iv_map = {iv.var: Var(iv.var.name, iv.var.dtype) for iv, _ in spatial}
    init_block = Block(
        iter_vars=tuple(IterVar(iv.dom, iv_map[iv.var], iv.iter_type) for iv, _ in spatial),
        reads=(), writes=substitute(block.writes, iv_map), name_hint=f"{block_name}_init",
        body=substitute(block.init, iv_map))
    init = BlockRealize(tuple(substitute(v, loop_map) for _, v in spatial),
                        substitute(realize.predicate, loop_map), init_block)
    for loop, var in reversed(copies):
        init = For(var, loop.min, loop.extent, ForKind.SERIAL, init)
    written = {id(r.buffer) for r in block.writes}
    reads = tuple(block.writes) + tuple(r for r in block.reads if id(r.buffer) not in written)
    update = realize.replace(block=block.replace(init=None, name_hint=f"{block_name}_update",
                                                 reads=reads))
    func = replace_stmts(func, {realize: update})
    new_target = find_block(func, f"{block_name}_update", "decompose_reduction")
    outer = next(p for p in new_target.parents if isinstance(p, For) and p.loop_var is loop_var)
    return replace_stmts(func, {outer: seq(init, outer)})
