"""The rule interface and the pass that applies rules to every unscheduled PrimFunc."""
from __future__ import annotations

from ..ir.errors import ScheduleError
from ..ir.module import IRModule
from ..ir.transform import module_pass
from ..target import Target
from ..tir.function import PrimFunc

IS_SCHEDULED = "tir.is_scheduled"


class ScheduleRule:
    """One way to schedule a kind of PrimFunc.

    ``apply(func, target, tunable)`` returns a Schedule of ``func`` (named ``"main"``
    inside it) when the rule fits, or None so the next rule is tried. A rule that
    fits halfway may raise ScheduleError: the pass treats that as "does not apply".
    """

    name = "rule"

    def apply(self, func: PrimFunc, target: Target, tunable: bool = False):
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def is_scheduled(func: PrimFunc) -> bool:
    return bool(func.attrs.get(IS_SCHEDULED, False))


def schedule_func(func: PrimFunc, rules, target: Target):
    """``(scheduled PrimFunc, rule)`` of the first rule that applies, or ``(None, None)``."""
    for rule in rules:
        try:
            sch = rule.apply(func, target, False)
        # A rule that fits halfway raises; the next rule gets the untouched function.
        except ScheduleError:
            sch = None
        if sch is not None:
            return sch.mod["main"].with_attr(IS_SCHEDULED, True), rule
    return None, None


def ApplyDefaultSchedule(*rules):  # noqa: N802 (TVM's spelling)
    """A module pass scheduling each PrimFunc with the first of ``rules`` that applies.

    The target is ``Target.current()`` (``with Target(...):``), else the host CPU.
    Functions marked ``tir.is_scheduled`` (hand schedules, tuning records) are kept.
    """
    rules = tuple(rules)

    def transform(mod: IRModule, ctx) -> IRModule:
        target = Target.current() or Target("llvm")
        updates = {}
        for gvar, func in mod.functions.items():
            if not isinstance(func, PrimFunc) or is_scheduled(func):
                continue
            new_func, _ = schedule_func(func, rules, target)
            if new_func is not None:
                updates[gvar] = new_func
        if not updates:
            return mod
        out = mod.copy()
        for gvar, func in updates.items():
            out.update_func(gvar, func)
        return out

    return module_pass(transform, opt_level=0, name="dlight.ApplyDefaultSchedule")
