"""RewriteReductionBlock: give every reduction block a separate init block.

``decompose_reduction`` at the outermost loop that drives a reduction iter var puts
the ``T.init()`` statement in block ``<name>_init`` just before that loop, so the
update loop nest no longer tests "is this the first step?" on every iteration::

    for i_0_j_0_fused in T.parallel(128):
        for i_3_init, j_3_init in T.grid(8, 32):       # C_init
            ...
        for k_0, i_3, j_3 in T.grid(1024, 8, 32):      # C_update
            ...

The copies of the loops the init needs start serial; those whose originals are
vectorized or unrolled get the same kind, so the init of a register tile is written the
way its update is. A block that cannot be decomposed keeps its init (lowering handles it).
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.function import PrimFunc
from ...tir.functor import post_order_visit
from ...tir.stmt import BlockRealize, ForKind
from ..block_analysis import OTHER, REDUCE, locate_block, loop_iter_types
from .postproc import Postproc


class RewriteReductionBlock(Postproc):
    """Decompose the init of every reduction block.

    >>> RewriteReductionBlock().apply(sch)        # doctest: +SKIP
    True
    """

    def apply(self, sch) -> bool:
        refused = set()
        while True:
            pending = [b for b in _blocks_with_init(sch) if b not in refused]
            if not pending:
                return True
            func_name, name = pending[0]
            try:
                _decompose(sch, sch.get_block(name, func_name=func_name))
            except ScheduleError:
                refused.add((func_name, name))


def _blocks_with_init(sch) -> list:
    out = []
    for gv, func in sch.mod.functions.items():
        if not isinstance(func, PrimFunc):
            continue
        found = []
        post_order_visit(func.body, lambda n: found.append(n.block.name_hint)
                         if isinstance(n, BlockRealize) and n.block.init is not None else None)
        out.extend((gv.name_hint, name) for name in found)
    return out


def decompose_point(sch, block) -> int | None:
    """Index of the outermost loop above ``block`` that drives a reduction iter var."""
    _, hit = locate_block(sch, block)
    realize = hit.node
    reduce_vars = [value for iv, value in zip(realize.block.iter_vars, realize.iter_values)
                   if iv.iter_type.value != "spatial"]
    kinds = loop_iter_types(sch, block)
    for n, (loop, kind) in enumerate(zip(hit.loops(), kinds)):
        if kind == REDUCE or (kind == OTHER and any(
                _uses(v, loop.loop_var) for v in reduce_vars)):
            return n
    return None


def _uses(expr, var) -> bool:
    from ...tir.functor import uses_var
    return uses_var(expr, lambda v: v is var)


def _decompose(sch, block) -> None:
    position = decompose_point(sch, block)
    if position is None:
        raise ScheduleError("no reduction loop above the block: its init stays in place")
    loops = sch.get_loops(block)
    originals = [sch.get(lp) for lp in loops[position:]]
    init = sch.decompose_reduction(block, loops[position])
    init_loops = sch.get_loops(init)[position:]
    kinds = {lp.loop_var.name + "_init": lp.kind for lp in originals}
    for loop in init_loops:
        kind = kinds.get(sch.get(loop).loop_var.name)
        if kind == ForKind.VECTORIZED:
            sch.vectorize(loop)
        elif kind == ForKind.UNROLLED:
            sch.unroll(loop)
