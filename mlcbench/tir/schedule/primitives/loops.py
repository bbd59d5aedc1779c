"""Loop transformations: split, fuse, reorder, add_unit_loop.

Before / after ``split(j, [None, 4])`` on ``for j in range(128)``::

    for j_0, j_1 in T.grid(32, 4):
        with T.block("B"):
            vj = T.axis.spatial(128, j_0 * 4 + j_1)
"""
from __future__ import annotations

import math
import numbers

from ..errors import fail
from ..ir_utils import (block_realizes_under, const_int, find_block, find_loop, replace_stmts,
                        uses_any, walk)
from ...expr import PrimExpr, Var, cast, const
from ...function import PrimFunc
from ...functor import substitute
from ...stmt import BlockRealize, For, ForKind, IterType
from ....arith import Analyzer


def _check_starts_at_zero(func, primitive, loop: For):
    if const_int(loop.min) != 0:
        fail(primitive, f"loop {loop.loop_var.name!r} starts at {loop.min}, expected 0",
             func, loops=[loop.loop_var])


def _divisor_hint(extent: int, inner: int) -> str:
    pairs = [(extent // d, d) for d in range(2, extent) if extent % d == 0]
    if extent % inner:
        hint = (f"{extent} is not divisible by {inner}; pass factors=[None, {inner}] to get a "
                "predicate")
    else:
        hint = f"pass factors=[None, {inner}]"
    if pairs:
        outer, inn = min(pairs, key=lambda p: abs(p[1] - inner))
        hint += f", or use {outer} x {inn}"
    return hint + "."


def _bad_factor(func, loop: For, rule: str):
    fail("split", f"argument 'factors': {rule}", func, loops=[loop.loop_var])


def _plain_factors(func, loop: For, factors) -> list:
    """Factors as Python ints (or None): positive, integral, and at most one None."""
    if not factors:
        _bad_factor(func, loop, "expected at least one factor, found []")
    plain = []
    for pos, factor in enumerate(factors):
        if factor is not None and (isinstance(factor, bool)
                                   or not isinstance(factor, numbers.Integral)):
            _bad_factor(func, loop, f"factor {factor!r} at position {pos} is a "
                        f"{type(factor).__name__}; factors must be positive integers or None")
        if factor is not None and factor <= 0:
            _bad_factor(func, loop, f"factor {factor} at position {pos} is not positive; "
                        "factors must be positive integers or None")
        plain.append(None if factor is None else int(factor))
    if plain.count(None) > 1:
        _bad_factor(func, loop, f"at most one factor may be None (inferred), found "
                    f"{plain.count(None)} in {plain}")
    return plain


def _check_fits_index_type(func, loop: For, sizes: list, extent: int) -> None:
    """The split loops compute ``i_0 * s_0 + i_1 * s_1 + ...`` in the loop's index type;
    its largest value, the product minus one, must not overflow. Factors above the
    extent are otherwise kept (the predicate ``< extent`` makes them exact)."""
    dtype = loop.loop_var.dtype
    limit = (1 << (dtype.bits - 1)) - 1
    name = loop.loop_var.name
    for pos, size in enumerate(sizes):
        if size > limit:
            _bad_factor(func, loop, f"factor {size} at position {pos} exceeds the largest "
                        f"{dtype} ({limit}), the index type of loop {name!r} (extent "
                        f"{extent}); no factor above the extent {extent} is needed")
    total = math.prod(sizes)
    if total - 1 > limit:
        _bad_factor(func, loop, f"the factors {sizes} multiply to {total}, beyond the "
                    f"{dtype} range of loop {name!r} (extent {extent}): the split index "
                    f"would overflow. Choose factors whose product is between {extent} and "
                    f"{limit + 1}")


def _infer_factors(func, loop: For, factors) -> list:
    factors = _plain_factors(func, loop, factors)
    extent = const_int(loop.extent)
    name = loop.loop_var.name
    if extent is None:
        return _symbolic_sizes(func, loop, factors)
    known = math.prod(f for f in factors if f is not None)
    if None in factors:
        inferred = -(-extent // known)
        sizes = [inferred if f is None else f for f in factors]
    elif known < extent:
        inner = factors[-1]
        _bad_factor(func, loop, f"the factors {factors} multiply to {known}, less than the "
                    f"extent {extent} of loop {name!r}. {_divisor_hint(extent, inner)}")
    else:
        sizes = factors
    _check_fits_index_type(func, loop, sizes, extent)
    return sizes


def _symbolic_sizes(func, loop: For, factors) -> list:
    """Sizes for a loop of symbolic extent ``n``: the one ``None`` factor is the ceiling
    ``(n + k - 1) // k`` of ``n`` over the others' product ``k``, as in TVM; the blocks
    below then always get the predicate ``< n``."""
    name = loop.loop_var.name
    if None not in factors:
        _bad_factor(func, loop, f"loop {name!r} has the symbolic extent {loop.extent}, which "
                    f"the factors {factors} cannot be checked to cover; give one factor as "
                    "None to have it inferred, e.g. [None, 4]")
    known = math.prod(f for f in factors if f is not None)
    dtype = loop.loop_var.dtype
    inferred = loop.extent if known == 1 else (loop.extent + const(known - 1, dtype)) // \
        const(known, dtype)
    return [inferred if f is None else f for f in factors]


def _size_expr(size, dtype):
    return size if isinstance(size, PrimExpr) else const(size, dtype)


def _add_predicate(stmt, condition):
    """AND ``condition`` into the predicate of every block realized below ``stmt``."""
    mapping = {}
    for realize in block_realizes_under(stmt):
        old = realize.predicate
        pred = condition if const_int(old) == 1 else old & condition
        mapping[realize] = realize.replace(predicate=pred)
    return mapping


def drop_unit_iters(func: PrimFunc, root) -> PrimFunc:
    """``preserve_unit_iters=False``, as in TVM: the bindings of the blocks at and below
    ``root`` stop naming loops of extent 1, which take only their start value
    (``i_0 * 64 + i_1`` with ``i_0`` in ``range(1)`` becomes ``i_1``)."""
    analyzer, mapping = Analyzer(), {}

    def visit(node, parents):
        if not isinstance(node, BlockRealize) or not (node is root or any(
                p is root for p in parents)):
            return
        unit = {p.loop_var: p.min for p in parents if isinstance(p, For)
                and const_int(p.extent) == 1}
        values = tuple(analyzer.simplify(substitute(v, unit)) if uses_any(v, list(unit))
                       else v for v in node.iter_values)
        if any(a is not b for a, b in zip(values, node.iter_values)):
            mapping[node] = node.replace(iter_values=values)
    walk(func.body, visit)
    return replace_stmts(func, mapping) if mapping else func


def split(func: PrimFunc, loop_var: Var, factors: list,
          preserve_unit_iters: bool = True) -> tuple[PrimFunc, list]:
    """Split a loop into ``len(factors)`` nested loops; returns the new loop vars.

    One factor may be None (inferred as the ceiling). When the product exceeds the
    extent, blocks below get a ``T.where`` predicate, so a factor larger than the extent
    still computes the exact result (its extra iterations do nothing; unlike TVM's TE
    split, it is not clamped, so a recorded trace replays to the same loops). Factors
    whose product overflows the loop's index type are refused: the split index
    ``i_0 * s_0 + ...`` would wrap around. ``preserve_unit_iters=False`` leaves loops of
    extent 1 out of the block bindings (:func:`drop_unit_iters`).
    """
    loop = find_loop(func, loop_var, "split").node
    _check_starts_at_zero(func, "split", loop)
    sizes = _infer_factors(func, loop, list(factors))
    extent = const_int(loop.extent)
    new_vars = [Var(f"{loop_var.name}_{n}", loop_var.dtype) for n in range(len(sizes))]
    # as a left-associated sum of var * stride, the way the parser reads it
    fused = None
    for n, var in enumerate(new_vars):
        stride = math.prod(sizes[n + 1:])
        unit = isinstance(stride, int) and stride == 1
        term = var if unit else var * _size_expr(stride, var.dtype)
        fused = term if fused is None else fused + term
    body = substitute(loop.body, {loop_var: fused})
    if extent is None or math.prod(sizes) != extent:
        guard = fused < (loop.extent if extent is None else extent)
        body = replace_stmts(func.with_body(body), _add_predicate(body, guard)).body
    for var, size in reversed(list(zip(new_vars, sizes))):
        body = For(var, const(0, var.dtype), _size_expr(size, var.dtype), ForKind.SERIAL, body)
    new_func = replace_stmts(func, {loop: body})
    if not preserve_unit_iters:
        new_func = drop_unit_iters(new_func, find_loop(new_func, new_vars[0], "split").node)
    return new_func, new_vars


def _loop_chain(func, primitive, loop_vars) -> list:
    """The For nodes of ``loop_vars`` if each is the single child of the previous."""
    loops = [find_loop(func, v, primitive).node for v in loop_vars]
    for outer, inner in zip(loops, loops[1:]):
        if outer.body is not inner:
            fail(primitive, f"loop {inner.loop_var.name!r} must be the only statement directly "
                 f"inside loop {outer.loop_var.name!r}", func,
                 loops=[outer.loop_var, inner.loop_var])
    return loops


def fuse(func: PrimFunc, loop_vars: list,
         preserve_unit_iters: bool = True) -> tuple[PrimFunc, Var]:
    """Fuse perfectly nested loops (outermost first) into one loop ``a_b_fused``.

    ``preserve_unit_iters=False`` leaves loops of extent 1 out of the block bindings
    (:func:`drop_unit_iters`): a fused unit loop contributes its start value 0, not
    ``a_b_fused // n % 1``."""
    if len(loop_vars) < 2:
        fail("fuse", "needs at least two loops", func, loops=list(loop_vars))
    loops = _loop_chain(func, "fuse", loop_vars)
    for loop in loops:
        _check_starts_at_zero(func, "fuse", loop)
    # The widest index type of the loops (a broadcast's int64 and int32 axes): the fused
    # counter and extent need it, and each loop's value is cast back to its own type.
    dtype = max((lp.loop_var.dtype for lp in loops), key=lambda dt: dt.bits)
    fused = Var("_".join(v.name for v in loop_vars) + "_fused", dtype)
    vmap, stride, extent = {}, None, None
    for loop in reversed(loops):
        loop_extent = cast(dtype, loop.extent)
        value = fused if stride is None else fused // stride
        if loop is not loops[0]:
            value = (fused % loop_extent) if stride is None else (
                fused % (stride * loop_extent)) // stride
        vmap[loop.loop_var] = cast(loop.loop_var.dtype, value)
        stride = loop_extent if stride is None else stride * loop_extent
    extent = stride
    if not preserve_unit_iters:
        vmap.update({lp.loop_var: lp.min for lp in loops if const_int(lp.extent) == 1})
    body = substitute(loops[-1].body, vmap)
    new_loop = For(fused, const(0, dtype), extent, ForKind.SERIAL, body)
    new_func = replace_stmts(func, {loops[0]: new_loop})
    if not preserve_unit_iters:
        new_func = drop_unit_iters(new_func, new_loop)
    return new_func, fused


def _nesting_chain(func, loop_vars) -> list:
    """All loops from the outermost to the innermost of ``loop_vars`` (inclusive)."""
    located = [find_loop(func, v, "reorder") for v in loop_vars]
    located.sort(key=lambda hit: len(hit.parents))
    top, bottom = located[0], located[-1]
    for hit in located[1:]:
        if not any(p is located[0].node for p in hit.parents):
            fail("reorder", f"loops {top.node.loop_var.name!r} and {hit.node.loop_var.name!r} "
                 "are not in one nesting chain", func,
                 loops=[top.node.loop_var, hit.node.loop_var])
    start = bottom.parents.index(top.node)
    chain = [p for p in bottom.parents[start:] if isinstance(p, For)] + [bottom.node]
    path = list(bottom.parents[start:]) + [bottom.node]
    for outer, inner in zip(path, path[1:]):
        if not isinstance(outer, For) or outer.body is not inner:
            culprit = outer.loop_var if isinstance(outer, For) else None
            fail("reorder", "only single loops may lie between the loops to reorder; found "
                 f"{type(inner).__name__ if isinstance(outer, For) else type(outer).__name__}"
                 " in the chain", func, loops=[culprit] if culprit is not None else [])
    return chain


def _check_reorder_bindings(func, chain, moved):
    """Blocks below must bind the moved loops only to spatial/reduction iter vars, and
    (for blocks with an init) not to both: reordering a loop that mixes output and
    reduction positions would let an update run before the init of its element."""
    for realize in block_realizes_under(chain[-1].body):
        if realize.block.init is not None:
            _check_not_mixed(func, realize, [lp.loop_var for lp in chain])
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if iv.iter_type not in (IterType.DATA_PAR, IterType.COMM_REDUCE) and uses_any(
                    value, moved):
                fail("reorder", f"block {realize.block.name_hint!r} binds iter var "
                     f"{iv.var.name!r} of type {iv.iter_type.value} to a reordered loop",
                     func, blocks=[realize.block.name_hint])


def _check_not_mixed(func, realize, loop_vars):
    for var in loop_vars:
        kinds = {iv.iter_type for iv, value in zip(realize.block.iter_vars,
                                                    realize.iter_values)
                 if uses_any(value, [var])}
        if IterType.DATA_PAR in kinds and IterType.COMM_REDUCE in kinds:
            fail("reorder", f"loop {var.name!r} feeds both spatial and reduction iter vars of "
                 f"block {realize.block.name_hint!r}; reordering it could update an element "
                 "before its init", func, loops=[var], blocks=[realize.block.name_hint])


def reorder(func: PrimFunc, loop_vars: list) -> PrimFunc:
    """Reorder loops of one perfect nesting chain into the given order."""
    if len({id(v) for v in loop_vars}) != len(loop_vars):
        fail("reorder", "a loop appears twice in the arguments", func, loops=list(loop_vars))
    chain = _nesting_chain(func, loop_vars)
    wanted = {id(v) for v in loop_vars}
    _check_reorder_bindings(func, chain, list(loop_vars))
    order = iter([find_loop(func, v, "reorder").node for v in loop_vars])
    new_chain = [next(order) if id(loop.loop_var) in wanted else loop for loop in chain]
    body = chain[-1].body
    for loop in reversed(new_chain):
        body = loop.replace(body=body)
    return replace_stmts(func, {chain[0]: body})


def add_unit_loop(func: PrimFunc, block_name: str | None = None,
                  loop_var: Var | None = None) -> tuple[PrimFunc, Var]:
    """Put ``for u in range(1)`` on top of a block or a loop."""
    target = (find_block(func, block_name, "add_unit_loop").node if block_name is not None
              else find_loop(func, loop_var, "add_unit_loop").node)
    unit = Var("u", "int32")
    new = For(unit, const(0), const(1), ForKind.SERIAL, target)
    return replace_stmts(func, {target: new}), unit
