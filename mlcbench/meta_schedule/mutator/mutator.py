"""Mutator: change one decision of a trace, for the evolutionary search.

A mutator takes a trace (a design space with every decision taken) and returns a new
trace that differs in one decision, chosen so that replaying it is still legal, or
None when it finds nothing to change::

    new_trace = ms.mutator.MutateTileSize().apply(trace, rand_state=0)
    sch = Schedule(mod)
    new_trace.apply_to_schedule(sch, remove_postproc=True)

Mutators that must replay part of the trace to know the legal choices
(``MutateComputeLocation``, ``MutateParallel``) need the module: they get it from the
tune context (``_initialize_with_tune_context``) or from their ``mod`` argument.
"""
from __future__ import annotations

import random
from dataclasses import replace

from ...ir.errors import InvalidTypeError, InvalidValueError, MLCBenchError
from ...tir.schedule import Schedule, Trace
from ..schedule_rule.schedule_rule import TargetAware


def as_random(rand_state) -> random.Random:
    """A ``random.Random`` from a seed (int), a Random, a numpy Generator or None."""
    if isinstance(rand_state, random.Random):
        return rand_state
    if rand_state is None or (isinstance(rand_state, int) and rand_state < 0):
        return random.Random()
    if isinstance(rand_state, int):
        return random.Random(rand_state)
    if hasattr(rand_state, "integers"):
        return random.Random(int(rand_state.integers(0, 2 ** 31 - 1)))
    raise InvalidTypeError(f"rand_state must be an int, a random.Random or a numpy Generator, "
                           f"found {type(rand_state).__name__}")


class Mutator(TargetAware):
    """Base class: subclass and implement ``apply``.

    Examples
    --------
    >>> class Keep(Mutator):
    ...     def apply(self, trace, rand_state=None):
    ...         return None          # nothing to change
    """

    mod = None

    def _initialize_with_tune_context(self, context) -> None:
        super()._initialize_with_tune_context(context)
        if getattr(context, "mod", None) is not None:
            self.mod = context.mod

    def apply(self, trace: Trace, rand_state=None) -> Trace | None:
        """A trace differing from ``trace`` in one decision, or None."""
        raise NotImplementedError(f"{type(self).__name__} must implement apply(trace, "
                                  "rand_state)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def _replay(self, insts) -> Schedule:
        """A schedule of the module after ``insts`` (raises when they do not replay)."""
        sch = Schedule(self._module())
        Trace(insts).apply_to_schedule(sch)
        return sch

    def _module(self):
        if self.mod is None:
            raise InvalidValueError(f"{type(self).__name__} needs the module: pass mod= or "
                                    "initialize it with a TuneContext")
        return self.mod

    def _replays(self, trace: Trace) -> bool:
        """Whether ``trace`` replays on the module up to its postprocessing: a changed
        decision may leave a later ``sample_compute_location`` decision illegal."""
        self._module()      # a missing module is the caller's mistake, not a failed replay
        try:
            self._replay(without_postproc(trace))
        except MLCBenchError:
            return False
        return True

    @staticmethod
    def create(kind: str = "llvm") -> dict:
        """``{mutator: probability}`` for a target kind (TVM's defaults: see
        :mod:`..target_defaults`)."""
        from ..target_defaults import default_mutators
        return default_mutators(kind)


def replace_inst(trace: Trace, inst, **changes) -> Trace:
    """A trace where ``inst`` has ``changes`` (fields of Instruction) applied."""
    return Trace([replace(i, **changes) if i is inst else i for i in trace.insts])


def without_postproc(trace: Trace) -> list:
    """The instructions before ``enter_postproc``."""
    out = []
    for inst in trace.insts:
        if inst.kind == "enter_postproc":
            break
        out.append(inst)
    return out
