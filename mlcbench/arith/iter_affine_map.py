"""Affine iteration maps: recognize index expressions made by splitting and fusing loops.

After ``split`` and ``fuse`` a block binding such as ``vi = i0 * 4 + i1`` or
``vi = (f // 8), vj = f % 8`` is a *quasi-affine* map of the loop variables. The
schedule needs to know whether the bindings are such a map, whether the loop
iterations map one-to-one onto block iterations, and how to undo the map.

Vocabulary (as in TVM):

* ``IterMark(source, extent)`` -- an iterator taking values ``0 .. extent-1``; its
  source is an input loop variable (minus its range's start) or a fused
  ``IterSumExpr`` of other iterators.
* ``IterSplitExpr(source, lower_factor, extent, scale)`` -- the expression
  ``(source // lower_factor) % extent * scale``.
* ``IterSumExpr(args, base)`` -- ``sum(args) + base``.

``detect_iter_map([i0 * 4 + i1], {i0: Range(0, 8), i1: Range(0, 4)})`` gives one sum
whose single split covers a fused mark of extent 32.

Limits: divisors and (for fusion) scales must be constants; split extents must divide
exactly (no padding); predicates are accepted but not used to tighten extents.
"""
from __future__ import annotations

from ..ir.errors import IRError
from ..tir import expr as E
from ..tir.functor import uses_var
from .analyzer import Analyzer
from .iter_map_check import check_coverage, inverse_affine_iter_map, normalize_iter_map_to_expr
from .iter_map_expr import (IterMapFailure, IterMapLevel, IterMapResult, IterMark, IterSplitExpr,
                            IterSumExpr)
from .linear_form import expr_key

__all__ = ["IterMapLevel", "IterMapResult", "IterMark", "IterSplitExpr", "IterSumExpr",
           "detect_iter_map", "inverse_affine_iter_map", "inverse_affine_map",
           "is_affine_binding", "normalize_iter_map_to_expr"]


def _const(x):
    return x.value if type(x) is E.IntImm else None


