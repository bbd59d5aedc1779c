"""Which blocks and loop iterations the tracer runs, and what a loop lets a compiler
keep in registers (:mod:`.trace` explains the counting these serve)."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ...ir.structural import structural_equal
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.functor import post_order_visit, uses_var
from .launch import is_barrier

ALL_BLOCKS_UP_TO = 8
"""Grids of at most this many blocks are traced whole."""


def sample_blocks(grid: tuple) -> list:
    """Block coordinates to trace: every corner of the grid and its middle (all blocks
    of a small grid)."""
    if np.prod(grid) <= ALL_BLOCKS_UP_TO:
        return list(itertools.product(*[range(g) for g in grid]))
    # Affine indices reach their extremes at the grid's corners; the middle block is typical.
    corners = itertools.product(*[sorted({0, g - 1}) for g in grid])
    return list(dict.fromkeys(list(corners) + [tuple(g // 2 for g in grid)]))


def sample_iterations(start: int, stop: int, branches: bool) -> list:
    """(iteration, weight) pairs to trace of ``range(start, stop)``: the first and the
    last, each standing for half; with ``branches`` (a condition in the body depends
    on the loop variable) the first, middle and last, the middle standing for all but
    the first and last."""
    extent = stop - start
    # Too short to sample: every iteration runs.
    if extent <= (3 if branches else 2):
        return [(i, 1) for i in range(start, stop)]
    if branches:
        return [(start, 1), ((start + stop) // 2, extent - 2), (stop - 1, 1)]
    return [(start, extent / 2), (stop - 1, extent / 2)]


@dataclass(frozen=True)
class LoopFacts:
    """What a loop's body does, found once per loop.

    ``stored``: data vars it stores to; ``barrier``: it synchronizes; ``branches``: a
    condition inside depends on the loop variable; ``promoted``: global buffers it
    accesses at one loop-invariant index only (a compiler keeps that element in a
    register across the loop).
    """
    stored: frozenset
    barrier: bool
    branches: bool
    promoted: frozenset


def loop_facts(loop: S.For) -> LoopFacts:
    stored, barrier, conditions, accesses, bound = set(), [], [], {}, {loop.loop_var}

    def visit(node):
        if isinstance(node, (S.BufferStore, E.BufferLoad)):
            accesses.setdefault(node.buffer.data, []).append(node)
        if isinstance(node, S.BufferStore):
            stored.add(node.buffer.data)
        elif is_barrier(node):
            barrier.append(True)
        elif isinstance(node, (S.For, S.LetStmt, E.Let)):
            bound.add(node.loop_var if isinstance(node, S.For) else node.var)
        conditions.extend(_conditions(node))
    post_order_visit(loop.body, visit)
    branches = uses_var(tuple(conditions), lambda v: v is loop.loop_var)
    promoted = {data for data in stored if _one_invariant_index(accesses[data], bound)}
    return LoopFacts(frozenset(stored), bool(barrier), branches, frozenset(promoted))


@dataclass
class TracedLoop:
    """An enclosing loop while tracing: the weight of the iteration being traced and
    whether it is the first traced iteration."""
    var: E.Var
    facts: LoopFacts
    factor: float = 1
    first: bool = True

    def changes(self, buffer) -> bool:
        """Whether the loop may change what ``buffer`` holds at a load's address."""
        if buffer.data in self.facts.promoted:
            return False
        return buffer.data in self.facts.stored or (self.facts.barrier
                                                    and buffer.scope != "local")


def _one_invariant_index(accesses, bound) -> bool:
    """Whether these accesses of one global buffer all use one index that none of the
    loop's own variables (``bound``) changes."""
    if accesses[0].buffer.scope != "global":
        return False
    first = accesses[0].indices
    return (not uses_var(first, lambda v: v in bound)
            and all(structural_equal(a.indices, first) for a in accesses[1:]))


def _conditions(node) -> list:
    """The expressions of ``node`` that decide which iterations or branches run."""
    if isinstance(node, (S.IfThenElse, E.Select)):
        return [node.condition]
    if isinstance(node, E.Call) and node.op == "tir.if_then_else":
        return [node.args[0]]
    if isinstance(node, S.For):
        return [node.min, node.extent]
    return []
