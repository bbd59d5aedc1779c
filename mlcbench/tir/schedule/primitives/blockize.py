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
move to the outer block; those with no outer part stay in the inner block.

A block's ``T.init()`` stays with the inner block when every reduction iterator is
entirely inside the loop. When a reduction iterator has an outer part (``k`` split and
only ``k_1`` inside), the init moves to the outer block, as a loop nest over the inner
spatial iterators (TVM does the same; course chapter 8 blockizes a matmul so)::

    with T.block("matmul_o"):
        vi_o, vj_o, vk_o = T.axis.remap("SSR", [i_0, j_0, k_0])
        with T.init():
            for i_1, j_1 in T.grid(16, 16):
                with T.block("matmul_init"):
                    vi_i_init, vj_i_init = T.axis.remap("SS", [i_1, j_1])
                    C[vi_o * 16 + vi_i_init, vj_o * 16 + vj_i_init] = T.float32(0)
        for i_1, j_1, k_1 in T.grid(16, 16, 16):
            with T.block("matmul"):   # no init: the update only
                ...
"""
from __future__ import annotations

from ..errors import fail
from ..ir_utils import block_realizes_under, const_int, find_all, replace_stmts, uses_any
from .loops import drop_unit_iters
from ...buffer import BufferRegion
from ...expr import Range, Var, const
from ...function import PrimFunc
from ...functor import substitute
from ...stmt import Block, BlockRealize, For, ForKind, IterType, IterVar
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
    return splits, analyzer


def _init_moves_out(block, splits) -> bool:
    """The init belongs to the outer block when a reduction iterator has an outer part:
    the inner block then runs once per outer reduction step and must only update."""
    return block.init is not None and any(
        s.iv.iter_type != IterType.DATA_PAR and const_int(s.iv.dom.extent) != s.extent
        for s in splits)


def _outer_init(func, block, splits, inner_loops, loop_var):
    """The init as a loop nest over the inner spatial iterators, for the outer block."""
    spatial = [s for s in splits if s.iv.iter_type == IterType.DATA_PAR
               and s.inner_var is not None]
    reduce_loops = [lp.loop_var for lp in inner_loops
                    if any(uses_any(s.inner, [lp.loop_var]) for s in splits
                           if s.iv.iter_type != IterType.DATA_PAR)]
    if any(uses_any(s.inner, reduce_loops) for s in spatial):
        fail("blockize", f"a loop inside {loop_var.name!r} drives both a spatial and a "
             f"reduction iterator of block {block.name_hint!r}, so its T.init() cannot move "
             "to the outer block; call decompose_reduction first", func,
             loops=[loop_var], blocks=[block.name_hint])
    copies = [(lp, Var(lp.loop_var.name, lp.loop_var.dtype)) for lp in inner_loops
              if any(uses_any(s.inner, [lp.loop_var]) for s in spatial)]
    loop_map = {lp.loop_var: var for lp, var in copies}
    init_vars = {id(s): Var(f"{s.inner_var.name}_init", s.inner_var.dtype) for s in spatial}
    vmap = {}
    for s in splits:
        if s.iv.iter_type == IterType.DATA_PAR:
            inner = init_vars.get(id(s))
            outer = s.outer_var * s.extent if s.outer_var is not None and inner is not None \
                else s.outer_var
            vmap[s.iv.var] = outer if inner is None else (inner if outer is None
                                                          else outer + inner)
    dtype_of = {id(s): s.inner_var.dtype for s in spatial}
    init_block = Block(tuple(IterVar(Range(const(0, dtype_of[id(s)]),
                                           const(s.extent, dtype_of[id(s)])),
                                     init_vars[id(s)], IterType.DATA_PAR) for s in spatial),
                       (), substitute(block.writes, vmap), f"{block.name_hint}_init",
                       substitute(block.init, vmap))
    stmt = BlockRealize(tuple(substitute(s.inner, loop_map) for s in spatial), const(True),
                        init_block)
    for lp, var in reversed(copies):
        stmt = For(var, lp.min, lp.extent, ForKind.SERIAL, stmt)
    return stmt


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


def _reads(block, init_moves_out):
    """The inner block's reads: without its init, it reads what it accumulates into."""
    if not init_moves_out:
        return block.reads
    written = [w for w in block.writes if all(r.buffer is not w.buffer for r in block.reads)]
    return tuple(written) + tuple(block.reads)


def blockize(func: PrimFunc, loop_var: Var,
             preserve_unit_iters: bool = True) -> tuple[PrimFunc, str]:
    """Blockize the subtree at ``loop_var``; returns the function and the outer name.
    ``preserve_unit_iters=False`` leaves loops of extent 1 out of the bindings of the
    outer block and the blocks in it (``vi_o = i_0 + i_1`` with ``i_1`` in ``range(1)``
    becomes ``vi_o = i_0``)."""
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
    init_moves_out = _init_moves_out(block, splits)
    inner_block = Block(tuple(inner_ivs), substitute(_reads(block, init_moves_out), vmap),
                        substitute(block.writes, vmap), block.name_hint,
                        substitute(block.body, vmap),
                        None if init_moves_out else substitute(block.init, vmap),
                        block.alloc_buffers, substitute(block.match_buffers, vmap),
                        block.annotations)
    inner_ranges = {iv.var: iv.dom for iv in inner_ivs}
    new_realize = BlockRealize(tuple(inner_values), realize.predicate, inner_block)
    body = replace_stmts(func.with_body(hit.node), {realize: new_realize}).body
    outer_name = f"{block.name_hint}_o"
    outer_init = _outer_init(func, block, splits, inner_loops, loop_var) \
        if init_moves_out else None
    outer_reads = _relax(inner_block.reads, inner_ranges, analyzer)
    if init_moves_out:      # a block with an init reads its output only to accumulate
        outer_reads = tuple(r for r in outer_reads
                            if all(r.buffer is not w.buffer for w in block.writes))
    outer_block = Block(tuple(outer_ivs), outer_reads,
                        _relax(inner_block.writes, inner_ranges, analyzer), outer_name, body,
                        outer_init)
    outer = BlockRealize(tuple(outer_values), const(True), outer_block)
    new_func = replace_stmts(func, {hit.node: outer})
    if not preserve_unit_iters:
        new_func = drop_unit_iters(new_func, outer)
    return new_func, outer_name
