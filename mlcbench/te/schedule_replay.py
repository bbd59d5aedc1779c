"""The steps of a te schedule applied to a ``tir.Schedule``.

Each recorded step becomes the TensorIR primitive of the same name on the block of its
stage and the loops its axis handles stand for, so a te schedule lowers to exactly what
the same primitives written by hand produce. A primitive that refuses raises a
:class:`~mlcbench.ir.errors.ScheduleError` naming the stage, the step and its axes,
followed by TensorIR's own explanation.
"""
from __future__ import annotations

from ..ir.errors import ScheduleError


def _describe(kind: str, stage, args) -> str:
    """``stage 'C', split(i, factor=4)``: the step as the user wrote it."""
    if kind == "split":
        parent, factor, nparts = args[:3]
        shown = f"{parent.name}, " + (f"factor={factor}" if factor is not None
                                      else f"nparts={nparts}")
    elif kind in ("fuse", "reorder"):
        shown = ", ".join(a.name for a in args[0])
    elif kind == "compute_at":
        shown = f"s[{args[0].op.name}], {args[1].name}"
    elif kind in ("cache_read", "cache_write"):
        shown = repr(args[1])
    elif kind in ("bind", "pragma"):
        shown = f"{args[0].name}, {args[1]!r}"
    else:
        shown = ", ".join(a.name for a in args[:1])
    return f"stage {stage.op.name!r}, {kind}({shown})"


def consumers_first(steps) -> list:
    """The steps with each ``compute_at`` moved after the ``compute_at`` of a stage that
    reads it, when that comes later and nothing between touches the producer.

    TE attaches stages declaratively, so tutorials move ``A.shared`` before
    ``A.shared.local``; TensorIR moves a block only where its readers already are."""
    steps = list(steps)
    position = 0
    while position < len(steps):
        kind, producer, _ = steps[position]
        later = _reader_compute_at(steps, position, producer) if kind == "compute_at" else None
        if later is None:
            position += 1
            continue
        steps.insert(later, steps.pop(position))
    return steps


def _reader_compute_at(steps, position: int, producer):
    """Index just past the next ``compute_at`` of a reader of ``producer``, if the steps
    before it leave ``producer`` alone."""
    for index in range(position + 1, len(steps)):
        kind, stage, args = steps[index]
        if kind == "compute_at" and id(producer.origin) in stage.reads:
            return index + 1
        if stage is producer or (kind == "compute_at" and args[0] is producer):
            return None
    return None


class Replay:
    """Recorded steps applied to ``sch``: axis handles -> LoopRV, stages -> BlockRV."""

    def __init__(self, sch):
        self.sch, self.loops, self.blocks, self.inlined = sch, {}, {}, set()
        self.buffer_names: dict = {}        # te op name -> its TIR buffer, where they differ

    def open_stage(self, stage, block_name: str) -> None:
        block = self.sch.get_block(block_name)
        self.blocks[stage] = block
        self._bind_loops(stage.root_axes(), self.sch.get_loops(block))

    def _bind_loops(self, handles, loops) -> None:
        for handle, loop in zip(handles, loops[len(loops) - len(handles):]):
            self.loops[handle] = loop

    def _block(self, stage):
        if stage in self.inlined:
            raise ScheduleError(f"stage {stage.op.name!r} was inlined (compute_inline); it "
                                "has no loops or block left to schedule")
        if stage not in self.blocks:
            raise ScheduleError(f"stage {stage.op.name!r} is not computed by the arguments "
                                "given to lower/build; pass every output tensor")
        return self.blocks[stage]

    def step(self, kind: str, stage, args) -> None:
        try:
            getattr(self, "_" + kind)(stage, *args)
        except ScheduleError as err:
            raise ScheduleError(f"{_describe(kind, stage, args)}: {err}") from err

    def _split(self, stage, parent, factor, nparts, outer, inner):
        factors = [None, int(factor)] if factor is not None else [int(nparts), None]
        self._bind_loops([outer, inner], self.sch.split(self.loops[parent], factors))

    def _fuse(self, stage, axes, fused):
        self.loops[fused] = self.sch.fuse(*[self.loops[a] for a in axes])

    def _reorder(self, stage, axes):
        if len(axes) > 1:
            self.sch.reorder(*[self.loops[a] for a in axes])

    def _vectorize(self, stage, axis):
        self.sch.vectorize(self.loops[axis])

    def _parallel(self, stage, axis):
        self.sch.parallel(self.loops[axis])

    def _unroll(self, stage, axis):
        self.sch.unroll(self.loops[axis])

    def _bind(self, stage, axis, thread_tag):
        self.sch.bind(self.loops[axis], thread_tag)

    def _pragma(self, stage, axis, key, value):
        self.sch.annotate(self.loops[axis], "pragma_" + key, value)

    def _compute_at(self, stage, parent, scope):
        block = self._block(stage)
        self.sch.compute_at(block, self.loops[scope], preserve_unit_loops=True)
        self._bind_loops(stage.root_axes(), self.sch.get_loops(block))

    def _compute_inline(self, stage):
        self.sch.compute_inline(self._block(stage))
        self.inlined.add(stage)

    def _cache_write(self, stage, cache, scope: str):
        block = self._block(stage)
        copy = self.sch.cache_write(block, 0, scope)
        self._bind_loops(cache.root_axes(), self.sch.get_loops(block))
        self.blocks[cache], self.blocks[stage] = block, copy
        self._bind_loops(stage.root_axes(), self.sch.get_loops(copy))

    def _cache_read(self, stage, tensor_name: str, scope: str, readers):
        blocks = [self._block(reader) for reader in readers]
        copy = self.sch.cache_read(blocks[0], self.buffer_names.get(tensor_name, tensor_name),
                                   scope, consumer_blocks=blocks)
        self.blocks[stage] = copy
        self.buffer_names[stage.op.name] = self.sch.get(copy).name_hint
        self._bind_loops(stage.root_axes(), self.sch.get_loops(copy))

    def decompose_reductions(self, stages) -> None:
        """Initialise each reduction before its outermost reduction loop, as TE does.

        TensorIR refuses that for a block under a predicate (a non-dividing split of a
        reduction axis); the block then keeps its ``T.init()``, which lowering turns
        into a test on the first reduction iteration: slower, equally correct."""
        for stage in stages:
            if stage in self.inlined or stage not in self.blocks or not stage.op.reduce_axis:
                continue
            first = next((h for h in stage.leaves if h.kind != "data_par"), None)
            if first is not None:
                try:
                    self.sch.decompose_reduction(self.blocks[stage], self.loops[first])
                except ScheduleError:
                    pass
