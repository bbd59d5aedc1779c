"""One state of a schedule being explored: a Schedule plus the handles that name its
loops and blocks, and (computed on first use) its script and loop tree.

``state.apply("split", loop="j", factors=[None, 4])`` returns a *new* state and leaves
this one untouched: it copies the Schedule first, so a refused primitive (ScheduleError)
simply drops the copy.

Names become handles the way a learner would write them: the first time a loop is
named, ``get_block`` on a block below it and ``get_loops`` on that block; later steps
reuse the handles, so the trace reads like hand-written schedule code::

    b0 = sch.get_block(name="Y", func_name="main")
    l1, l2, l3 = sch.get_loops(block=b0)
    l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True)
"""
from __future__ import annotations

from mlcbench.ir import ScheduleError
from mlcbench.tir import BlockRV, LoopRV, Schedule, Trace

from .loop_tree import LoopTree
from .primitives import BLOCK, BLOCK_OR_LOOP, LOOP, LOOPS, lookup

__all__ = ["ExplorerState", "pick_function", "replay_steps"]

# Instructions that look something up, sample a value or mark a phase: a replayed step
# folds them into the next instruction that changes the program.
_QUIET = {"get_block", "get_loops", "get_child_blocks", "get_producers", "get_consumers",
          "sample_perfect_tile", "sample_categorical", "sample_compute_location",
          "enter_postproc"}


def pick_function(mod, func_name: str | None) -> str:
    """The PrimFunc to explore: ``func_name``, else the only one, else ``"main"``."""
    names = [gv.name_hint for gv, func in mod.items() if getattr(func, "ir_level", "") == "tir"]
    if func_name is not None:
        if func_name not in names:
            raise ScheduleError(f"no PrimFunc {func_name!r} in the module; it has {names}")
        return func_name
    if len(names) == 1:
        return names[0]
    if "main" in names:
        return "main"
    raise ScheduleError(f"the module has PrimFuncs {names}; pass func_name= to choose one")


class ExplorerState:
    """A Schedule with name -> handle maps; treat it as immutable."""

    def __init__(self, schedule: Schedule, func_name: str, loop_rvs=None, block_rvs=None):
        self.schedule = schedule
        self.func_name = func_name
        self._loop_rvs: dict = dict(loop_rvs or {})     # loop Var -> LoopRV
        self._block_rvs: dict = dict(block_rvs or {})   # block name -> BlockRV
        self._script: str | None = None
        self._tree: LoopTree | None = None

    @staticmethod
    def initial(mod_or_func, func_name: str | None = None) -> "ExplorerState":
        schedule = Schedule(mod_or_func)
        name = pick_function(schedule.mod, func_name)
        schedule.work_on(name)
        return ExplorerState(schedule, name)

    # -- views (computed once) ----------------------------------------------------------
    @property
    def mod(self):
        return self.schedule.mod

    @property
    def func(self):
        return self.schedule.mod[self.func_name]

    @property
    def script(self) -> str:
        """TVMScript of the explored function."""
        if self._script is None:
            self._script = self.func.script()
        return self._script

    @property
    def tree(self) -> LoopTree:
        if self._tree is None:
            self._tree = LoopTree.from_func(self.func, self.func_name, self.script)
        return self._tree

    @property
    def trace(self):
        return self.schedule.trace

    # -- applying a primitive -----------------------------------------------------------
    def apply(self, primitive: str, **kwargs) -> "ExplorerState":
        """The state after ``primitive``; raises ScheduleError (this state unchanged)."""
        spec = lookup(primitive)
        kwargs = spec.check(kwargs)
        new = ExplorerState(self.schedule.copy(), self.func_name, self._loop_rvs,
                            self._block_rvs)
        args, call_kwargs = [], {}
        for param in spec.params:
            if param.name not in kwargs:
                continue
            value = new._resolve(param.kind, kwargs[param.name], self.tree)
            if param.star:
                args.extend(value)
            else:
                call_kwargs[param.name] = value
        result = getattr(new.schedule, primitive)(*args, **call_kwargs)
        new._refresh_handles(result)
        return new

    def _resolve(self, kind: str, value, tree: LoopTree):
        if kind == LOOP:
            return self._loop_rv(tree, value)
        if kind == LOOPS:
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",")]
            return [self._loop_rv(tree, v) for v in value]
        if kind == BLOCK:
            return self._block_rv(tree, value)
        if kind == BLOCK_OR_LOOP:
            is_block = isinstance(value, str) and tree.has_block(value)
            return self._block_rv(tree, value) if is_block else self._loop_rv(tree, value)
        return value

    def _block_rv(self, tree: LoopTree, name) -> BlockRV:
        if not isinstance(name, str):
            raise ScheduleError(f"a block is named by a string as printed, found {name!r}")
        tree.block(name)                     # a helpful error when there is no such block
        if name not in self._block_rvs:
            self._block_rvs[name] = self.schedule.get_block(name, func_name=self.func_name)
        return self._block_rvs[name]

    def _loop_rv(self, tree: LoopTree, ref) -> LoopRV:
        item = tree.loop(ref)
        if item.var not in self._loop_rvs:
            below = tree.blocks_below(item)
            if not below:
                raise ScheduleError(f"loop {item.ref!r} has no block below it, so no handle "
                                    "can reach it (get_loops starts from a block)")
            for rv in self.schedule.get_loops(self._block_rv(tree, below[0])):
                self._loop_rvs[self.schedule.get(rv).loop_var] = rv
        return self._loop_rvs[item.var]

    def _refresh_handles(self, result) -> None:
        """Register new handles; follow renamed blocks; forget vanished loops and blocks."""
        results = result if isinstance(result, (list, tuple)) else [result]
        block_rvs = list(self._block_rvs.values())
        block_rvs += [rv for rv in results if isinstance(rv, BlockRV)]
        self._block_rvs = {}
        for rv in block_rvs:
            try:
                self._block_rvs[self.schedule.get(rv).name_hint] = rv
            except ScheduleError:
                pass                         # the block was inlined away
        for rv in results:
            if isinstance(rv, LoopRV):
                self._loop_rvs[self.schedule.get(rv).loop_var] = rv
        alive = {row.var for row in self.tree.loops}
        self._loop_rvs = {var: rv for var, rv in self._loop_rvs.items() if var in alive}


def replay_steps(initial: ExplorerState, trace: Trace) -> list[tuple[str, ExplorerState]]:
    """``(label, state)`` per program-changing instruction of ``trace`` replayed on
    ``initial``, lookups and samples folded into the step that uses them; the last
    state holds the whole trace.

    Each state replays its prefix on a fresh schedule, so every step is a schedule a
    learner could have built by hand and every later ``apply`` starts from clean handles.
    """
    lines = trace.as_python()
    steps, end = [], 0
    for k, inst in enumerate(trace.insts):
        last = k == len(trace.insts) - 1
        if inst.kind in _QUIET and not last:
            continue
        schedule = Schedule(initial.mod)
        schedule.work_on(initial.func_name)
        Trace(trace.insts[:k + 1]).apply_to_schedule(schedule)
        state = ExplorerState(schedule, initial.func_name)
        if inst.kind in _QUIET and steps:        # trailing lookups join the last step
            steps[-1] = (steps[-1][0], state)
            continue
        label = lines[k] if k == end else f"{lines[k]}  (+{k - end} lookups)"
        steps.append((f"tuned: {label}", state))
        end = k + 1
    return steps
