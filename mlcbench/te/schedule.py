"""``te.create_schedule``: the schedule of the older TVM tutorials, recorded and replayed
onto a TensorIR :class:`~mlcbench.tir.Schedule`.

A te schedule has one *stage* per compute op. Stage methods (``split``, ``tile``,
``fuse``, ``reorder``, ``vectorize``, ``parallel``, ``unroll``, ``pragma``, ``bind``,
``compute_at``, ``compute_inline``) act on axis handles: the op's axes (``s[C].op.axis``,
``s[C].op.reduce_axis``) and the new axes that ``split`` / ``fuse`` return. Nothing is
transformed while the schedule is written; ``lower`` / ``build`` make the PrimFunc
``te.create_prim_func(args)``, open a ``tir.Schedule`` on it and replay every recorded
step onto the block named after the op and the loops the handles stand for
(:mod:`mlcbench.te.schedule_replay`)::

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
raises surface as a :class:`~mlcbench.ir.errors.ScheduleError` that names the stage and
the step first. ``bind`` records GPU thread axes; building such a schedule for ``llvm``
is refused with the stage and axis named.

Two rules differ from TVM because TensorIR regenerates the loops it moves: a stage must
call ``compute_at`` before splitting, fusing or reordering its own axes, and
``cache_write`` must come before any other step on that stage, ``cache_read`` before
any step on its readers.
"""
from __future__ import annotations

import numbers

from ..ir.errors import ScheduleError
from ..tir.expr import IntImm, Range
from ..tir.stmt import IterVar
from .create_prim_func import _topological_order, _unique_block_names, create_prim_func
from .operation import compute_with_axis_names
from .schedule_replay import Replay, consumers_first
from .tensor import ComputeOp, Operation, PlaceholderOp, Tensor

__all__ = ["Schedule", "Stage", "AxisHandle", "create_schedule"]


class AxisHandle:
    """A loop of a stage: an axis of the op, or one that ``split`` / ``fuse`` made.

    ``dom.extent`` is the loop's extent when it is known (``None`` otherwise), so
    ``cfg.define_split("tile_y", y)`` can read it as in TVM.
    """

    def __init__(self, name: str, extent, kind: str, stage_name: str = ""):
        self.name, self.kind = name, kind            # kind: "data_par", "reduce", "mixed"
        self.stage_name = stage_name                 # the stage whose loop this is
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


# Stage methods of TVM's TE left to TensorIR, with the primitive that does the same.
_TIR_ONLY = {"set_scope": "sch.set_scope(block, 0, scope)",
             "storage_align": "sch.storage_align(block, 0, axis, factor, offset)",
             "tensorize": "sch.tensorize(loop, intrin_name)",
             "double_buffer": "sch.annotate(block, \"double_buffer_scope\", 0)",
             "env_threads": "sch.bind(loop, thread)",
             "set_store_predicate": "a T.where predicate (split with factors=[None, k])",
             "prefetch": "sch.cache_read(block, index, scope) with compute_at"}


