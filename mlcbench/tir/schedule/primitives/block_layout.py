"""transform_block_layout: give a block new iterators by an index map of the old ones.

``transform_block_layout(C, lambda n, f, y, x, rc: (n, f, y * 28 + x, rc))`` on a
convolution whose block iterates ``(n, f, y, x, rc)`` over its own loops gives it one
pixel iterator ``v_yy_xx`` of extent ``28 * 28``, and a new loop for every iterator::

    for nn, ff, yy, xx, rc in T.grid(1, 64, 28, 28, 32):      for nn, ff, yy_xx, rc in T.grid(1, 64, 784, 32):
        v_nn, v_ff, v_yy, v_xx, v_rc = T.axis.remap(...)   ->      v_nn, v_ff, v_yy_xx, v_rc = T.axis.remap(...)
        ... A[v_nn, v_rc, v_yy, v_xx] ...                           ... A[v_nn, v_rc, v_yy_xx // 28, v_yy_xx % 28] ...

A buffer laid out with the same map (``transform_layout``) is then indexed by the new
iterator itself. As in TVM, the block must be the only block under its loops, bound to
them one to one. The map may reorder the iterators and fuse iterators of one kind
(``y * 28 + x``, outermost first): each result is one old iterator or such a fusion,
and every old iterator is used once.
"""
from __future__ import annotations

from ..errors import fail
from ..ir_utils import const_int, find_block, replace_stmts
from ...expr import Range, Var, const
from ...function import PrimFunc
from ...functor import substitute, uses_var
from ...stmt import Block, BlockRealize, For, ForKind, IterVar
from ....arith import Analyzer
from ....arith.stmt_simplify import simplify_stmt

PRIMITIVE = "transform_block_layout"


def transform_block_layout(func: PrimFunc, block_name: str, imap) -> PrimFunc:
    hit = find_block(func, block_name, PRIMITIVE)
    realize = hit.node
    block = realize.block
    loops = _own_loops(func, hit)
    if imap.ndim != len(block.iter_vars):
        fail(PRIMITIVE, f"the index map {imap.as_python()} takes {imap.ndim} indices; block "
             f"{block_name!r} has {len(block.iter_vars)} iterators "
             f"{[iv.var.name for iv in block.iter_vars]}", func, blocks=[block_name])
    by_index = dict(zip(imap.initial_indices, block.iter_vars))
    groups = [_fusion(func, block_name, imap, expr, by_index) for expr in imap.final_indices]
    used = [var for group in groups for var, _ in group]
    twice = sorted({by_index[v].var.name for v in used if used.count(v) > 1})
    missing = [by_index[v].var.name for v in imap.initial_indices if v not in used]
    if twice or missing:
        fail(PRIMITIVE, f"the index map {imap.as_python()} must use every iterator once; "
             + (f"it uses {twice} more than once" if twice else f"it drops {missing}"), func,
             blocks=[block_name])
    loop_of = {iv.var: value for iv, value in zip(block.iter_vars, realize.iter_values)}
    new_ivs, new_loop_vars, inverse = [], [], {}
    for group in groups:
        ivs = [by_index[var] for var, _ in group]
        kinds = {iv.iter_type for iv in ivs}
        if len(kinds) > 1:
            fail(PRIMITIVE, f"iterators {[iv.var.name for iv in ivs]} fused by "
                 f"{imap.as_python()} mix spatial and reduction kinds", func,
                 blocks=[block_name])
        extent = 1
        for iv in ivs:
            extent *= const_int(iv.dom.extent)
        dtype = ivs[0].var.dtype
        name = ivs[0].var.name + "".join("_" + iv.var.name.removeprefix("v_") for iv in ivs[1:])
        new_var = Var(name, dtype)
        new_ivs.append(IterVar(Range(const(0, dtype), const(extent, dtype)), new_var,
                               ivs[0].iter_type))
        new_loop_vars.append(Var("_".join(loop_of[iv.var].name for iv in ivs), dtype))
        for n, ((_, stride), iv) in enumerate(zip(group, ivs)):
            value = new_var if stride == 1 else new_var // const(stride, dtype)
            if n > 0:
                value = value % iv.dom.extent
            inverse[iv.var] = value
    new_block = Block(tuple(new_ivs),
                      tuple(substitute(r, inverse) for r in block.reads),
                      tuple(substitute(r, inverse) for r in block.writes),
                      block.name_hint, substitute(block.body, inverse),
                      None if block.init is None else substitute(block.init, inverse),
                      block.alloc_buffers, block.match_buffers, block.annotations)
    body = BlockRealize(tuple(new_loop_vars), realize.predicate, new_block)
    for var, iv in reversed(list(zip(new_loop_vars, new_ivs))):
        body = For(var, const(0, var.dtype), iv.dom.extent, ForKind.SERIAL, body)
    body = simplify_stmt(body, Analyzer())
    return replace_stmts(func, {(loops[0] if loops else realize): body})


