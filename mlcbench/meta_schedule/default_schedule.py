"""The default schedule of a tuning task, as a Schedule whose trace replays on the task.

Template-free tuning starts from nothing: its first rounds are random samples, and a
small budget (a few trials per kernel of a model) can end slower than the rule-based
default schedule that an untuned ``relax.build`` applies. Measuring that default first
makes it a record like any other, so ``compile_tir`` / ``compile_relax`` pick the tuned
schedule only when it was measured faster::

    sch = default_schedule(IRModule({"main": matmul}), Target("llvm"))
    print(sch.trace)            # the dlight rule's primitives, replayable
"""
from __future__ import annotations

from dataclasses import replace

from ..dlight.cpu import default_rules
from ..dlight.cpu.gemv import CONSTANT_PARAMS
from ..ir.errors import ScheduleError
from ..ir.module import IRModule
from ..ir.structural import structural_equal
from ..target import Target
from ..tir.function import PrimFunc
from ..tir.schedule import Schedule, Trace

__all__ = ["default_schedule"]


def default_schedule(mod: IRModule, target: Target,
                     constant_params: tuple = ()) -> Schedule | None:
    """``mod`` (one PrimFunc) scheduled by the first default CPU rule that applies, or
    None (several PrimFuncs, a non-CPU target, or no rule applies). ``constant_params``
    (the parameters its model passes constants for) are named to the rules as
    ``relax.build`` names them (``CONSTANT_PARAMS``): a dense of 64 rows whose weight is
    a constant packs it, to be packed once at build time, while with the weight an
    argument it packs the rows instead; the trace replays on ``mod`` unmarked."""
    funcs = [(gv.name_hint, f) for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
    if len(funcs) != 1 or not target.is_cpu:
        return None
    name, func = funcs[0]
    if constant_params:
        func = func.with_attr(CONSTANT_PARAMS, [int(p) for p in constant_params])
    for rule in default_rules():
        try:
            scheduled = rule.apply(func, target, False)
        except ScheduleError:
            scheduled = None
        if scheduled is not None:
            replayed = _replay(scheduled.trace, mod, name)
            # a rule that rewrote the function outside the schedule leaves a trace that
            # does not rebuild its program: no baseline rather than a different one
            same = replayed is not None and structural_equal(
                replayed.mod[name].body, scheduled.mod["main"].body, map_free_vars=True)
            return replayed if same else None
    return None


def _replay(trace: Trace, mod: IRModule, func_name: str) -> Schedule | None:
    """The rule's trace (recorded on a module whose function is ``main``) replayed on
    ``mod``, where the function is called ``func_name``."""
    insts = [replace(inst, attrs=tuple((key, func_name if key == "func_name" else value)
                                       for key, value in inst.attrs),
                     inputs=tuple((key, func_name if key == "func_name" else value)
                                  for key, value in inst.inputs))
             for inst in trace.insts]
    try:
        return Trace(insts).apply_to_schedule(Schedule(mod), remove_postproc=False)
    except ScheduleError:
        return None
