"""Checks and inverses for the affine maps of :mod:`.iter_affine_map`.

Coverage: the splits taken of one iterator must be disjoint digits of it -- with
``v`` of extent 32, ``v // 8`` (lower factor 8, extent 4) and ``v % 8`` (lower factor
1, extent 8) tile it exactly; ``v // 4`` and ``v % 8`` overlap and are rejected.

Inverse: from the output values, each iterator's value is the sum of its digits
times their lower factors; a fused iterator then hands each of its parts
``(value // scale) % extent``.
"""
from __future__ import annotations

from ..tir import expr as E
from .analyzer import Analyzer
from .iter_map_expr import IterMapFailure, IterMark, IterSplitExpr, IterSumExpr


def _fail(message):
    raise IterMapFailure(message)


def _uses(sums, rewriter) -> dict:
    """Mark -> the splits taken of it, counting a used fused mark's parts once."""
    uses: dict = {}
    for s in sums:
        for split in s.args:
            uses.setdefault(split.source, []).append(split)
    for mark in reversed(rewriter.order):             # fused marks come after their parts
        if mark in uses and not isinstance(mark.source, E.Var):
            for part in mark.source.args:
                uses.setdefault(part.source, []).append(part)
    return uses


def check_coverage(sums, rewriter, bijective: bool, analyzer) -> None:
    """Raise when two outputs read the same digits of an iterator (or, for a bijective
    map, when some digits are never read)."""
    uses = _uses(sums, rewriter)
    for mark in rewriter.order:
        splits = uses.get(mark, [])
        if not splits:
            if bijective and isinstance(mark.source, E.Var) and not analyzer.can_prove_equal(
                    mark.extent, 1):
                _fail(f"iterator {mark.source.name} is not used by any index")
            continue
        _check_digits(mark, splits, bijective, analyzer)


def _check_digits(mark, splits, bijective: bool, analyzer) -> None:
    name = mark.source.name if isinstance(mark.source, E.Var) else "a fused iterator"
    expected = E.const(1, mark.extent.dtype)
    remaining = list(splits)
    while remaining:
        here = [s for s in remaining if analyzer.can_prove_equal(s.lower_factor, expected)]
        if not here and not bijective:
            here = [s for s in remaining if analyzer.can_prove_equal(
                E.binary(E.FloorMod, s.lower_factor, expected), 0)]
            here = sorted(here, key=lambda s: _const_or(s.lower_factor))[:1]
        if len(here) != 1:
            _fail(f"the indices use overlapping or missing parts of {name}")
        split = here[0]
        remaining.remove(split)
        expected = analyzer.simplify(split.lower_factor * split.extent)
    if bijective and not analyzer.can_prove_equal(expected, mark.extent):
        _fail(f"the indices cover {expected} of the {mark.extent} values of {name}")
    if not bijective and not analyzer.can_prove_equal(
            E.binary(E.FloorMod, mark.extent, expected), 0):
        _fail(f"the parts taken of {name} do not divide its extent {mark.extent}")


def _const_or(x, default=2 ** 62):
    return x.value if type(x) is E.IntImm else default


def normalize_iter_map_to_expr(expr):
    """An ordinary expression for an IterSumExpr / IterSplitExpr / IterMark."""
    return Analyzer().simplify(_to_expr(expr))


def _to_expr(node):
    if isinstance(node, IterSumExpr):
        result = node.base
        for arg in node.args:
            result = E.binary(E.Add, result, _to_expr(arg))
        return result
    if isinstance(node, IterSplitExpr):
        value = _to_expr(node.source)
        if not (type(node.lower_factor) is E.IntImm and node.lower_factor.value == 1):
            value = E.binary(E.FloorDiv, value, node.lower_factor)
        whole = E.binary(E.Mul, node.lower_factor, node.extent)
        if not _provably_equal(whole, node.source.extent):
            value = E.binary(E.FloorMod, value, node.extent)
        return E.binary(E.Mul, value, node.scale)
    if isinstance(node, IterMark):
        return node.source if isinstance(node.source, E.Var) else _to_expr(node.source)
    return node


def _provably_equal(a, b) -> bool:
    return Analyzer().can_prove_equal(a, b)


def inverse_affine_iter_map(indices, outputs, analyzer=None) -> dict:
    """Express the input iterators through the outputs of a detected map.

    ``indices`` are the IterSumExprs of :func:`detect_iter_map` (each one split);
    ``outputs`` the values the indices take. For a bijective map of ``i0, i1`` to
    ``v = i0 * 4 + i1`` this gives ``{i0: v // 4, i1: v % 4}``. The input iterators'
    range starts are not known here: the values are offsets from them.
    """
    analyzer = analyzer or Analyzer()
    digits: dict = {}
    for index, output in zip(indices, outputs):
        value = E.binary(E.Sub, E.convert(output), index.base)
        for split in index.args:
            part = value if _is_one(split.scale) else E.binary(E.FloorDiv, value, split.scale)
            digits.setdefault(split.source, []).append((split, part))
    result = {}
    for mark in _fused_before_parts(list(digits)):
        value = E.const(0, mark.extent.dtype)
        for split, part in digits.get(mark, []):
            value = E.binary(E.Add, value, E.binary(E.Mul, part, split.lower_factor))
        if isinstance(mark.source, E.Var):
            result[mark.source] = analyzer.simplify(value)
            continue
        for k, arg in enumerate(mark.source.args):          # highest scale first
            part = value if _is_one(arg.scale) else E.binary(E.FloorDiv, value, arg.scale)
            part = part if k == 0 else E.binary(E.FloorMod, part, arg.extent)
            digits.setdefault(arg.source, []).append((arg, part))
    return result


def _fused_before_parts(marks) -> list:
    """Marks reachable from ``marks``, each fused mark before the marks it is made of."""
    seen, post_order = set(), []

    def visit(mark):
        if id(mark) in seen:
            return
        seen.add(id(mark))
        if not isinstance(mark.source, E.Var):
            for arg in mark.source.args:
                visit(arg.source)
        post_order.append(mark)

    for mark in marks:
        visit(mark)
    return post_order[::-1]


def _is_one(x) -> bool:
    return type(x) is E.IntImm and x.value == 1
