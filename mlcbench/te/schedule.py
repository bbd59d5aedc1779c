"""``te.create_schedule``: the schedule of the older TVM tutorials, recorded and replayed
onto a TensorIR :class:`~mlcbench.tir.Schedule`.

A te schedule has one *stage* per compute op. Stage methods (``split``, ``fuse``,
``reorder``, ``vectorize``, ``parallel``, ``unroll``, ``compute_at``,
``compute_inline``) act on axis handles: the op's axes (``s[C].op.axis``,
``s[C].op.reduce_axis``) and the new axes that ``split`` / ``fuse`` return. Nothing is
transformed while the schedule is written; ``lower`` / ``build`` make the PrimFunc
``te.create_prim_func(args)``, open a ``tir.Schedule`` on it and replay every recorded
step onto the block named after the op and the loops the handles stand for::

    s = te.create_schedule(C.op)
    y, x = s[C].op.axis
    (k,) = s[C].op.reduce_axis
    yo, yi = s[C].split(y, factor=32)
    xo, xi = s[C].split(x, factor=32)
    s[C].reorder(yo, xo, k, yi, xi)
    s[C].vectorize(xi)
    mod = mlcbench.lower(s, [A, B, C])      # or mlcbench.build(s, [A, B, C], "llvm")

As in TVM, the initialisation of a reduction is placed before the stage's outermost
reduction loop (``decompose_reduction`` at that loop). Errors the TensorIR schedule
raises surface unchanged as :class:`~mlcbench.ir.errors.ScheduleError`.

Two rules differ from TVM because TensorIR regenerates the loops it moves: a stage must
call ``compute_at`` before splitting, fusing or reordering its own axes, and
``cache_write`` must come before any other step on that stage.
"""
from __future__ import annotations

from ..ir.errors import ScheduleError
from ..tir.expr import IntImm, Range
from ..tir.stmt import IterType
from .create_prim_func import _topological_order, _unique_block_names, create_prim_func
from .tensor import ComputeOp, Operation, PlaceholderOp, Tensor

__all__ = ["Schedule", "Stage", "AxisHandle", "create_schedule"]


class AxisHandle:
    """A loop of a stage: an axis of the op, or one that ``split`` / ``fuse`` made.

    ``dom.extent`` is the loop's extent when it is known (``None`` otherwise), so
    ``cfg.define_split("tile_y", y)`` can read it as in TVM.
    """

    def __init__(self, name: str, extent, kind: str):
        self.name, self.kind = name, kind            # kind: "data_par", "reduce", "mixed"
        self.extent = extent if extent is None else int(extent)
        self.dom = Range(0, self.extent if self.extent is not None else 0)

    def __repr__(self) -> str:
        return f"iter_var({self.name}, range(min=0, ext={self.extent}))"


def _extent_of(iter_var):
    extent = iter_var.dom.extent
    return extent.value if isinstance(extent, IntImm) else None


