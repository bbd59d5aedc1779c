"""The nodes of an affine iteration map and the result of detecting one.

They live apart from the detection (:mod:`.iter_affine_map`) and the checks and inverses
(:mod:`.iter_map_check`) because both build and read them: each of the two imports this
module, and neither needs the other's internals.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..tir import expr as E


@dataclass(frozen=True, eq=False)
class IterMark:
    source: object          # Var or IterSumExpr
    extent: E.PrimExpr

    def __repr__(self):
        return f"IterMark({self.source!r}, extent={self.extent})"


@dataclass(frozen=True, eq=False)
class IterSplitExpr:
    source: IterMark
    lower_factor: E.PrimExpr
    extent: E.PrimExpr
    scale: E.PrimExpr

    def __repr__(self):
        return (f"IterSplit({self.source!r}, lower_factor={self.lower_factor}, "
                f"extent={self.extent}, scale={self.scale})")


@dataclass(frozen=True, eq=False)
class IterSumExpr:
    args: tuple
    base: E.PrimExpr

    def __repr__(self):
        return f"IterSum({list(self.args)!r}, base={self.base})"


class IterMapLevel:
    BIJECTIVE = "bijective"     # every input point maps to exactly one output point
    SURJECTIVE = "surjective"   # iterators independent; inputs may be partly unused
    NO_CHECK = "no_check"


@dataclass
class IterMapResult:
    """``indices`` is empty when detection failed; ``errors`` says why."""
    indices: list
    errors: list

    def __bool__(self):
        return bool(self.indices)

    @property
    def extents(self) -> list:
        """Number of distinct values of each index (product of its splits' extents)."""
        result = []
        for s in self.indices:
            extent = E.const(1, s.base.dtype)
            for arg in s.args:
                extent = E.binary(E.Mul, extent, arg.extent)
            result.append(extent)
        return result


class IterMapFailure(Exception):
    """Why the indices are not an affine map of the iterators; detection turns it
    into ``IterMapResult.errors``."""
