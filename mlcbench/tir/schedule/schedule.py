"""The Schedule: a recording facade over pure primitives.

``Schedule`` holds the current IRModule, a random state and a Trace. Handles
(BlockRV / LoopRV / ExprRV) are resolved against the current IR on every call:

* a ``BlockRV`` is ``(function name, block name)`` -- block names are unique within a
  function and survive every primitive that keeps the block (``decompose_reduction``
  renames the block to ``<name>_update`` and the handle follows it);
* a ``LoopRV`` is ``(function name, loop Var)`` -- loop vars are binders compared by
  identity, kept by primitives that keep the loop (reorder, parallel, annotate, ...)
  and replaced by those that make new loops (split, fuse): a handle to a loop that
  no longer exists raises ScheduleError;
* an ``ExprRV`` is the integer a sampling primitive chose.

Each primitive runs on the current function and commits the result only when it
succeeded, so a refused primitive leaves ``sch.mod`` and ``sch.trace`` untouched.

Example::

    sch = Schedule(MyModule)
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    print(sch.trace)
"""
from __future__ import annotations

import functools
import inspect
import random

from ...ir.errors import ScheduleError
from ...ir.module import IRModule
from ..function import PrimFunc
from ..stmt import Block, BlockRealize, For
from .errors import RENDER_LEVELS, render_at
from .ir_utils import find_block, find_loop
from .trace import BlockRV, ExprRV, Instruction, LoopRV, RandomVariable, Trace
from .facade_compute import ComputeLocationMixin
from .facade_loops import AnnotateMixin, LookupMixin, LoopMixin
from .facade_sampling import SamplingMixin
from .facade_layout import LayoutMixin
from .facade_location import LocationSamplingMixin