def _ceildiv(a, b):
    return None if a is None or b is None else -(-a // b)


class StageOp:
    """What ``s[C].op`` shows: the stage's name and its current root axes."""

    def __init__(self, name: str, axis, reduce_axis, tensor=None):
        self.name, self.axis, self.reduce_axis = name, tuple(axis), tuple(reduce_axis)
        self._tensor = tensor

    def output(self, index: int):
        return self._tensor

    def __repr__(self) -> str:
        return f"StageOp(name={self.name!r})"


class CacheTensor:
    """The tensor ``s.cache_write`` returns: index ``s[CC]`` with it, read ``CC.op.axis``."""

    def __init__(self, stage: "Stage", source: Tensor):
        self.op, self.shape, self.dtype = stage.op, source.shape, source.dtype
        self.name = stage.op.name

    def __repr__(self) -> str:
        return f"CacheTensor(name={self.name!r})"


class Stage:
    """The loops of one compute op and the steps recorded on them."""

    def __init__(self, schedule: "Schedule", op: ComputeOp, name: str | None = None,
                 suffix: str = ""):
        self.schedule, self.origin = schedule, op
        axis = [AxisHandle(iv.var.name + suffix, _extent_of(iv), "data_par") for iv in op.axis]
        reduce = [AxisHandle(iv.var.name + suffix, _extent_of(iv), "reduce")
                  for iv in op.reduce_axis]
        self.op = StageOp(name or op.name, axis, reduce, op.output(0))
        self.leaves = axis + reduce
        self.attached = False

    # -- lookup -----------------------------------------------------------------------------
    def _leaf(self, axis, primitive: str) -> AxisHandle:
        """The handle ``axis`` stands for; te IterVars of the op map to its root axes."""
        if not isinstance(axis, AxisHandle):
            roots = list(self.origin.axis) + list(self.origin.reduce_axis)
            position = next((i for i, iv in enumerate(roots) if iv is axis), None)
            if position is None:
                raise ScheduleError(f"{primitive} on stage {self.op.name!r}: {axis!r} is not "
                                    "an axis of this stage; use s[C].op.axis, "
                                    "s[C].op.reduce_axis or what split/fuse returned")
            axis = (list(self.op.axis) + list(self.op.reduce_axis))[position]
        if axis not in self.leaves:
            names = [h.name for h in self.leaves]
            raise ScheduleError(f"{primitive} on stage {self.op.name!r}: axis {axis.name!r} "
                                f"is not a current loop of the stage (it was split or fused "
                                f"already); the loops are {names}")
        return axis

    def _record(self, kind: str, *args) -> None:
        self.schedule._steps.append((kind, self, args))

    # -- loops ------------------------------------------------------------------------------
    def split(self, parent, factor=None, nparts=None):
        """Split ``parent`` into ``(outer, inner)`` by ``factor`` (inner extent) or
        ``nparts`` (outer extent); a factor that does not divide adds a predicate.

        >>> xo, xi = s[C].split(x, factor=32)
        """
        if (factor is None) == (nparts is None):
            raise ScheduleError(f"split on stage {self.op.name!r}: give exactly one of "
                                f"factor= and nparts=, found factor={factor}, nparts={nparts}")
        parent = self._leaf(parent, "split")
        if factor is not None:
            inner_extent, outer_extent = int(factor), _ceildiv(parent.extent, int(factor))
        else:
            outer_extent, inner_extent = int(nparts), _ceildiv(parent.extent, int(nparts))
        outer = AxisHandle(parent.name + ".outer", outer_extent, parent.kind)
        inner = AxisHandle(parent.name + ".inner", inner_extent, parent.kind)
        position = self.leaves.index(parent)
        self.leaves[position:position + 1] = [outer, inner]
        self._record("split", parent, factor, nparts, outer, inner)
        return outer, inner

    def tile(self, x_parent, y_parent, x_factor, y_factor):
        """Split two axes and order them ``(x_outer, y_outer, x_inner, y_inner)``."""
        xo, xi = self.split(x_parent, factor=x_factor)
        yo, yi = self.split(y_parent, factor=y_factor)
        self.reorder(xo, yo, xi, yi)
        return xo, yo, xi, yi

    def fuse(self, *args):
        """Fuse adjacent loops (outermost first) into one; returns it."""
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        axes = [self._leaf(a, "fuse") for a in args]
        positions = [self.leaves.index(a) for a in axes]
        if positions != list(range(positions[0], positions[0] + len(axes))):
            raise ScheduleError(f"fuse on stage {self.op.name!r}: loops "
                                f"{[a.name for a in axes]} are not adjacent, outermost first; "
                                f"the loops are {[h.name for h in self.leaves]}")
        kinds = {a.kind for a in axes}
        extent = 1
        for a in axes:
            extent = None if extent is None or a.extent is None else extent * a.extent
        fused = AxisHandle(".".join(a.name for a in axes) + ".fused", extent,
                           kinds.pop() if len(kinds) == 1 else "mixed")
        self.leaves[positions[0]:positions[-1] + 1] = [fused]
        self._record("fuse", axes, fused)
        return fused

    def reorder(self, *args):
        """Put the given loops, in this order, into the positions they occupy."""
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        axes = [self._leaf(a, "reorder") for a in args]
        for position, axis in zip(sorted(self.leaves.index(a) for a in axes), axes):
            self.leaves[position] = axis
        self._record("reorder", axes)

    def vectorize(self, var):
        self._record("vectorize", self._leaf(var, "vectorize"))

    def parallel(self, var):
        self._record("parallel", self._leaf(var, "parallel"))

    def unroll(self, var):
        self._record("unroll", self._leaf(var, "unroll"))

    # -- placement --------------------------------------------------------------------------
    def compute_at(self, parent: "Stage", scope):
        """Compute this stage inside loop ``scope`` of stage ``parent``.

        >>> s[CC].compute_at(s[C], xo)
        """
        if not isinstance(parent, Stage):
            raise ScheduleError(f"compute_at on stage {self.op.name!r}: expected a stage "
                                f"(s[C]), found {type(parent).__name__}")
        if self.leaves != list(self.op.axis) + list(self.op.reduce_axis):
            raise ScheduleError(f"compute_at on stage {self.op.name!r}: the stage's loops "
                                "were split, fused or reordered already; call compute_at "
                                "first (TensorIR builds new loops for the moved stage)")
        self._record("compute_at", parent, parent._leaf(scope, "compute_at"))
        self.attached = True

    def compute_inline(self):
        """Substitute this stage's expression into its consumers."""
        self._record("compute_inline")

    def __repr__(self) -> str:
        return f"stage({self.op.name}, leaves={[h.name for h in self.leaves]})"


class Schedule:
    """A te schedule: ``s[tensor]`` is the stage of the tensor's op (see module docs)."""

    def __init__(self, outputs):
        tensors = [t for op in outputs for t in op.outputs]
        self.outputs = tuple(outputs)
        self._steps: list = []
        self._stages: dict = {}              # id(op) -> Stage
        for op in _topological_order(tensors):
            if isinstance(op, ComputeOp):
                self._stages[id(op)] = Stage(self, op)

    @property
    def stages(self) -> list:
        return list(self._stages.values())

    def __getitem__(self, item) -> Stage:
        op = item.op if isinstance(item, (Tensor, CacheTensor)) else item
        stage = self._stages.get(id(op))
        if stage is not None:
            return stage
        if isinstance(op, PlaceholderOp):
            raise ScheduleError(f"s[{op.name}]: {op.name!r} is a placeholder (an input); only "
                                "computed tensors have stages")
        name = getattr(op, "name", op)
        raise ScheduleError(f"s[...]: {name!r} is not computed by this schedule's outputs; "
                            f"its stages are {[s.op.name for s in self.stages]}")

    def cache_write(self, tensor, scope: str) -> CacheTensor:
        """Compute ``tensor`` into a ``scope`` buffer, then copy it out.

        Returns the cache tensor ``CC``: ``s[CC]`` computes (and keeps the reduction),
        ``s[tensor]`` becomes the copy, with fresh axes ``s[tensor].op.axis``.

        >>> CC = s.cache_write(C, "global")
        >>> s[CC].compute_at(s[C], xo)
        """
        stage = self[tensor]
        if any(step[1] is stage for step in self._steps):
            raise ScheduleError(f"cache_write({stage.op.name}): call it before any other "
                                "step on the stage")
        op = stage.origin
        cache = Stage(self, op, name=f"{stage.op.name}.{scope}", suffix=".c")
        stage.op = StageOp(stage.op.name, [AxisHandle(iv.var.name, _extent_of(iv), "data_par")
                                           for iv in op.axis], (), op.output(0))
        stage.leaves = list(stage.op.axis)
        self._stages[id(cache.op)] = cache
        self._steps.append(("cache_write", stage, (cache, scope)))
        return CacheTensor(cache, op.output(0))

    # -- lowering ---------------------------------------------------------------------------
    def to_tir_schedule(self, args):
        """A ``tir.Schedule`` of ``te.create_prim_func(args)`` with every step replayed."""
        from ..tir.schedule import Schedule as TIRSchedule
        tensors = [a for a in args if isinstance(a, Tensor)]
        computes = [op for op in _topological_order(tensors) if isinstance(op, ComputeOp)]
        names = dict(zip(map(id, computes), _unique_block_names(computes)))
        sch = TIRSchedule(create_prim_func(args))
        replay = _Replay(sch)
        for stage in self._stages.values():
            if id(stage.origin) in names and stage.op.name == stage.origin.name:
                replay.open_stage(stage, names[id(stage.origin)])
        for kind, stage, step_args in self._steps:
            replay.step(kind, stage, step_args)
        replay.decompose_reductions([s for s in self.stages if s not in replay.inlined])
        return sch

    def to_prim_func(self, args, name: str = "main"):
        """The scheduled PrimFunc, with ``global_symbol`` set to ``name``."""
        func = self.to_tir_schedule(args).mod["main"]
        return func.with_attr("global_symbol", name) if name != "main" else func

    def __repr__(self) -> str:
        return f"te.Schedule(stages={[s.op.name for s in self.stages]})"


class _Replay:
    """Recorded steps applied to a ``tir.Schedule``: handles -> LoopRV, stages -> BlockRV."""

    def __init__(self, sch):
        self.sch, self.loops, self.blocks, self.inlined = sch, {}, {}, set()

    def open_stage(self, stage: Stage, block_name: str) -> None:
        block = self.sch.get_block(block_name)
        self.blocks[stage] = block
        self._bind(list(stage.op.axis) + list(stage.op.reduce_axis), self.sch.get_loops(block))

    def _bind(self, handles, loops) -> None:
        for handle, loop in zip(handles, loops[len(loops) - len(handles):]):
            self.loops[handle] = loop

    def _loop(self, handle):
        return self.loops[handle]

    def step(self, kind: str, stage: Stage, args) -> None:
        getattr(self, "_" + kind)(stage, *args)

    def _split(self, stage, parent, factor, nparts, outer, inner):
        factors = [None, int(factor)] if factor is not None else [int(nparts), None]
        self._bind([outer, inner], self.sch.split(self._loop(parent), factors))

    def _fuse(self, stage, axes, fused):
        self.loops[fused] = self.sch.fuse(*[self._loop(a) for a in axes])

    def _reorder(self, stage, axes):
        if len(axes) > 1:
            self.sch.reorder(*[self._loop(a) for a in axes])

    def _vectorize(self, stage, axis):
        self.sch.vectorize(self._loop(axis))

    def _parallel(self, stage, axis):
        self.sch.parallel(self._loop(axis))

    def _unroll(self, stage, axis):
        self.sch.unroll(self._loop(axis))

    def _compute_at(self, stage, parent, scope):
        block = self.blocks[stage]
        self.sch.compute_at(block, self._loop(scope), preserve_unit_loops=True)
        self._bind(list(stage.op.axis) + list(stage.op.reduce_axis), self.sch.get_loops(block))

    def _compute_inline(self, stage):
        self.sch.compute_inline(self.blocks[stage])
        self.inlined.add(stage)

    def _cache_write(self, stage, cache: Stage, scope: str):
        block = self.blocks[stage]
        copy = self.sch.cache_write(block, 0, scope)
        roots = list(cache.op.axis) + list(cache.op.reduce_axis)
        self._bind(roots, self.sch.get_loops(block))
        self.blocks[cache], self.blocks[stage] = block, copy
        self._bind(list(stage.op.axis), self.sch.get_loops(copy))

    def decompose_reductions(self, stages) -> None:
        """Initialise each reduction before its outermost reduction loop, as TE does.

        TensorIR refuses that for a block under a predicate (a non-dividing split of a
        reduction axis); the block then keeps its ``T.init()``, which lowering turns
        into a test on the first reduction iteration: slower, equally correct."""
        for stage in stages:
            if stage not in self.blocks or not stage.op.reduce_axis:
                continue
            first = next((h for h in stage.leaves if h.kind != "data_par"), None)
            if first is not None:
                try:
                    self.sch.decompose_reduction(self.blocks[stage], self._loop(first))
                except ScheduleError:
                    pass


def create_schedule(ops) -> Schedule:
    """A te schedule of the compute ops that ``ops`` (an op or a list of ops) need.

    >>> s = te.create_schedule(C.op)
    >>> s[C].op.axis
    (iter_var(i, range(min=0, ext=128)), iter_var(j, range(min=0, ext=128)))
    """
    ops = [ops] if isinstance(ops, Operation) else list(ops)
    ops = [op.op if isinstance(op, Tensor) else op for op in ops]
    return Schedule(ops)
