"""ScheduleRule: what to try on one block of a design space.

A rule looks at one block of a schedule and returns the schedules it leads to: the
schedule unchanged (the rule does not apply), changed in place, or several branches
(``MultiLevelTiling`` with and without a write cache). Random choices are sampling
primitives, so the trace of each result is a *design space*: replaying it with other
decisions gives other programs of the same shape::

    rule = ms.schedule_rule.MultiLevelTiling(structure="SSRSRS")
    spaces = rule.apply(Schedule(matmul), sch.get_block("C"))    # 3 schedules
"""
from __future__ import annotations

import copy

from ...target import Target


def as_target(target) -> Target:
    """A Target from a Target, a string, or None (the enclosing target, else llvm)."""
    if target is None:
        return Target.current() or Target("llvm")
    return target if isinstance(target, Target) else Target(target)


class TargetAware:
    """Holds the target of the tune context (``num_cores`` sets parallelism)."""

    _target = None

    def _initialize_with_tune_context(self, context) -> None:
        """Read what the object needs from a TuneContext (its target)."""
        self._target = as_target(getattr(context, "target", None))

    @property
    def target(self) -> Target:
        return self._target if self._target is not None else as_target(None)

    def clone(self):
        """An independent copy (each tuning task gets its own)."""
        return copy.deepcopy(self)


class ScheduleRule(TargetAware):
    """Base class: subclass and implement ``apply``.

    Examples
    --------
    >>> class Noop(ScheduleRule):
    ...     def apply(self, sch, block):
    ...         return [sch]
    """

    def apply(self, sch, block) -> list:
        """The schedules that follow from ``sch`` at ``block`` (a BlockRV)."""
        raise NotImplementedError(f"{type(self).__name__} must implement apply(sch, block)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    @staticmethod
    def create(kind: str = "llvm") -> list:
        """The default rules for a target kind, in the order TVM applies them (see
        :mod:`..target_defaults`). CPU: inline, rfactor, multi-level tiling,
        parallel/vectorize/unroll, compute location; GPU: inline, multi-level tiling
        bound to threads with shared-memory reuse, inline, unroll, thread binding.

        >>> [type(r).__name__ for r in ScheduleRule.create("llvm")][:2]
        ['AutoInline', 'AddRFactor']
        """
        from ..target_defaults import default_rules
        return default_rules(kind)