class Schedule(LookupMixin, LoopMixin, AnnotateMixin, LocationSamplingMixin,
               ComputeLocationMixin, SamplingMixin, LayoutMixin):
    """Schedule ``mod`` (an IRModule or a PrimFunc, which becomes ``"main"``).

    ``error_render_level`` says what a refused primitive's ScheduleError reads, as in
    TVM: ``"detail"`` the rule and the function with the offending loops and blocks
    marked, ``"fast"`` the rule only, ``"none"`` no message. ``enable_check=False``
    (TVM's way to skip some prerequisite checks) is refused: every primitive here checks
    its preconditions, so that a schedule never produces a wrong program.
    """

    def __init__(self, mod, seed: int | None = None, debug_mask="all",
                 error_render_level="detail", enable_check: bool = True):
        if isinstance(mod, PrimFunc):
            mod = IRModule({"main": mod})
        if not isinstance(mod, IRModule):
            raise ScheduleError(f"Schedule expects an IRModule or a PrimFunc, found "
                                f"{type(mod).__name__}")
        if error_render_level not in RENDER_LEVELS:
            raise ScheduleError(f"Schedule: error_render_level must be one of "
                                f"{list(RENDER_LEVELS)}, found {error_render_level!r}")
        if enable_check is not True:
            raise ScheduleError(f"Schedule: enable_check={enable_check!r} is not supported; "
                                "the primitives always check their preconditions (a "
                                "skipped check could produce a wrong program)")
        self._error_render_level = error_render_level
        self._mod = mod.copy()
        self._insts: list[Instruction] = []
        self._rvs: dict = {}
        self._rand = random.Random(seed)
        self.debug_mask = debug_mask
        self._work_on = None

    # -- state --------------------------------------------------------------------------
    @property
    def mod(self) -> IRModule:
        return self._mod

    @property
    def trace(self) -> Trace:
        return Trace(self._insts)

    def copy(self) -> "Schedule":
        """An independent schedule with the same IR, trace and handles."""
        other = Schedule.__new__(Schedule)
        other._mod = self._mod.copy()
        other._insts = list(self._insts)
        other._rvs = dict(self._rvs)
        other._rand = random.Random()
        other._rand.setstate(self._rand.getstate())
        other.debug_mask, other._work_on = self.debug_mask, self._work_on
        other._error_render_level = self._error_render_level
        return other

    def seed(self, seed: int) -> None:
        self._rand.seed(seed)

    def fork_seed(self) -> int:
        return self._rand.randrange(1, 2 ** 31 - 1)

    def work_on(self, func_name: str) -> None:
        self._work_on = func_name

    def show(self, style: str | None = None) -> None:
        self._mod.show(style)
        print(self.trace)

    def get(self, rv):
        """The current For / Block node of a handle, or the int of an ExprRV."""
        if isinstance(rv, ExprRV):
            return self._rvs[rv][1]
        if isinstance(rv, BlockRV):
            return self._block(rv, "get")[1].node.block
        if isinstance(rv, LoopRV):
            return self._loop_node(rv, "get")
        raise ScheduleError(f"get: expected a BlockRV, LoopRV or ExprRV, found {rv!r}")

    def remove_rv(self, rv) -> None:
        self._rvs.pop(rv, None)

    def enter_postproc(self) -> None:
        """Mark where postprocessing starts: ``trace.apply_to_schedule(sch,
        remove_postproc=True)`` replays only the instructions before this mark."""
        self._commit(None, None, "enter_postproc")

    # -- resolution ---------------------------------------------------------------------
    def _default_func(self) -> str:
        names = [gv.name_hint for gv in self._mod.get_global_vars()]
        if self._work_on is not None:
            return self._work_on
        if len(names) == 1:
            return names[0]
        if "main" in names:
            return "main"
        raise ScheduleError(f"the module has functions {sorted(names)}; pass func_name=")

    def _entry(self, rv, kind, primitive):
        entry = self._rvs.get(rv) if isinstance(rv, RandomVariable) else None
        if entry is None or entry[0] != kind:
            raise ScheduleError(f"{primitive}: expected a {kind} handle of this schedule, "
                                f"found {rv!r}")
        return entry

    def _block(self, rv, primitive):
        """``(func_name, Located BlockRealize)`` of a BlockRV (or a block name)."""
        if isinstance(rv, str):
            func_name = self._default_func()
            return func_name, find_block(self._mod[func_name], rv, primitive)
        _, func_name, name = self._entry(rv, "block", primitive)
        return func_name, find_block(self._mod[func_name], name, primitive)

    def _loop(self, rv, primitive):
        """``(func_name, loop Var)`` of a LoopRV, checked to be still in the IR."""
        _, func_name, var = self._entry(rv, "loop", primitive)
        find_loop(self._mod[func_name], var, primitive)
        return func_name, var

    def _loop_node(self, rv, primitive) -> For:
        func_name, var = self._loop(rv, primitive)
        return find_loop(self._mod[func_name], var, primitive).node

    def _new_block_rv(self, func_name, name) -> BlockRV:
        rv = BlockRV()
        self._rvs[rv] = ("block", func_name, name)
        return rv

    def _new_loop_rv(self, func_name, var) -> LoopRV:
        rv = LoopRV()
        self._rvs[rv] = ("loop", func_name, var)
        return rv

    def _new_expr_rv(self, value: int) -> ExprRV:
        rv = ExprRV()
        self._rvs[rv] = ("expr", value)
        return rv

    def _value(self, x):
        """Plain value of a split factor / candidate: ExprRVs become their int."""
        if isinstance(x, ExprRV):
            return self._entry(x, "expr", "split")[1]
        if hasattr(x, "value") and not isinstance(x, (int, RandomVariable)):
            return int(x.value)
        return x

    # -- commit -------------------------------------------------------------------------
    def _commit(self, func_name, new_func, kind, inputs=(), attrs=(), outputs=(),
                decision=None) -> None:
        """Install the new function and record the instruction (never fails)."""
        if new_func is not None:
            self._mod = self._mod.with_function(func_name, new_func)
        self._insts.append(Instruction(kind, tuple(inputs), tuple(attrs), tuple(outputs),
                                       decision))


def _rendering_errors(method):
    """``method`` with its ScheduleErrors read at the schedule's error_render_level."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except ScheduleError as err:
            render_at(err, self._error_render_level)
            raise
    return wrapper


# every public method, wherever its mixin defines it, raises at the schedule's level: one
# place instead of a try in each primitive's facade
for _name, _method in inspect.getmembers(Schedule, inspect.isfunction):
    if not _name.startswith("_"):
        setattr(Schedule, _name, _rendering_errors(_method))