def _own_loops(func, hit) -> list:
    """The loops directly around the block, one per iterator, each binding its iterator
    plainly and holding nothing but the next loop or the block."""
    realize = hit.node
    block = realize.block
    name = block.name_hint
    if const_int(realize.predicate) != 1:
        fail(PRIMITIVE, f"block {name!r} has the predicate {realize.predicate}; it must run "
             "on its whole domain", func, blocks=[name])
    loops = hit.loops()[-len(block.iter_vars):] if block.iter_vars else []
    bound = list(realize.iter_values)
    for iv, value in zip(block.iter_vars, bound):
        loop = next((lp for lp in loops if lp.loop_var is value), None)
        if loop is None or sum(v is value for v in bound) > 1 \
                or const_int(loop.extent) != const_int(iv.dom.extent) \
                or const_int(loop.min) != 0 or const_int(iv.dom.min) != 0 \
                or const_int(iv.dom.extent) is None:
            fail(PRIMITIVE, f"block {name!r} must be bound one to one to loops over its "
                 f"iterators' constant domains; {iv.var.name!r} is bound to {value}", func,
                 blocks=[name])
    chain = loops + [realize]
    for outer, inner in zip(chain, chain[1:]):
        if outer.body is not inner or outer.kind != ForKind.SERIAL:
            fail(PRIMITIVE, f"loop {outer.loop_var.name!r} must be a serial loop holding only "
                 f"block {name!r} (or the next of its loops)", func,
                 loops=[outer.loop_var], blocks=[name])
    return loops


def _fusion(func, block_name: str, imap, expr, by_index) -> list:
    """``[(var, stride), ...]`` outermost first for a result ``expr`` that is one iterator
    or the fusion ``a * (E_b * E_c) + b * E_c + c`` of neighbouring iterators."""
    analyzer = Analyzer()
    terms = [v for v in imap.initial_indices if uses_var(expr, lambda u, v=v: u is v)]
    zero = {v: const(0, v.dtype) for v in imap.initial_indices}
    base = analyzer.simplify(substitute(expr, zero))
    strides = []
    for var in terms:
        stride = const_int(analyzer.simplify(substitute(expr, {**zero, var: const(1, var.dtype)})
                                             - base))
        strides.append(stride)
    linear = const(0, expr.dtype)
    for var, stride in zip(terms, strides):
        linear = linear + var * (stride if stride is not None else 0)
    ordered = sorted(zip(terms, strides), key=lambda t: -(t[1] or 0))
    expected = 1
    fused = True
    for var, stride in reversed(ordered):
        fused = fused and stride == expected
        expected *= const_int(by_index[var].dom.extent) or 0
    if not terms or const_int(base) != 0 or not fused \
            or const_int(analyzer.simplify(expr - linear)) != 0:
        fail(PRIMITIVE, f"expected each result of the index map to be one iterator or a "
             f"fusion of iterators such as y * W + x (W the extent of x); found {expr} in "
             f"{imap.as_python()}", func, blocks=[block_name])
    return ordered

