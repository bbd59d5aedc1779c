"""Sampling primitives: random choices recorded with their decision in the trace."""
from __future__ import annotations

from ...ir.errors import ScheduleError
from .ir_utils import const_int
from .trace import ExprRV


def _divisors(n: int) -> list:
    return [d for d in range(1, n + 1) if n % d == 0]


def _check_tile_decision(decision, n, extent, max_innermost_factor) -> list:
    decision = [int(d) for d in decision]
    product = 1
    for d in decision:
        product *= d
    if len(decision) != n or product != extent:
        raise ScheduleError(f"sample_perfect_tile: decision {decision} must have {n} factors "
                            f"multiplying to the loop extent {extent}")
    if max_innermost_factor > 0 and decision[-1] > max_innermost_factor:
        raise ScheduleError(f"sample_perfect_tile: innermost factor {decision[-1]} of the "
                            f"decision exceeds max_innermost_factor={max_innermost_factor}")
    return decision


class SamplingMixin:
    def _random_tile(self, extent: int, n: int, max_innermost_factor: int) -> list:
        inner_choices = [d for d in _divisors(extent)
                         if max_innermost_factor <= 0 or d <= max_innermost_factor]
        factors = [self.state.choice(inner_choices)]
        remaining = extent // factors[0]
        for _ in range(n - 2):
            factor = self.state.choice(_divisors(remaining))
            factors.insert(0, factor)
            remaining //= factor
        if n > 1:
            factors.insert(0, remaining)
        return factors

    def sample_perfect_tile(self, loop, n: int, max_innermost_factor: int = 16,
                            decision=None) -> list:
        """``n`` factors whose product is the loop's extent (usable as split factors)."""
        func_name, var = self.state.loop(loop, "sample_perfect_tile")
        extent = const_int(self.state.loop_node(loop, "sample_perfect_tile").extent)
        if extent is None:
            raise ScheduleError(f"sample_perfect_tile: loop {var.name!r} needs a constant extent")
        if n < 1:
            raise ScheduleError(f"sample_perfect_tile: n must be at least 1, found {n}")
        if decision is None:
            decision = self._random_tile(extent, n, max_innermost_factor)
        decision = _check_tile_decision(decision, n, extent, max_innermost_factor)
        outs = [self.state.new_expr_rv(d) for d in decision]
        self.state.commit(func_name, None, "sample_perfect_tile", inputs=(("loop", loop),),
                          attrs=(("n", n), ("max_innermost_factor", max_innermost_factor)),
                          outputs=outs, decision=decision)
        return outs

    def sample_categorical(self, candidates, probs, decision=None) -> ExprRV:
        """One of ``candidates`` drawn with ``probs``; the decision is its index."""
        candidates = [int(self.state.value(c, "sample_categorical")) for c in candidates]
        probs = [float(p) for p in probs]
        if len(candidates) != len(probs) or not candidates:
            raise ScheduleError(f"sample_categorical: {len(candidates)} candidates but "
                                f"{len(probs)} probabilities")
        if decision is None:
            decision = self.state.weighted_index(probs)
        if not 0 <= int(decision) < len(candidates):
            raise ScheduleError(f"sample_categorical: decision {decision} is not an index "
                                f"into {len(candidates)} candidates")
        decision = int(decision)
        out = self.state.new_expr_rv(candidates[decision])
        self.state.commit(None, None, "sample_categorical",
                          attrs=(("candidates", candidates), ("probs", probs)), outputs=(out,),
                          decision=decision)
        return out
