"""Reduction: row-wise kernels (softmax, layer_norm, sum/max over trailing axes, pools).

Every reduction block reduces its trailing loops for each "row" (its leading spatial
loops). The last block's row loops are fused, the earlier blocks are computed at that
row loop, the row loop runs in parallel when large (its elements, with an exp or a log
counted as ``TRANSCENDENTAL_WEIGHT`` elements: ``weighted_work``), and spatial loops
inside a row are vectorized::

    for row in T.parallel(rows):
        for k in range(n): maxelem[row] = max(maxelem[row], x[row, k])
        for k in range(n): expsum[row] += exp(x[row, k] - maxelem[row])
        for k0, k1 in ..vectorized(16): out[row, k] = exp(..) / expsum[row]

A row reduction long enough is factored into vector partial results (``rfactor``):
a few vector accumulators side by side walk the row (one add must wait for the last on
the same accumulator), are added into one vector, whose lanes are then summed::

    for k0 in range(n // 32):
        for k1 in T.unroll(4):
            for k2 in T.vectorized(8): sum_rf_rf[row, k1, k2] += x[row, k0 * 32 + k1 * 8 + k2]
    for k1 in range(4):
        for k2 in T.vectorized(8): sum_rf[row, k2] += sum_rf_rf[row, k1, k2]
    for k2 in range(8): sum[row] += sum_rf[row, k2]

Elementwise blocks inside a row that compute chains per element (softmax's exp) are
vectorized several registers wide, so that LLVM interleaves the registers' chains; such a
block stays a block of its own when a reduction reads it (log-softmax's exp), rather than
being inlined into the sum. Lighter blocks (the output ``x - max - log(sum)``) are one
register wide.
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.expr import Call, Let
from ...tir.functor import post_order_visit
from ...tir.schedule import Schedule
from ...tir.schedule.ir_utils import uses_any
from ...tir.stmt import IterType
from ..analysis import block_infos, total_extent
from ..base import ScheduleRule
from .tuple_reduction import split_tuple_reductions
from .common import (PARALLEL_MIN_ELEMENTS, choose_vector_tile, inline_injective_producers,
                     leading_spatial_loops, loop_kinds)

TRANSCENDENTAL = frozenset(f"tir.{name}" for name in ("exp", "log", "tanh", "sigmoid", "erf"))
TRANSCENDENTAL_WEIGHT = 8
UNROLL_CHOICES = (4, 5, 3, 2)      # vectors side by side, in order of preference
MIN_INNER_ACCUMULATORS = 4
MAX_INNER_ACCUMULATORS_VECTORS = 4
# A row of element chains (softmax's exp) that no register divides runs two whole
# registers at a time, with a scalar tail, when it is at least this many registers long.
WHOLE_REGISTERS_MIN_VECTORS = 4


def row_count(sch) -> int | None:
    """How many leading loops are rows: the spatial loops of the reduction blocks, the
    same number for each; None when some reduction block has reduce loops first."""
    counts = set()
    for info in block_infos(sch):
        if info.is_reduction:
            kinds = loop_kinds(sch, info)
            spatial = len(leading_spatial_loops(sch, info))
            if "S" in kinds[spatial:]:
                return None
            counts.add(spatial)
    return counts.pop() if len(counts) == 1 else None


class Reduction(ScheduleRule):
    """Rows in parallel, reductions inside a row, vectorized spatial inner loops."""

    name = "Reduction"

    def apply(self, func, target, tunable=False):
        sch = Schedule(split_tuple_reductions(func))
        if not any(info.is_reduction for info in block_infos(sch)):
            return None
        inline_injective_producers(sch, keep=lambda info: _kept_producer(sch, info))
        rows = row_count(sch)
        infos = block_infos(sch)
        # The row loop is fused from the last block's loops, so it needs them all spatial.
        if not rows or len(leading_spatial_loops(sch, infos[-1])) < rows:
            return None
        lanes = target.vector_lanes(32)
        work = weighted_work(sch, infos)
        # rfactor before compute_at, so the partial-result blocks move into the row with the rest.
        partials = [rf for info in infos if info.is_reduction
                    for rf in _factor_row_reduction(sch, info, rows, lanes)]
        infos = block_infos(sch)
        last = infos[-1]
        row_loops = sch.get_loops(last.rv)[:rows]
        row = sch.fuse(*row_loops) if rows > 1 else row_loops[0]
        # Consumers first: compute_at places a producer from where its readers already are.
        for info in reversed(infos[:-1]):
            sch.compute_at(info.rv, row)
        if work >= PARALLEL_MIN_ELEMENTS and (total_extent(sch, [row]) or 0) >= 2:
            sch.parallel(row)
        for name, vector in partials:
            _vectorize_partials(sch, name, vector)
        for info in block_infos(sch):
            _vectorize_row_body(sch, info, lanes)
        return sch


def _kept_producer(sch, info) -> bool:
    """Whether an injective producer stays a block, computed once per row: when several
    blocks read it (softmax's exp), or when it is as long as an exp and a reduction reads
    it (log-softmax's exp): then it runs several registers wide and is summed over several
    accumulators, where inlined into the sum it ran one register at a time
    (log_softmax 128x1000: 0.16 ms against 0.18 on one Zen 1 thread)."""
    consumers = sch.get_consumers(info.rv)
    if len(consumers) > 1:
        return True
    return _body_weight(info.block) >= TRANSCENDENTAL_WEIGHT and any(
        iv.iter_type == IterType.COMM_REDUCE for c in consumers for iv in sch.get(c).iter_vars)


def weighted_work(sch, infos) -> int:
    """The last block's elements plus ``TRANSCENDENTAL_WEIGHT`` elements for each exp,
    log, tanh, sigmoid or erf that a block computes per element, to compare with
    ``PARALLEL_MIN_ELEMENTS`` (about 100 us on one thread). An inline exp costs about
    as much as ten plain passes over its elements: softmax 128x1000 takes 0.27 ms on
    one Zen 1 thread, layer_norm 128x768 (no exp) 0.06 ms."""
    work = total_extent(sch, sch.get_loops(infos[-1].rv)) or 0
    for info in infos:
        work += _body_weight(info.block) * (total_extent(sch, sch.get_loops(info.rv)) or 0)
    return work


def _body_weight(block, varying=None) -> int:
    """The weight of ``block``'s calls (``_call_weight``); with ``varying`` (iterator
    variables) only of those calls whose arguments use one of them."""
    weights = []
    post_order_visit(block.body, lambda n: weights.append(
        _call_weight(n) if varying is None or uses_any(n, varying) else 0))
    return sum(weights)


def _call_weight(node) -> int:
    """Elements of work per element of a block for one node of its body: an exp, log,
    ... call ``TRANSCENDENTAL_WEIGHT``, an FMA one (an exp written out in arithmetic,
    as softmax's, is eight of them), anything else none."""
    if not isinstance(node, Call):
        return 0
    if node.op in TRANSCENDENTAL:
        return TRANSCENDENTAL_WEIGHT
    return 1 if node.op == "tir.fma" else 0


def _factor_row_reduction(sch, info, rows, lanes):
    """rfactor a block's single reduce loop (after its ``rows`` row loops) into
    ``accumulators`` vectors of ``vector`` partial results each, ``vector`` = ``lanes`` or
    half of it, whichever divides the extent, when the row holds at least two such tiles;
    the accumulators are then combined lane by lane (a second rfactor) before the last
    ``vector`` lanes are reduced one at a time. Returns ``(block name, vector)`` for each
    partial-result block, none when the block stays a scalar reduction."""
    loops = sch.get_loops(info.rv)
    if info.store is None:          # several outputs (layer_norm's sum and sum of squares)
        return []
    kinds = loop_kinds(sch, info)
    if len(loops) > rows + 1 and kinds == ["S"] * rows + ["R"] * (len(loops) - rows):
        # A short inner loop gives one accumulator per position; a long one (a vector of
        # as many lanes would not fit the registers) is fused with the outer reduce loops.
        if (total_extent(sch, loops[-1:]) or 0) <= MAX_INNER_ACCUMULATORS_VECTORS * lanes:
            return _factor_inner_reduce_loop(sch, info, rows)
        loops = loops[:rows] + [sch.fuse(*loops[rows:])]
        kinds = kinds[:rows + 1]
    if len(loops) != rows + 1 or kinds != ["S"] * rows + ["R"]:
        return []
    extent = total_extent(sch, loops[-1:]) or 0
    vector = next((t for t in (lanes, lanes // 2) if t > 1 and extent % t == 0), None)
    if vector is None or extent < 2 * vector:
        return []
    # A body as long as an exp hides the wait for the previous add by itself, and more
    # accumulators only spill its constants (an exp inlined into the sum of a 128x1000
    # log-softmax: 0.22 ms, against 0.20).
    accumulators = 1 if _body_weight(info.block) else _accumulators(extent // vector)
    partials, block = [], info.rv
    for split in (vector, accumulators):
        if split == 1:
            break
        name = sch.get(block).name_hint
        kinds = loop_kinds(sch, next(i for i in block_infos(sch) if i.name == name))
        reduce_loop = [lp for lp, kind in zip(sch.get_loops(block), kinds) if kind == "R"][-1]
        _, inner = sch.split(reduce_loop, [None, split])
        try:
            block = sch.rfactor(inner, rows)
        except ScheduleError:
            break
        sch.set_scope(block, 0, "local")     # accumulator vectors in registers
        partials.append((sch.get(block).name_hint, vector))
    return partials


def _factor_inner_reduce_loop(sch, info, rows):
    """A window of several reduce loops (global pooling's 13x13): one accumulator per
    position of the innermost loop, side by side, then summed (1000 channels of 13x13:
    0.03 ms, against 0.17 in one chain of 169 dependent adds)."""
    inner = sch.get_loops(info.rv)[-1]
    extent = total_extent(sch, [inner]) or 0
    if extent < MIN_INNER_ACCUMULATORS:
        return []
    try:
        block = sch.rfactor(inner, rows)
    except ScheduleError:
        return []
    sch.set_scope(block, 0, "local")
    return [(sch.get(block).name_hint, extent)]


def _accumulators(vectors: int) -> int:
    """How many independent accumulator vectors walk a row of ``vectors`` vectors: one
    add or max waits three or four cycles for the previous one on the same accumulator,
    so four or five side by side keep the vector units busy (a row of 1000 floats in 125
    vectors: five). Each must see at least two vectors; 1 when nothing divides."""
    return next((u for u in UNROLL_CHOICES if vectors % u == 0 and vectors >= 2 * u), 1)


def _vectorize_partials(sch, name: str, vector: int) -> None:
    """Inside its row, the partial-result block runs ``k0`` (reduce) then ``k1`` (its
    accumulators' lanes): initialise the accumulators before ``k0``, vectorize ``k1`` by
    ``vector`` lanes and unroll the accumulators."""
    info = next(i for i in block_infos(sch) if i.name == name)
    loops, kinds = sch.get_loops(info.rv)[1:], loop_kinds(sch, info)[1:]
    (reduce_loop,) = [lp for lp, kind in zip(loops, kinds) if kind == "R"]
    lane_loops = [lp for lp, kind in zip(loops, kinds) if kind == "S"]
    # compute_at may leave the lane loops outside the reduce loop; the reorder puts them inside.
    sch.reorder(reduce_loop, *lane_loops)
    init = sch.decompose_reduction(info.rv, reduce_loop)
    for block in (init, info.rv):
        lanes = sch.get_loops(block)[-len(lane_loops):]
        _unrolled_vectors(sch, sch.fuse(*lanes) if len(lanes) > 1 else lanes[0], vector)


def _unrolled_vectors(sch, loop, vector: int) -> None:
    """Vectorize ``loop`` by ``vector`` lanes and unroll the vectors: each accumulator is
    its own register (one vector of all the lanes, ``<40 x float>``, is carried from one
    iteration to the next through the stack and ran several times slower)."""
    extent = total_extent(sch, [loop]) or 0
    if extent <= vector:
        sch.vectorize(loop)
        return
    outer, inner = sch.split(loop, [None, vector])
    sch.vectorize(inner)
    sch.unroll(outer)


def _vectorize_row_body(sch, info, lanes) -> None:
    """Vectorize the spatial loops a block has inside its row (none for reductions)."""
    loops = sch.get_loops(info.rv)[1:]
    kinds = loop_kinds(sch, info)[1:]
    if not loops or "R" in kinds:
        return
    chains = _has_element_chains(sch, info, loops)
    inner = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    extent = total_extent(sch, [inner]) or 0
    if extent <= 1:
        return
    if chains and extent % lanes and extent >= WHOLE_REGISTERS_MIN_VECTORS * lanes:
        # Whole registers and a scalar tail, rather than half registers that divide the
        # row: softmax 128x1000 on 16 lanes (2-core Zen 4) 23.2 -> 19.6 us, log_softmax
        # 24.5 -> 21.3 (onnxruntime 28.0 and 26.0 in the same run), 256x200 10.9 ->
        # 10.0 and 14.5 -> 13.3. The reductions keep vectors that divide the row: a
        # partial vector there is reduced lane by lane (softmax 128x1000: 327 us).
        sch.vectorize(sch.split(inner, [None, 2 * lanes])[1])
        return
    tile = choose_vector_tile(extent, lanes)
    if tile <= lanes and extent % tile == 0 and chains:
        # Several registers per vector operation: LLVM emits each operation for all of
        # them in turn, so softmax's exp (a chain of about 14 dependent operations per
        # register) runs several chains side by side (128x1000: 0.10 ms, against 0.13
        # one register at a time, unrolled or not).
        tile *= _accumulators(extent // tile)
    sch.vectorize(sch.split(inner, [None, tile])[1])


def _has_element_chains(sch, info, loops) -> bool:
    """Whether the block computes an exp, log, FMA, ... per element of the row. A lighter
    body (log-softmax's ``x - max - log(sum)``, whose log is once per row) waits on
    memory, not on chains, and stays one register wide: LLVM builds a scalar broadcast
    over a five-register vector lane by lane, spilling (log_softmax 128x1000: 0.187 ms
    with its output five registers wide, 0.152 one, on one Zen 1 thread)."""
    info = next(i for i in block_infos(sch) if i.name == info.name)
    loop_vars = [sch.get(loop).loop_var for loop in loops]
    varying = [iv.var for iv, value in zip(info.block.iter_vars, info.realize.iter_values)
               if uses_any(value, loop_vars)]
    return _body_weight(info.block, _with_let_vars(info.block, varying)) > 0


def _with_let_vars(block, varying: list) -> list:
    """``varying`` and the variables of the body's ``Let``s whose values use one of them
    (softmax's exp is a chain of Lets over ``x - max``)."""
    lets = []
    post_order_visit(block.body, lambda n: lets.append(n) if isinstance(n, Let) else None)
    varying, changed = list(varying), True
    while changed:
        known = {id(v) for v in varying}
        new = [let.var for let in lets
               if id(let.var) not in known and uses_any(let.value, varying)]
        varying, changed = varying + new, bool(new)
    return varying
