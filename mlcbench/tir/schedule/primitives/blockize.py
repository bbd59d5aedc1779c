"""blockize: wrap the loops below (and including) a loop into an outer block.

``blockize(j_1)`` on ``C[vi, vj] += ...`` with ``vj = j_0 * 16 + j_1`` gives::

    for i, j_0, k in T.grid(16, 4, 32):
        with T.block("C_o"):
            vi_o = T.axis.spatial(16, i)
            vj_o = T.axis.spatial(4, j_0)
            vk_o = T.axis.reduce(32, k)
            T.reads(C[vi_o, vj_o * 16:vj_o * 16 + 16], A[vi_o, vk_o], B[vk_o, vj_o * 16:...])
            T.writes(C[vi_o, vj_o * 16:vj_o * 16 + 16])
            for j_1 in range(16):
                with T.block("C"):
                    vj_i = T.axis.spatial(16, j_1)
                    C[vi_o, vj_o * 16 + vj_i] = ...

Each binding must split as ``outer * n + inner`` where ``inner`` uses only the loops
inside the blockized loop and ranges over ``[0, n)``. Iterators with no inner part
move to the outer block; those with no outer part stay in the inner block. A block
with ``T.init()`` may be blockized only when every reduction iterator is entirely
inside or entirely outside the loop (decompose_reduction first otherwise).
"""
from __future__ import annotations

from ..errors import fail
from ..ir_utils import block_realizes_under, const_int, find_all, replace_stmts, uses_any
from ...buffer import BufferRegion
from ...expr import Range, Var, const
from ...function import PrimFunc
from ...functor import substitute
from ...stmt import Block, BlockRealize, For, IterType, IterVar
from ....arith import Analyzer


def _subtree(func, loop_var, primitive):
    hits = find_all(func, lambda n: isinstance(n, For) and n.loop_var is loop_var)
    if not hits:
        fail(primitive, f"the loop {loop_var.name!r} is no longer in the function", func)
    hit = hits[0]
    inner_loops, stmt = [], hit.node
    while isinstance(stmt, For):
        inner_loops.append(stmt)
        stmt = stmt.body
    if not isinstance(stmt, BlockRealize) or len(block_realizes_under(hit.node)) != 1:
        names = [r.block.name_hint for r in block_realizes_under(hit.node)]
        fail(primitive, f"loop {loop_var.name!r} must hold a perfect loop nest around one "
             f"block; it holds {names}", func, loops=[loop_var])
    return hit, inner_loops, stmt


class _Split:
    """How one block iterator splits into outer and inner parts."""

    def __init__(self, iv, outer, inner, extent):
        self.iv, self.outer, self.inner, self.extent = iv, outer, inner, extent
        self.outer_var = self.inner_var = None


def _split_binding(func, block, iv, value, loops, analyzer, loop_var):
    """``value`` = outer + inner with inner the part that moves with the inner loops."""
    outer_vars, inner_vars = loops
    zero = {v: const(0, v.dtype) for v in inner_vars}
    outer = analyzer.simplify(substitute(value, zero))
    inner = analyzer.simplify(value - outer)
    if uses_any(inner, outer_vars):
        outer = None
    bound = analyzer.const_int_bound(inner)
    extent = bound.max_value + 1
    dom = const_int(iv.dom.extent)
    ok = (outer is not None and bound.min_value == 0 and dom is not None and dom % extent == 0
          and (extent == 1 or analyzer.can_prove_equal(outer % extent,
                                                    const(0, outer.dtype))))
    if not ok:
        fail("blockize", f"the binding {iv.var.name} = {value} of block {block.name_hint!r} "
             f"does not split into (loops outside {loop_var.name!r}) * n + (loops inside "
             f"it); blockize needs such affine bindings", func, loops=[loop_var],
             blocks=[block.name_hint])
    return _Split(iv, outer, inner, extent)


