"""The Schedule: a recording facade over pure primitives.

``Schedule`` is the facade; its ``state`` (a ``ScheduleState``, see ``state.py``) holds
the current IRModule, the recorded instructions, the handle table and the random
state. Handles (BlockRV / LoopRV / ExprRV) are resolved against the current IR on
every call:

* a ``BlockRV`` is ``(function name, block name)`` -- block names are unique within a
  function and survive every primitive that keeps the block (``decompose_reduction``
  renames the block to ``<name>_update`` and the handle follows it);
* a ``LoopRV`` is ``(function name, loop Var)`` -- loop vars are binders compared by
  identity, kept by primitives that keep the loop (reorder, parallel, annotate, ...)
  and replaced by those that make new loops (split, fuse): a handle to a loop that
  no longer exists raises ScheduleError;
* an ``ExprRV`` is the integer a sampling primitive chose.

Each primitive runs on the current function and commits the result only when it
succeeded, so a refused primitive leaves ``sch.mod`` and ``sch.trace`` untouched; what
it committed on the way (the ``get_block`` of a block given by name) is rolled back.

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

from ...ir.errors import ScheduleError
from ...ir.module import IRModule
from ..function import PrimFunc
from .errors import RENDER_LEVELS, render_at
from .state import ScheduleState
from .trace import BlockRV, ExprRV, LoopRV, Trace
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
        self.state = ScheduleState(mod, seed)
        self.debug_mask = debug_mask

    # -- state --------------------------------------------------------------------------
    @property
    def mod(self) -> IRModule:
        return self.state.mod

    @property
    def trace(self) -> Trace:
        return self.state.trace()

    def copy(self) -> "Schedule":
        """An independent schedule with the same IR, trace and handles."""
        other = Schedule.__new__(Schedule)
        other.state = self.state.copy()
        other.debug_mask = self.debug_mask
        other._error_render_level = self._error_render_level
        return other

    def seed(self, seed: int) -> None:
        self.state.seed(seed)

    def fork_seed(self) -> int:
        return self.state.fork_seed()

    def work_on(self, func_name: str) -> None:
        self.state.working_on = func_name

    def show(self, style: str | None = None) -> None:
        self.mod.show(style)
        print(self.trace)

    def get(self, rv):
        """The current For / Block node of a handle, or the int of an ExprRV."""
        if isinstance(rv, ExprRV):
            return self.state.value(rv, "get")
        if isinstance(rv, BlockRV):
            return self.state.block(rv, "get")[1].node.block
        if isinstance(rv, LoopRV):
            return self.state.loop_node(rv, "get")
        raise ScheduleError(f"get: expected a BlockRV, LoopRV or ExprRV, found {rv!r}")

    def remove_rv(self, rv) -> None:
        self.state.remove_rv(rv)

    def enter_postproc(self) -> None:
        """Mark where postprocessing starts: ``trace.apply_to_schedule(sch,
        remove_postproc=True)`` replays only the instructions before this mark."""
        self.state.commit(None, None, "enter_postproc")


def _transactional(method):
    """``method`` undone when refused, its ScheduleErrors read at the schedule's
    error_render_level."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        mark = self.state.checkpoint()
        try:
            return method(self, *args, **kwargs)
        except Exception as err:
            self.state.roll_back(mark)
            if isinstance(err, ScheduleError):
                render_at(err, self._error_render_level)
            raise
    return wrapper


# every public method, wherever its mixin defines it, is undone when refused and raises at
# the schedule's level: one place instead of a try in each primitive's facade
for _name, _method in inspect.getmembers(Schedule, inspect.isfunction):
    if not _name.startswith("_"):
        setattr(Schedule, _name, _transactional(_method))
