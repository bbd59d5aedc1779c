"""MutateTileSize: move a factor between two tiles of one ``sample_perfect_tile``.

``[4, 8, 2, 16]`` may become ``[4, 2, 8, 16]`` (a factor 4 moved from the second tile
to the third): the product, the loop extent, stays the same. When a compute location is
sampled later in the trace and the mutator knows the module, the new trace is replayed
to check that the location is still legal.
"""
from __future__ import annotations

from ...tir.schedule import Trace
from .mutator import Mutator, as_random, without_postproc

MAX_TRIES = 32


def _divisors_above_one(n: int) -> list:
    return [d for d in range(2, n + 1) if n % d == 0]


class MutateTileSize(Mutator):
    """Change one tile-size decision, keeping the innermost factor within its limit.

    >>> MutateTileSize().apply(trace, rand_state=1)      # doctest: +SKIP
    """

    def apply(self, trace: Trace, rand_state=None) -> Trace | None:
        rng = as_random(rand_state)
        candidates = [inst for inst in without_postproc(trace)
                      if inst.kind == "sample_perfect_tile" and len(inst.decision) > 1
                      and any(f > 1 for f in inst.decision)]
        for _ in range(MAX_TRIES if candidates else 0):
            inst = rng.choice(candidates)
            factors = _moved_factor(list(inst.decision), rng,
                                    inst.kwargs()["max_innermost_factor"])
            if factors is None:
                continue
            new = trace.with_decision(inst, factors)
            if self.mod is None or not _locations_after(trace, inst) or self._replays(new):
                return new
        return None


def _locations_after(trace: Trace, inst) -> bool:
    """Whether a compute location is sampled after ``inst`` (its legal loops, and so
    the meaning of its decision, may depend on the tile sizes)."""
    position = trace.insts.index(inst)
    return any(i.kind == "sample_compute_location" for i in trace.insts[position + 1:])


def _moved_factor(factors: list, rng, max_innermost: int):
    source = rng.choice([n for n, f in enumerate(factors) if f > 1])
    dest = rng.choice([n for n in range(len(factors)) if n != source])
    divisor = rng.choice(_divisors_above_one(factors[source]))
    factors[source] //= divisor
    factors[dest] *= divisor
    if max_innermost > 0 and factors[-1] > max_innermost:
        return None
    return factors