def _splits(func, realize, outer_loops, inner_loops, loop_var):
    analyzer = Analyzer()
    for lp in outer_loops + inner_loops:
        analyzer.bind(lp.loop_var, Range(lp.min, lp.extent))
    loops = ([lp.loop_var for lp in outer_loops], [lp.loop_var for lp in inner_loops])
    block = realize.block
    splits = [_split_binding(func, block, iv, v, loops, analyzer, loop_var)
              for iv, v in zip(block.iter_vars, realize.iter_values)]
    if block.init is not None:
        for s in splits:
            has_outer = const_int(s.iv.dom.extent) != s.extent
            if s.iv.iter_type == IterType.COMM_REDUCE and has_outer:
                fail("blockize", f"the reduction iterator {s.iv.var.name!r} of block "
                     f"{block.name_hint!r} is not entirely inside loop {loop_var.name!r} "
                     "and the block has T.init(); call decompose_reduction first", func,
                     loops=[loop_var], blocks=[block.name_hint])
    return splits, analyzer


def _relax(regions, inner_ranges, analyzer):
    out = []
    for reg in regions:
        dims = []
        for r in reg.region:
            if not uses_any(r.min, list(inner_ranges)):
                dims.append(r)
                continue
            iset = analyzer.int_set(r.min, inner_ranges)
            lo = analyzer.simplify(iset.min)
            hi = analyzer.simplify(iset.max + r.extent)
            dims.append(Range(lo, analyzer.simplify(hi - lo)))
        out.append(BufferRegion(reg.buffer, tuple(dims)))
    return tuple(out)


def blockize(func: PrimFunc, loop_var: Var) -> tuple[PrimFunc, str]:
    """Blockize the subtree at ``loop_var``; returns the function and the outer name."""
    hit, inner_loops, realize = _subtree(func, loop_var, "blockize")
    outer_loops = [p for p in hit.parents if isinstance(p, For)]
    splits, analyzer = _splits(func, realize, outer_loops, inner_loops, loop_var)
    block = realize.block
    outer_ivs, outer_values, inner_ivs, inner_values, vmap = [], [], [], [], {}
    for s in splits:
        dom_extent = const_int(s.iv.dom.extent)
        name, dtype = s.iv.var.name, s.iv.var.dtype
        if s.extent != dom_extent:      # an outer part exists
            s.outer_var = Var(f"{name}_o", dtype)
            outer_ivs.append(IterVar(Range(const(0, dtype), const(dom_extent // s.extent,
                                                                   dtype)),
                                     s.outer_var, s.iv.iter_type))
            outer_values.append(analyzer.simplify(s.outer // s.extent if s.extent != 1
                                                  else s.outer))
        if s.extent != 1:               # an inner part exists
            s.inner_var = Var(name if s.outer_var is None else f"{name}_i", dtype)
            inner_ivs.append(IterVar(Range(const(0, dtype), const(s.extent, dtype)),
                                     s.inner_var, s.iv.iter_type))
            inner_values.append(s.inner)
        parts = [x for x in (s.outer_var * s.extent if s.outer_var is not None and
                             s.extent != 1 else s.outer_var, s.inner_var) if x is not None]
        vmap[s.iv.var] = parts[0] if len(parts) == 1 else parts[0] + parts[1]
    inner_block = Block(tuple(inner_ivs), substitute(block.reads, vmap),
                        substitute(block.writes, vmap), block.name_hint,
                        substitute(block.body, vmap), substitute(block.init, vmap),
                        block.alloc_buffers, substitute(block.match_buffers, vmap),
                        block.annotations)
    inner_ranges = {iv.var: iv.dom for iv in inner_ivs}
    new_realize = BlockRealize(tuple(inner_values), realize.predicate, inner_block)
    body = replace_stmts(func.with_body(hit.node), {realize: new_realize}).body
    outer_name = f"{block.name_hint}_o"
    outer_block = Block(tuple(outer_ivs), _relax(inner_block.reads, inner_ranges, analyzer),
                        _relax(inner_block.writes, inner_ranges, analyzer), outer_name, body)
    outer = BlockRealize(tuple(outer_values), const(True), outer_block)
    return replace_stmts(func, {hit.node: outer}), outer_name
