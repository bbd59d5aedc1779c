"""ScheduleState: what a Schedule commits to, behind a small interface.

The state owns four things: the current IRModule, the recorded instructions, the
handle table (what each BlockRV / LoopRV / ExprRV stands for) and the random state
of the sampling primitives. The Schedule's methods (the facade) use only the public
methods below, so every change to the IR and the trace goes through ``commit``::

    func_name, var = state.loop(loop_rv, "split")          # resolve a handle
    new_func, new_vars = loop_prims.split(state.func(func_name), var, factors)
    outs = [state.new_loop_rv(func_name, v) for v in new_vars]
    state.commit(func_name, new_func, "split", inputs=..., outputs=outs)

A primitive resolves its handles and runs the pure transformation first; only when
that succeeded does it make new handles and commit, so a refused primitive changes
nothing here (TVM's ScheduleState plays the same part for its ConcreteSchedule).

The handle table maps each handle to a tuple:

* ``("block", func_name, block_name)`` -- block names are unique within a function;
* ``("loop", func_name, loop_var)`` -- loop vars are binders compared by identity;
* ``("location", func_name, "root" | "inline")`` -- a location drawn by
  ``sample_compute_location`` that is not a loop;
* ``("expr", value)`` -- the integer a sampling primitive chose.
"""
from __future__ import annotations

import random

from ...ir.errors import ScheduleError
from ...ir.module import IRModule
from ..function import PrimFunc
from ..stmt import For
from .ir_utils import find_block, find_loop
from .trace import BlockRV, ExprRV, Instruction, LoopRV, RandomVariable, Trace


