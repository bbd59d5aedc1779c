"""Scheduling steps the CPU rules share: inlining, loop kinds, vectorize + parallel.

Thresholds come from measurements on the project's CPUs: a GOMP fork/join costs
about a microsecond on an idle machine, but when other processes share the cores the
join waits for a descheduled worker, about half a millisecond (layer_norm 128x768:
0.11 ms on one thread, 0.61 ms on two). A kernel under ~100 us of one-thread work
(~256K elements) gains little from a second thread and can lose several times that,
so it stays on one thread.

Injective kernels are the exception (``INJECTIVE_PARALLEL_MIN_ELEMENTS``, 16K elements):
in a model they read what a parallel convolution has just written, half of it in the
other core's cache, and one thread pulling it all across ran ShuffleNet's concat, add and
relu of 1x272x14x14 at 41 us per call, two threads at 22 (7-9 us alone, with its
inputs in its own cache). ShuffleNet from the onnx wheel went from 3.87 to 3.49 ms,
SqueezeNet from 4.38 to 4.29 on a 2-core Zen 4 host.
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.stmt import ForKind
from ..analysis import BlockInfo, block_infos, iter_vars_of, total_extent

PARALLEL_MIN_ELEMENTS = 256 * 1024
INJECTIVE_PARALLEL_MIN_ELEMENTS = 16 * 1024
# Parallel tasks of an elementwise kernel: the fewest outer loops that give this many
# run in parallel, the loops inside them serially in each task. With one 14-float row
# per task, ShuffleNet's join of 4 groups of 1x272x14x14 with an add and relu spent
# more on the loop than on the rows: 14.5 us alone against 7.9 with a plane per task
# (272 tasks), and the model ran 2.9 -> 2.8 ms (2-core Zen 4); SqueezeNet, Inception,
# DenseNet and ResNet-50 measured the same either way.
MIN_PARALLEL_TASKS = 64


def param_buffers(sch) -> set:
    return set(sch.mod["main"].buffer_map.values())


def inline_injective_producers(sch, keep=lambda info: False) -> None:
    """compute_inline every injective block writing an intermediate buffer (pads,
    broadcasts, casts), except those ``keep`` names; blocks that refuse stay."""
    params = param_buffers(sch)
    changed = True
    # Inlining one block can make another inlinable (a cast of a pad): repeat to a fixpoint.
    while changed:
        changed = False
        for info in block_infos(sch):
            if not info.is_injective or info.store is None or keep(info):
                continue
            # A block writing a parameter is an output of the function, not an intermediate.
            if info.store.buffer in params:
                continue
            try:
                sch.compute_inline(info.rv)
                changed = True
            except ScheduleError:
                continue


def inline_injective_consumers(sch, block_rv) -> None:
    """reverse_compute_inline injective consumers (bias, relu, casts) into ``block_rv``."""
    while True:
        consumers = sch.get_consumers(block_rv)
        # Reverse inlining replaces the block's own store, so no other consumer may read it.
        if len(consumers) != 1:
            return
        info = next(i for i in block_infos(sch) if i.name == sch.get(consumers[0]).name_hint)
        if not info.is_injective:
            return
        try:
            sch.reverse_compute_inline(consumers[0])
        except ScheduleError:
            return


def loop_kinds(sch, info: BlockInfo) -> list:
    """"S" for each loop of ``info`` that feeds only spatial iterators, else "R"."""
    reduce_vars = set()
    for iv, value in zip(info.block.iter_vars, info.realize.iter_values):
        if iv.iter_type.name != "DATA_PAR":
            reduce_vars |= iter_vars_of(value)
    return ["R" if sch.get(loop).loop_var in reduce_vars else "S"
            for loop in sch.get_loops(info.rv)]


def leading_spatial_loops(sch, info: BlockInfo) -> list:
    loops, kinds = sch.get_loops(info.rv), loop_kinds(sch, info)
    out = []
    for loop, kind in zip(loops, kinds):
        if kind != "S":
            break
        out.append(loop)
    return out


def choose_vector_tile(extent: int, lanes: int) -> int:
    """Vector tile for a loop of ``extent``: two registers when that divides, else one,
    else half a register (odd widths such as 28 lanes compile to slow code), else the
    whole loop when short, else ``lanes`` with a predicate on the tail.
    ``choose_vector_tile(1024, 16) == 32``, ``choose_vector_tile(56, 16) == 8``,
    ``choose_vector_tile(13, 16) == 13``, ``choose_vector_tile(1000, 16) == 8``.
    With 16 lanes or more, a loop of one to two registers takes its largest divisor of
    half a register or more (``choose_vector_tile(28, 16) == 14``): ShuffleNet's
    depthwise 3x3 over 28-pixel rows took 211 us with 28-lane vectors and 98 us with
    14 on an AVX-512 Xeon, while on AVX2 the 14-lane tile of a 14-pixel row measured
    faster than 7 (82-90 us against 110 on Zen 1) and stays."""
    for tile in (2 * lanes, lanes, lanes // 2):
        if tile > 1 and extent >= tile and extent % tile == 0:
            return tile
    if lanes >= 16 and lanes < extent <= 2 * lanes:
        divisor = next((d for d in range(lanes, lanes // 2 - 1, -1) if extent % d == 0), None)
        if divisor:
            return divisor
    return extent if extent <= 2 * lanes else lanes


def vectorize_and_parallelize(sch, info: BlockInfo, lanes: int) -> None:
    """Fuse the leading spatial loops, vectorize the innermost spatial loop by
    ``lanes`` when it is the last loop, and make the outer part parallel when large
    (``INJECTIVE_PARALLEL_MIN_ELEMENTS`` for an injective block, else
    ``PARALLEL_MIN_ELEMENTS``)."""
    loops = leading_spatial_loops(sch, info)
    if not loops:
        return
    all_loops = sch.get_loops(info.rv)
    work = total_extent(sch, all_loops) or 0
    parallel = work >= (INJECTIVE_PARALLEL_MIN_ELEMENTS if info.is_injective
                        else PARALLEL_MIN_ELEMENTS)
    if len(loops) == len(all_loops) and _vectorize_last_alone(sch, loops, lanes):
        _vectorize_last_loop(sch, loops, lanes, parallel)
        return
    row = short_row(sch, loops, lanes) if len(loops) == len(all_loops) else None
    if row is not None:
        _vectorize_short_row(sch, loops, row, lanes, parallel)
        return
    if len(loops) == len(all_loops):
        fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
        extent = total_extent(sch, [fused]) or 0
        if extent > 1:
            tile = choose_vector_tile(extent, lanes)
            outer, inner = sch.split(fused, [None, tile])
            sch.vectorize(inner)
            # One outer iteration would pay the fork with nothing to share.
            if parallel and extent // tile >= 2:
                sch.parallel(outer)
        return
    if parallel:
        fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
        if (total_extent(sch, [fused]) or 0) >= 2:
            sch.parallel(fused)


def _vectorize_last_alone(sch, loops, lanes: int) -> bool:
    """True when the last loop holds two vectors or more by itself: vectorized alone its
    indices stay affine, where fused with the outer loops a windowed or padded access
    (``x[i, j - 1]``) needs a division per element and the vectorizer gives up
    (a 3x3 convolution's pad of 64x58x58: 0.8 ms fused, scalar)."""
    return len(loops) > 1 and (total_extent(sch, loops[-1:]) or 0) >= 2 * lanes


def short_row(sch, loops, lanes: int):
    """The index of the first of the innermost loops that together hold half a vector or
    more under outer loops, else None: the innermost loop of more than one iteration
    when it is such a row, else it with the loops just outside it (a 7x7 map's rows
    and columns against AVX-512's 16 lanes). Such a row is vectorized by itself (with
    the unit loops after it): fused with the outer loops instead, every index divides
    the fused counter per element, and an add and relu of 1x272x14x14 ran at 1.2-1.4 ms
    instead of 0.011 (concats and channel shuffles of 14x14 maps too; with 16 lanes
    ShuffleNet's concat, add and relu of 544 7x7 maps took 250 us, a vector of 32
    spanning channels)."""
    extents = [total_extent(sch, [lp]) or 0 for lp in loops]
    row = max((n for n, e in enumerate(extents) if e != 1), default=None)
    if row is None or row == 0:
        return None
    width = extents[row]
    while width < max(2, lanes // 2) and row > 1:
        row -= 1
        width *= extents[row]
    return row if width >= max(2, lanes // 2) else None


def _vectorize_short_row(sch, loops, row: int, lanes: int, parallel: bool) -> None:
    inner = sch.fuse(*loops[row:]) if row < len(loops) - 1 else loops[row]
    extent = total_extent(sch, [inner])
    tile = choose_vector_tile(extent, lanes)
    sch.vectorize(inner if tile >= extent else sch.split(inner, [None, tile])[1])
    _parallel_outer(sch, loops[:row], parallel)


def _vectorize_last_loop(sch, loops, lanes: int, parallel: bool) -> None:
    extent = total_extent(sch, loops[-1:])
    sch.vectorize(sch.split(loops[-1], [None, choose_vector_tile(extent, lanes)])[1])
    _parallel_outer(sch, loops[:-1], parallel)


def _parallel_outer(sch, outer, parallel: bool) -> None:
    """Fuse the loops outside the vectorized row; when ``parallel``, the fewest leading
    ones that give ``MIN_PARALLEL_TASKS`` tasks run in parallel and the rest stay
    serial inside each task."""
    if not parallel:
        if len(outer) > 1:
            sch.fuse(*outer)
        return
    extents = [total_extent(sch, [lp]) or 0 for lp in outer]
    count, tasks = 0, 1
    while count < len(outer) and tasks < MIN_PARALLEL_TASKS:
        tasks *= extents[count]
        count += 1
    fused = sch.fuse(*outer[:count]) if count > 1 else outer[0]
    if (total_extent(sch, [fused]) or 0) >= 2:
        sch.parallel(fused)


def schedule_remaining_blocks(sch, lanes: int, skip=()) -> None:
    """vectorize_and_parallelize every block still at the root, except ``skip`` names."""
    for info in block_infos(sch):
        if info.name in skip:
            continue
        # A block a rule already placed under a parallel or vector loop keeps that schedule.
        if _under_scheduled_loop(sch, info):
            continue
        vectorize_and_parallelize(sch, info, lanes)


def _under_scheduled_loop(sch, info) -> bool:
    return any(sch.get(loop).kind != ForKind.SERIAL for loop in sch.get_loops(info.rv))


def float_bits(info: BlockInfo) -> int:
    store = info.store
    # A block with several outputs has no single dtype; fp32 lanes are the common case.
    return store.buffer.dtype.bits if store is not None else 32