class Stage:
    """The loops of one compute op and the steps recorded on them."""

    def __init__(self, schedule: "Schedule", op: ComputeOp, name: str | None = None,
                 suffix: str = ""):
        self.schedule, self.origin = schedule, op
        name = name or op.name
        axis = [AxisHandle(iv.var.name + suffix, _extent_of(iv), "data_par", name)
                for iv in op.axis]
        reduce = [AxisHandle(iv.var.name + suffix, _extent_of(iv), "reduce", name)
                  for iv in op.reduce_axis]
        self.op = StageOp(name, axis, reduce, op.output(0))
        self.leaves = axis + reduce
        self.attached = False
        self.reads = {id(t.op) for t in op.input_tensors}   # ops whose tensors it reads now

    def root_axes(self) -> list:
        return list(self.op.axis) + list(self.op.reduce_axis)

    @property
    def leaf_iter_vars(self) -> tuple:
        """The stage's loops, outermost first, as the recorded steps leave them."""
        return tuple(self.leaves)

    # -- lookup -----------------------------------------------------------------------------
    def _leaf(self, axis, primitive: str) -> AxisHandle:
        """The handle ``axis`` stands for; te IterVars of the op map to its root axes."""
        where = f"{primitive} on stage {self.op.name!r}"
        if not isinstance(axis, AxisHandle):
            position = next((i for i, iv in enumerate(list(self.origin.axis)
                                                       + list(self.origin.reduce_axis))
                             if iv is axis), None)
            if position is None:
                raise ScheduleError(f"{where}: expected an axis of this stage "
                                    "(s[C].op.axis, s[C].op.reduce_axis or what split/fuse "
                                    f"returned), found {self.schedule._axis_owner(axis)}")
            axis = self.root_axes()[position]
        if axis.stage_name != self.op.name:
            raise ScheduleError(f"{where}: axis {axis.name!r} is a loop of stage "
                                f"{axis.stage_name!r}; use s[{axis.stage_name}].{primitive} "
                                f"or an axis of {self.op.name!r}")
        if axis not in self.leaves:
            names = [h.name for h in self.leaves]
            raise ScheduleError(f"{where}: axis {axis.name!r} is not a current loop of the "
                                f"stage (it was split or fused already); the loops are {names}")
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
        factor, nparts = (v.value if isinstance(v, IntImm) else v for v in (factor, nparts))
        given = factor if factor is not None else nparts
        if isinstance(given, bool) or not isinstance(given, numbers.Integral) or given < 1:
            raise ScheduleError(f"split on stage {self.op.name!r}: expected a positive int "
                                f"factor/nparts, found {given!r}")
        factor, nparts = (None if v is None else int(v) for v in (factor, nparts))
        parent = self._leaf(parent, "split")
        if factor is not None:
            inner_extent, outer_extent = factor, _ceildiv(parent.extent, factor)
        else:
            outer_extent, inner_extent = nparts, _ceildiv(parent.extent, nparts)
        outer = AxisHandle(parent.name + ".outer", outer_extent, parent.kind, self.op.name)
        inner = AxisHandle(parent.name + ".inner", inner_extent, parent.kind, self.op.name)
        position = self.leaves.index(parent)
        self.leaves[position:position + 1] = [outer, inner]
        self._record("split", parent, factor, nparts, outer, inner)
        return outer, inner

    def tile(self, x_parent, y_parent, x_factor, y_factor):
        """Split two axes and order them ``(x_outer, y_outer, x_inner, y_inner)``."""
        self._leaf(x_parent, "tile"), self._leaf(y_parent, "tile")
        xo, xi = self.split(x_parent, factor=x_factor)
        yo, yi = self.split(y_parent, factor=y_factor)
        self.reorder(xo, yo, xi, yi)
        return xo, yo, xi, yi

    def fuse(self, *args):
        """Fuse adjacent loops (outermost first) into one; returns it."""
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        axes = [self._leaf(a, "fuse") for a in args]
        if len(axes) < 2:           # as in TVM, one loop fuses to itself
            if not axes:
                raise ScheduleError(f"fuse on stage {self.op.name!r}: expected the loops to "
                                    "fuse, found none")
            return axes[0]
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
                           kinds.pop() if len(kinds) == 1 else "mixed", self.op.name)
        self.leaves[positions[0]:positions[-1] + 1] = [fused]
        self._record("fuse", axes, fused)
        return fused

    def reorder(self, *args):
        """Put the given loops, in this order, into the positions they occupy."""
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        axes = [self._leaf(a, "reorder") for a in args]
        if len(set(axes)) != len(axes):
            raise ScheduleError(f"reorder on stage {self.op.name!r}: each loop once, found "
                                f"{[a.name for a in axes]}")
        for position, axis in zip(sorted(self.leaves.index(a) for a in axes), axes):
            self.leaves[position] = axis
        self._record("reorder", axes)

    def vectorize(self, var):
        self._record("vectorize", self._leaf(var, "vectorize"))

    def parallel(self, var):
        self._record("parallel", self._leaf(var, "parallel"))

    def unroll(self, var):
        self._record("unroll", self._leaf(var, "unroll"))

    def bind(self, ivar, thread_ivar):
        """Bind a loop to a GPU thread axis: ``s[C].bind(bx, te.thread_axis("blockIdx.x"))``.

        Recorded for GPU targets; building for ``llvm`` refuses it, naming the loop."""
        tag = thread_ivar if isinstance(thread_ivar, str) else getattr(thread_ivar,
                                                                       "thread_tag", "")
        if not tag:
            raise ScheduleError(f"bind on stage {self.op.name!r}: expected a thread axis "
                                "(te.thread_axis(\"threadIdx.x\")), found "
                                f"{type(thread_ivar).__name__} {thread_ivar!r}")
        self._record("bind", self._leaf(ivar, "bind"), tag)

    def pragma(self, var, pragma_type: str, pragma_value=None):
        """Annotate a loop: ``"unroll"`` and ``"vectorize"`` act as those steps; any other
        key becomes the loop annotation ``pragma_<key>`` (value 1 when none is given),
        e.g. ``s[C].pragma(xo, "auto_unroll_max_step", 16)``."""
        if pragma_type in ("unroll", "vectorize"):
            getattr(self, pragma_type)(var)
            return
        if not isinstance(pragma_type, str) or not pragma_type.isidentifier():
            raise ScheduleError(f"pragma on stage {self.op.name!r}: expected a pragma name "
                                f"such as \"auto_unroll_max_step\", found {pragma_type!r}")
        value = 1 if pragma_value is None else pragma_value
        self._record("pragma", self._leaf(var, "pragma"), pragma_type, value)

    # -- placement --------------------------------------------------------------------------
    def compute_at(self, parent: "Stage", scope):
        """Compute this stage inside loop ``scope`` of stage ``parent``.

        >>> s[CC].compute_at(s[C], xo)
        """
        if not isinstance(parent, Stage):
            raise ScheduleError(f"compute_at on stage {self.op.name!r}: expected a stage "
                                f"(s[C]), found {type(parent).__name__}")
        if self.leaves != self.root_axes():
            raise ScheduleError(f"compute_at on stage {self.op.name!r}: the stage's loops "
                                "were split, fused or reordered already; call compute_at "
                                "first (TensorIR builds new loops for the moved stage)")
        self._record("compute_at", parent, parent._leaf(scope, "compute_at"))
        self.attached = True

    def compute_inline(self):
        """Substitute this stage's expression into its consumers."""
        self._record("compute_inline")

    def compute_root(self):
        """Compute the stage at the root: where every stage starts out."""
        if self.attached:
            raise ScheduleError(f"compute_root on stage {self.op.name!r}: the stage was "
                                "moved by compute_at already; leave out that compute_at")

    def __getattr__(self, name: str):
        if name in _TIR_ONLY:
            raise ScheduleError(f"s[{self.op.name}].{name} of the older TE API is not "
                                f"replayed here; {_TIR_ONLY[name]} on "
                                "s.to_tir_schedule(args) does it in TensorIR")
        raise AttributeError(f"te stage has no attribute {name!r}")

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

    def rfactor(self, tensor, axis, factor_axis: int = 0):
        """Not replayed: a te rfactor changes the stage's axes in ways TensorIR's
        ``sch.rfactor`` names differently; refused with the TensorIR spelling."""
        raise ScheduleError(f"s.rfactor({self[tensor].op.name}, ...) of the older TE API is "
                            "not replayed here; sch.rfactor(loop, factor_axis) on "
                            "s.to_tir_schedule(args) does it in TensorIR")

    def normalize(self) -> "Schedule":
        """The schedule itself: loops start at zero already (TVM's ``s.normalize()``)."""
        return self

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

    def _axis_owner(self, axis) -> str:
        """How an axis that no stage method accepted reads in an error message."""
        for stage in self.stages:
            if any(iv is axis for iv in stage.origin.axis + stage.origin.reduce_axis):
                return f"axis {axis.var.name!r} of stage {stage.op.name!r}"
        if isinstance(axis, IterVar):
            return f"axis {axis.var.name!r}, which no compute of this schedule uses"
        return f"{type(axis).__name__} {axis!r}"

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
        stage.op = StageOp(stage.op.name, [AxisHandle(iv.var.name, _extent_of(iv), "data_par",
                                                      stage.op.name) for iv in op.axis],
                           (), op.output(0))
        stage.leaves, stage.reads = list(stage.op.axis), set()
        self._stages[id(cache.op)] = cache
        self._steps.append(("cache_write", stage, (cache, scope)))
        return CacheTensor(cache, op.output(0))

    def cache_read(self, tensor, scope: str, readers) -> Tensor:
        """Copy ``tensor`` into a ``scope`` buffer that ``readers`` (stages' tensors) read.

        Returns the cache tensor: ``s[AA]`` is the copy stage, whole at the start until
        ``s[AA].compute_at(s[CC], ko)`` moves it next to its use.

        >>> AA = s.cache_read(A, "local", [CC])
        """
        if not isinstance(tensor, Tensor):
            raise ScheduleError(f"cache_read: expected a te tensor to copy, found "
                                f"{type(tensor).__name__} {tensor!r}")
        readers = [readers] if isinstance(readers, (Tensor, CacheTensor)) else list(readers)
        stages = [self[reader] for reader in readers]
        if not stages:
            raise ScheduleError(f"cache_read({tensor.op.name}, {scope!r}): give the stages "
                                "that read it, e.g. [C]")
        for stage in stages:
            if id(tensor.op) not in stage.reads:
                raise ScheduleError(f"cache_read({tensor.op.name}, {scope!r}): stage "
                                    f"{stage.op.name!r} does not read {tensor.op.name!r}")
        op = compute_with_axis_names(tensor.shape, lambda *i: tensor[i],
                                     [f"ax{d}" for d in range(len(tensor.shape))],
                                     name=f"{tensor.op.name}.{scope}").op
        cache = self._stages[id(op)] = Stage(self, op)
        for stage in stages:
            stage.reads = (stage.reads - {id(tensor.op)}) | {id(op)}
        self._steps.append(("cache_read", cache, (tensor.op.name, scope, stages)))
        return op.output(0)

    # -- lowering ---------------------------------------------------------------------------
    def to_tir_schedule(self, args):
        """A ``tir.Schedule`` of ``te.create_prim_func(args)`` with every step replayed."""
        from ..tir.schedule import Schedule as TIRSchedule
        tensors = [a for a in args if isinstance(a, Tensor)]
        computes = [op for op in _topological_order(tensors) if isinstance(op, ComputeOp)]
        names = dict(zip(map(id, computes), _unique_block_names(computes)))
        sch = TIRSchedule(create_prim_func(args))
        replay = Replay(sch)
        for stage in self._stages.values():
            if id(stage.origin) in names and stage.op.name == stage.origin.name:
                replay.open_stage(stage, names[id(stage.origin)])
        for kind, stage, step_args in consumers_first(self._steps):
            replay.step(kind, stage, step_args)
        replay.decompose_reductions(self.stages)
        return sch

    def to_prim_func(self, args, name: str = "main"):
        """The scheduled PrimFunc, with ``global_symbol`` set to ``name``."""
        func = self.to_tir_schedule(args).mod["main"]
        return func.with_attr("global_symbol", name) if name != "main" else func

    def thread_bindings(self) -> list:
        """``(stage, axis, thread tag)`` of every ``bind`` step."""
        return [(stage.op.name, args[0].name, args[1])
                for kind, stage, args in self._steps if kind == "bind"]

    def refuse_thread_bindings(self) -> None:
        """Refuse a schedule with ``bind`` steps where the code is for the CPU."""
        for stage, axis, tag in self.thread_bindings():
            raise ScheduleError(f"stage {stage!r} binds axis {axis!r} to {tag!r}: thread "
                                "bindings run on a GPU, and lower/build compile for the CPU "
                                f"(target llvm). On the CPU use s[{stage}].parallel({axis}); "
                                "s.to_tir_schedule(args).mod shows the bound loops")

    def __repr__(self) -> str:
        return f"te.Schedule(stages={[s.op.name for s in self.stages]})"


def create_schedule(ops) -> Schedule:
    """A te schedule of the compute ops that ``ops`` (an op or a list of ops) need.

    >>> s = te.create_schedule(C.op)
    >>> s[C].op.axis
    (iter_var(i, range(min=0, ext=128)), iter_var(j, range(min=0, ext=128)))
    """
    ops = [ops] if isinstance(ops, Operation) else list(ops)
    ops = [op.op if isinstance(op, Tensor) else op for op in ops]
    return Schedule(ops)