class ScheduleState:
    """The module, instructions, handle table and random state of one Schedule."""

    def __init__(self, mod: IRModule, seed: int | None = None):
        self._mod = mod.copy()
        self._insts: list[Instruction] = []
        self._rvs: dict = {}
        self._rand = random.Random(seed)
        # the function a block named by a plain string is looked up in (Schedule.work_on)
        self.working_on: str | None = None

    def copy(self) -> "ScheduleState":
        """An independent state: same IR, instructions, handles and random state."""
        other = ScheduleState.__new__(ScheduleState)
        other._mod = self._mod.copy()
        other._insts = list(self._insts)
        other._rvs = dict(self._rvs)
        other._rand = random.Random()
        other._rand.setstate(self._rand.getstate())
        other.working_on = self.working_on
        return other

    # -- the IR and the trace --------------------------------------------------------
    @property
    def mod(self) -> IRModule:
        return self._mod

    def trace(self) -> Trace:
        return Trace(self._insts)

    def func(self, func_name: str, primitive: str = "schedule") -> PrimFunc:
        """The current function ``func_name``."""
        if func_name not in self._mod:
            raise ScheduleError(f"{primitive}: no function {func_name!r} in the module")
        return self._mod[func_name]

    def default_func(self) -> str:
        """The function a block given by name lives in: the one ``working_on``, the only
        one, or ``main``."""
        names = [gv.name_hint for gv in self._mod.get_global_vars()]
        if self.working_on is not None:
            return self.working_on
        if len(names) == 1:
            return names[0]
        if "main" in names:
            return "main"
        raise ScheduleError(f"the module has functions {sorted(names)}; pass func_name=")

    # -- resolving handles -------------------------------------------------------------
    def block(self, rv, primitive: str):
        """``(func_name, Located BlockRealize)`` of a BlockRV (or a block name)."""
        if isinstance(rv, str):
            func_name = self.default_func()
            return func_name, find_block(self._mod[func_name], rv, primitive)
        _, func_name, name = self._entry(rv, "block", primitive)
        return func_name, find_block(self._mod[func_name], name, primitive)

    def loop(self, rv, primitive: str):
        """``(func_name, loop Var)`` of a LoopRV, checked to be still in the IR."""
        _, func_name, var = self._entry(rv, "loop", primitive)
        find_loop(self._mod[func_name], var, primitive)
        return func_name, var

    def loop_node(self, rv, primitive: str) -> For:
        """The current For node of a LoopRV."""
        func_name, var = self.loop(rv, primitive)
        return find_loop(self._mod[func_name], var, primitive).node

    def location(self, rv):
        """``"root"`` or ``"inline"`` for such a drawn location, else None."""
        entry = self._rvs.get(rv) if isinstance(rv, LoopRV) else None
        return entry[2] if entry is not None and entry[0] == "location" else None

    def value(self, x, primitive: str):
        """Plain value of a factor, candidate or annotation: an ExprRV becomes its int,
        a constant node its integer value; anything else is returned as is."""
        if isinstance(x, ExprRV):
            return self._entry(x, "expr", primitive)[1]
        if hasattr(x, "value") and not isinstance(x, (int, RandomVariable)):
            return int(x.value)
        return x

    def _entry(self, rv, kind, primitive):
        entry = self._rvs.get(rv) if isinstance(rv, RandomVariable) else None
        if entry is None or entry[0] != kind:
            raise ScheduleError(f"{primitive}: expected a {kind} handle of this schedule, "
                                f"found {rv!r}")
        return entry

    # -- making and changing handles -----------------------------------------------------
    def new_block_rv(self, func_name: str, name: str) -> BlockRV:
        return self._register(BlockRV(), ("block", func_name, name))

    def new_loop_rv(self, func_name: str, var) -> LoopRV:
        return self._register(LoopRV(), ("loop", func_name, var))

    def new_location_rv(self, func_name: str, where: str) -> LoopRV:
        """A LoopRV standing for the location ``"root"`` or ``"inline"``."""
        assert where in ("root", "inline"), where
        return self._register(LoopRV(), ("location", func_name, where))

    def new_expr_rv(self, value: int) -> ExprRV:
        return self._register(ExprRV(), ("expr", value))

    def _register(self, rv, entry):
        self._rvs[rv] = entry
        return rv

    def rename_block(self, func_name: str, old: str, new: str) -> None:
        """Let every handle of block ``old`` follow it to its new name ``new``."""
        for rv, entry in list(self._rvs.items()):
            if entry == ("block", func_name, old):
                self._rvs[rv] = ("block", func_name, new)

    def remove_rv(self, rv) -> None:
        self._rvs.pop(rv, None)

    def num_handles(self) -> int:
        return len(self._rvs)

    # -- random numbers ----------------------------------------------------------------
    def seed(self, seed: int) -> None:
        self._rand.seed(seed)

    def fork_seed(self) -> int:
        return self._rand.randrange(1, 2 ** 31 - 1)

    def choice(self, seq):
        return self._rand.choice(seq)

    def shuffle(self, items: list) -> None:
        """Shuffle ``items`` in place."""
        self._rand.shuffle(items)

    def weighted_index(self, weights) -> int:
        """An index into ``weights`` drawn with those weights."""
        return self._rand.choices(range(len(weights)), weights=weights)[0]

    # -- commit and roll back ----------------------------------------------------------
    def commit(self, func_name, new_func, kind: str, inputs=(), attrs=(), outputs=(),
               decision=None) -> None:
        """Install ``new_func`` as ``func_name`` (None: the IR is unchanged) and record
        the instruction. Refused, with nothing changed, when ``new_func`` is not a
        PrimFunc of this module; otherwise it cannot fail."""
        if new_func is not None:
            if not isinstance(new_func, PrimFunc) or func_name not in self._mod:
                raise ScheduleError(f"{kind}: commit expects a PrimFunc replacing a function "
                                    f"of the module, found {type(new_func).__name__} for "
                                    f"{func_name!r}")
        instruction = Instruction(kind, tuple(inputs), tuple(attrs), tuple(outputs), decision)
        if new_func is not None:
            self._mod = self._mod.with_function(func_name, new_func)
        self._insts.append(instruction)

    def checkpoint(self) -> tuple:
        """A mark for ``roll_back``: the module and how many instructions and handles
        there are (primitives only add instructions and handles)."""
        return self._mod, len(self._insts), len(self._rvs)

    def roll_back(self, mark: tuple) -> None:
        """Undo the commits and new handles since ``checkpoint()`` gave ``mark``: a
        primitive that commits a ``get_block`` for a block given by name and is then
        refused leaves nothing behind."""
        mod, num_insts, num_handles = mark
        self._mod = mod
        del self._insts[num_insts:]
        while len(self._rvs) > num_handles:
            self._rvs.popitem()       # dicts pop the most recently added handle first