class _Rewriter:
    """Rewrites index expressions into IterSumExprs over marks of the input iterators."""

    def __init__(self, input_iters: dict, analyzer):
        self.analyzer = analyzer
        self.mins = {var: rng.min for var, rng in input_iters.items()}
        self.marks = {var: IterMark(var, rng.extent) for var, rng in input_iters.items()}
        self.order = list(self.marks.values())     # creation order: sources before fusions
        self.fused: dict = {}

    def is_input(self, var) -> bool:
        return var in self.marks

    def rewrite(self, expr) -> IterSumExpr:
        if not uses_var(expr, self.is_input):
            return IterSumExpr((), expr)
        handler = getattr(self, "_" + type(expr).__name__, None)
        if handler is None:
            raise IterMapFailure(f"unsupported operation {type(expr).__name__} in `{expr}`")
        return handler(expr)

    def _Var(self, var):
        mark, lo = self.marks[var], self.mins[var]
        if self.analyzer.can_prove_equal(mark.extent, 1):
            return IterSumExpr((), lo)
        one = E.const(1, var.dtype)
        return IterSumExpr((IterSplitExpr(mark, one, mark.extent, one),), lo)

    _SizeVar = _Var

    def _Add(self, expr, sign: int = 1):
        a, b = self.rewrite(expr.a), self.rewrite(expr.b)
        args = a.args + tuple(_scaled(arg, sign) for arg in b.args)
        base = E.binary(E.Add if sign == 1 else E.Sub, a.base, b.base)
        return IterSumExpr(args, self.analyzer.simplify(base))

    def _Sub(self, expr):
        return self._Add(expr, -1)

    def _Mul(self, expr):
        a, b = self.rewrite(expr.a), self.rewrite(expr.b)
        if a.args and b.args:
            raise IterMapFailure(f"`{expr}` multiplies two iterators (not affine)")
        iters, factor = (a, b.base) if a.args else (b, a.base)
        factor = self.analyzer.simplify(factor)
        return IterSumExpr(tuple(_scaled(arg, factor) for arg in iters.args),
                           self.analyzer.simplify(E.binary(E.Mul, iters.base, factor)))

    def _FloorDiv(self, expr):
        split, base, c = self._divisible_operands(expr)
        return IterSumExpr(self._split_div(split, c), self.analyzer.simplify(base // c))

    def _FloorMod(self, expr):
        split, _, c = self._divisible_operands(expr)
        return IterSumExpr(self._split_mod(split, c), E.const(0, expr.dtype))

    def _divisible_operands(self, expr):
        """``(split + base) // c`` with a constant ``c > 0`` dividing ``base``."""
        numerator, divisor = self.rewrite(expr.a), self.rewrite(expr.b)
        c = _const(self.analyzer.simplify(divisor.base)) if not divisor.args else None
        if c is None or c <= 0:
            raise IterMapFailure(f"`{expr}`: the divisor must be a positive constant")
        if not self.analyzer.can_prove_equal(E.binary(E.FloorMod, numerator.base, c), 0):
            raise IterMapFailure(f"`{expr}`: the offset {numerator.base} is not a multiple of {c}")
        return self.fuse(numerator), numerator.base, c

    def _split_div(self, split: IterSplitExpr, c: int) -> tuple:
        scale = _const(split.scale)
        if scale is not None and scale % c == 0:
            return (_with(split, scale=E.const(scale // c, split.scale.dtype)),)
        if scale is None or c % scale != 0:
            raise IterMapFailure(f"cannot divide iterator of scale {split.scale} by {c}")
        k = c // scale
        if self.analyzer.can_prove_equal(E.binary(E.FloorMod, split.extent, k), 0):
            return (_with(split, lower_factor=self.analyzer.simplify(split.lower_factor * k),
                          extent=self.analyzer.simplify(split.extent // k),
                          scale=E.const(1, split.scale.dtype)),)
        if self.analyzer.can_prove(split.extent <= k):
            return ()
        raise IterMapFailure(f"extent {split.extent} is not divisible by {k}")

    def _split_mod(self, split: IterSplitExpr, c: int) -> tuple:
        scale = _const(split.scale)
        if scale is not None and scale % c == 0:
            return ()
        if scale is None or c % scale != 0:
            raise IterMapFailure(f"cannot take iterator of scale {split.scale} modulo {c}")
        k = c // scale
        if self.analyzer.can_prove_equal(E.binary(E.FloorMod, split.extent, k), 0):
            return (_with(split, extent=E.const(k, split.extent.dtype)),)
        if self.analyzer.can_prove(split.extent <= k):
            return (split,)
        raise IterMapFailure(f"extent {split.extent} is not divisible by {k}")

    def fuse(self, s: IterSumExpr) -> IterSplitExpr:
        """One split covering ``sum(s.args)`` when the args chain like mixed-radix digits."""
        if not s.args:
            raise IterMapFailure("expected an iterator, found a constant")
        if len(s.args) == 1:
            return s.args[0]
        chain = self._chain(list(s.args))
        lowest = chain[0].scale
        low = _const(lowest)
        if low is None or low <= 0:
            raise IterMapFailure(f"cannot fuse iterators with scale {lowest}")
        normalized = tuple(_with(a, scale=self.analyzer.simplify(a.scale // low)) for a in chain)
        extent = E.const(1, lowest.dtype)
        for arg in normalized:
            extent = self.analyzer.simplify(extent * arg.extent)
        key = tuple((id(a.source), _key(a.lower_factor), _key(a.extent), _key(a.scale))
                    for a in normalized)
        mark = self.fused.get(key)
        if mark is None:
            mark = IterMark(IterSumExpr(tuple(reversed(normalized)), E.const(0, lowest.dtype)),
                            extent)
            self.fused[key] = mark
            self.order.append(mark)
        one = E.const(1, lowest.dtype)
        return IterSplitExpr(mark, one, mark.extent, lowest)

    def _chain(self, args: list) -> list:
        """Order args so that each scale is the previous scale times its extent."""
        def follows(lower, upper):
            return self.analyzer.can_prove_equal(upper.scale, lower.scale * lower.extent)
        starts = [a for a in args if not any(follows(b, a) for b in args if b is not a)]
        if len(starts) != 1:
            raise IterMapFailure("iterators do not fuse: their scales do not chain")
        chain = starts
        while len(chain) < len(args):
            nxt = [a for a in args if a not in chain and follows(chain[-1], a)]
            if len(nxt) != 1:
                raise IterMapFailure("iterators do not fuse: their scales do not chain")
            chain.append(nxt[0])
        return chain


def _key(expr):
    return expr_key(expr, {})


def _with(split: IterSplitExpr, **changes) -> IterSplitExpr:
    fields = dict(source=split.source, lower_factor=split.lower_factor, extent=split.extent,
                  scale=split.scale)
    fields.update(changes)
    return IterSplitExpr(**fields)


def _scaled(split: IterSplitExpr, factor) -> IterSplitExpr:
    return _with(split, scale=E.binary(E.Mul, split.scale, factor))


def detect_iter_map(indices, input_iters: dict, predicate=True,
                    check_level: str = IterMapLevel.SURJECTIVE, analyzer=None,
                    simplify_trivial_iterators: bool = True) -> IterMapResult:
    """Recognize ``indices`` as an affine map of the iterators ``input_iters``.

    ``check_level="bijective"`` also requires every input iterator to be used
    completely. Returns an :class:`IterMapResult` (falsy with ``errors`` on failure).

    >>> detect_iter_map([f // 8, f % 8], {f: Range(0, 32)}).extents   # [4, 8]
    """
    analyzer = analyzer or Analyzer()
    rewriter = _Rewriter(dict(input_iters), analyzer)
    try:
        sums = []
        for index in indices:
            s = rewriter.rewrite(analyzer.simplify(E.convert(index)))
            if len(s.args) > 1:
                s = IterSumExpr((rewriter.fuse(s),), s.base)
            sums.append(s)
        if check_level != IterMapLevel.NO_CHECK:
            check_coverage(sums, rewriter, check_level == IterMapLevel.BIJECTIVE, analyzer)
    except IterMapFailure as err:
        return IterMapResult([], [str(err)])
    return IterMapResult(sums, [])


def is_affine_binding(bindings, loop_doms: dict, analyzer=None) -> bool:
    """True when the block bindings are independent quasi-affine maps of the loops."""
    return bool(detect_iter_map(list(bindings), loop_doms, analyzer=analyzer))


def inverse_affine_map(bindings, input_iters: dict, outputs, analyzer=None) -> dict:
    """``{loop var: expression of outputs}`` inverting ``bindings`` (split/fuse maps).

    Each loop variable's range start is added back. Raises ``IRError`` when the
    bindings are not a bijective affine map.
    """
    result = detect_iter_map(bindings, input_iters, check_level=IterMapLevel.BIJECTIVE,
                             analyzer=analyzer)
    if not result:
        raise IRError(f"cannot invert bindings {list(bindings)}: {result.errors[0]}")
    analyzer = analyzer or Analyzer()
    offsets = inverse_affine_iter_map(result.indices, outputs, analyzer)
    inverse = {}
    for var, rng in input_iters.items():
        value = offsets.get(var, E.const(0, var.dtype))
        inverse[var] = analyzer.simplify(E.binary(E.Add, value, rng.min))
    return inverse
