"""Whole vectors over a channel count that is not a multiple of the vector: pad the tile.

With 16 lanes (AVX-512) a convolution's 72 or 1000 output channels divide neither two
vectors nor one, so ``choose_vector_tile`` takes half a vector (8 lanes): on a core with
full-width 512-bit FMA units that runs every multiply-add at half its width. Instead the
tile stays a whole vector and the last column tile runs past the end, computing
channels that are never stored::

    w_global[5, 512, 1, 1, 16]                 # 80 channels of panels, 72..79 zero
    for f0 in range(5):                          # no bound test in the micro-kernel
        acc[13, 16] = 0
        for rc in range(512): acc[x, f] += x[rc, y, x] * w_global[f0, rc, 0, 0, f]
        for f in range(16): if 16 * f0 + f < 72: out[0, 16 * f0 + f, y, x] = acc[x, f]

:func:`pad_vector_tail` rewrites a scheduled function so: the accumulator's and the
packed panel's blocks lose their bound test on the vector axis (the accumulator grows
to whole tiles, the panel was already whole), the panel's extra lanes are written as
zeros, and only the write-back keeps its test.
"""
from __future__ import annotations

from dataclasses import replace

from ...ir.errors import ScheduleError
from ...ir.structural import structural_equal
from ...tir.expr import And, IntImm, LE, LT, Range, const
from ...tir.functor import StmtExprMutator
from ...tir.op import if_then_else
from ...tir.schedule import Schedule
from ..analysis import block_infos, iter_vars_of
from .layout import allocated_buffer

# Padding beyond this share of the channels costs more work than whole vectors save.
MAX_PADDING_SHARE = 1 / 8


def padded_extent(extent: int, lanes: int) -> int | None:
    """The channel count rounded up to whole vectors of ``lanes`` when that is worth it
    (16 lanes or more, not a multiple already, at most ``MAX_PADDING_SHARE`` more
    work): ``padded_extent(1000, 16) == 1008``, ``padded_extent(72, 16) == 80``;
    None otherwise."""
    if lanes < 16 or extent % lanes == 0 or extent < 2 * lanes:
        return None
    return rounded_up(extent, lanes, MAX_PADDING_SHARE)


def rounded_up(extent: int, multiple: int, max_share: float) -> int | None:
    """``extent`` rounded up to a multiple of ``multiple`` when that adds at most
    ``max_share`` of it (``rounded_up(72, 16, 1 / 8) == 80``), else None."""
    padded = -(-extent // multiple) * multiple
    return padded if padded - extent <= max_share * extent else None


def _conjuncts(expr) -> list:
    if isinstance(expr, And):
        return _conjuncts(expr.a) + _conjuncts(expr.b)
    return [expr]


def _bounds_test(cond, value, extent: int) -> bool:
    """``value < extent`` or ``value <= extent - 1``."""
    bound = getattr(cond, "b", None)
    if not isinstance(bound, IntImm) or not structural_equal(getattr(cond, "a", None), value):
        return False
    return (isinstance(cond, LT) and bound.value == extent) or \
        (isinstance(cond, LE) and bound.value == extent - 1)


class _PadTail(StmtExprMutator):
    def __init__(self, blocks: set, fill: str, accumulator, extent: int, padded: int):
        self.blocks, self.fill = blocks, fill
        self.accumulator, self.extent, self.padded = accumulator, extent, padded
        shape = list(accumulator.shape)
        shape[-1] = const(padded, shape[-1].dtype)
        self.grown = replace(accumulator, shape=tuple(shape), data=None)

    def visit_BufferLoad(self, op):
        op = self.generic_visit(op)
        return replace(op, buffer=self.grown) if op.buffer is self.accumulator else op

    def visit_BufferStore(self, op):
        op = self.generic_visit(op)
        return replace(op, buffer=self.grown) if op.buffer is self.accumulator else op

    def visit_BufferRegion(self, op):
        return replace(op, buffer=self.grown) if op.buffer is self.accumulator else op

    def visit_Block(self, op):
        op = self.generic_visit(op)
        if self.accumulator in op.alloc_buffers:
            op = replace(op, alloc_buffers=tuple(self.grown if b is self.accumulator else b
                                                 for b in op.alloc_buffers))
        return op

    def visit_BlockRealize(self, op):
        op = self.generic_visit(op)
        name = op.block.name_hint
        if name not in self.blocks and name != self.fill:
            return op
        # The iter var whose binding the bound test compares with the channel count.
        kept, channel = [], None
        for cond in _conjuncts(op.predicate):
            hit = next((n for n, (iv, value) in enumerate(zip(op.block.iter_vars,
                                                                op.iter_values))
                        if int(iv.dom.extent.value) == self.extent
                        and _bounds_test(cond, value, self.extent)), None)
            if hit is None:
                kept.append(cond)
            else:
                channel = hit
        if channel is None:
            return op
        iter_vars = list(op.block.iter_vars)
        iv = iter_vars[channel]
        iter_vars[channel] = replace(iv, dom=Range(iv.dom.min, const(self.padded,
                                                                     iv.dom.extent.dtype)))
        block = replace(op.block, iter_vars=tuple(iter_vars))
        if name == self.fill:
            store = block.body
            zero = const(0, store.value.dtype)
            guarded = if_then_else(iv.var < const(self.extent, iv.var.dtype), store.value,
                                   zero)
            block = replace(block, body=replace(store, value=guarded))
        predicate = kept[0] if kept else const(True, "bool")
        for cond in kept[1:]:
            predicate = predicate & cond
        return replace(op, block=block, predicate=predicate)


def pad_vector_tail(func, blocks: list, fill: str, accumulator_name: str, extent: int,
                    padded: int):
    """``func`` with ``blocks`` (the accumulator's init and update) running the vector
    axis up to ``padded`` without a bound test, the accumulator ``accumulator_name``
    grown to ``padded`` along its last (vector) axis, and the packing block ``fill``
    writing zeros past ``extent``. The write-back keeps its test."""
    try:
        accumulator = allocated_buffer(func, accumulator_name)
    except ScheduleError:
        return None
    mutator = _PadTail(set(blocks), fill, accumulator, extent, padded)
    return func.with_body(mutator.visit(func.body))


def pad_packed_tail(sch, name: str, channel_name: str, channels: int, padded: int):
    """The schedule of the product ``name`` (a convolution, a matmul) with its last
    column tile run whole (:func:`pad_vector_tail` up to ``padded``, the vector iterator
    named ``channel_name`` of extent ``channels``), or None when its blocks are not
    where the rewrite expects them."""
    func = sch.mod["main"]
    update = next((i for i in block_infos(sch) if i.name == f"{name}_update"), None)
    if update is None or update.store is None:
        return None
    accumulator = update.store.buffer
    params = set(func.buffer_map.values())
    channel = next((iv.var for iv in update.block.iter_vars if iv.var.name == channel_name),
                   None)
    # The packed operand: the intermediate read with the channel in its last (lane) index.
    panels = [r.buffer for r in update.block.reads
              if r.buffer is not accumulator and r.buffer not in params
              and channel is not None and channel in iter_vars_of(r.region[-1].min)]
    fills = [i.name for i in block_infos(sch)
             if i.store is not None and len(panels) == 1 and i.store.buffer is panels[0]]
    if len(fills) != 1:
        return None
    padded_func = pad_vector_tail(func, [f"{name}_init", f"{name}_update"], fills[0],
                                  accumulator.name, channels, padded)
    return None if padded_func is None else Schedule(padded_func)
