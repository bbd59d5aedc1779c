"""Postproc: the last, deterministic steps that make a sampled schedule a program.

Design-space rules leave intentions (annotations such as ``meta_schedule.parallel``)
and reduction blocks with their ``T.init()``. After every decision is taken, the search
runs the postprocessors in order on each candidate: each rewrites the schedule in place
(recording primitives after an ``enter_postproc`` mark in the trace) and returns
whether the candidate is still valid::

    sch.enter_postproc()
    ok = all(p.apply(sch) for p in Postproc.create("llvm"))
"""
from __future__ import annotations

from ..schedule_rule.schedule_rule import TargetAware


class Postproc(TargetAware):
    """Base class: subclass and implement ``apply``.

    Examples
    --------
    >>> class NoLoops(Postproc):
    ...     def apply(self, sch):
    ...         return "for" not in sch.mod.script()
    """

    def apply(self, sch) -> bool:
        """Rewrite ``sch`` in place; False when the schedule must be rejected."""
        raise NotImplementedError(f"{type(self).__name__} must implement apply(sch)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    @staticmethod
    def create(kind: str = "llvm") -> list:
        """The default postprocessors of a target kind (see :mod:`..target_defaults`).
        CPU: TVM's list, with in-kernel operand packing (``PackVectorOperand``) where
        TVM rewrites the layout of constant weights: ``DisallowDynamicLoop``,
        ``RewriteParallelVectorizeUnroll``, ``PackVectorOperand``,
        ``RewriteReductionBlock``. GPU: ``DisallowDynamicLoop``,
        ``RewriteCooperativeFetch``, ``RewriteUnboundBlock``,
        ``RewriteParallelVectorizeUnroll``, ``RewriteReductionBlock``, ``VerifyGPUCode``."""
        from ..target_defaults import default_postprocs
        return default_postprocs(kind)


def apply_postprocs(sch, postprocs) -> bool:
    """Mark the trace with ``enter_postproc`` and run ``postprocs`` in order; stops at
    the first that rejects the schedule (which may then be half rewritten: discard it).

    >>> ok = apply_postprocs(sch, Postproc.create("llvm"))     # doctest: +SKIP
    """
    from ...ir.errors import MLCBenchError
    sch.enter_postproc()
    for postproc in postprocs:
        try:
            if not postproc.apply(sch):
                return False
        except MLCBenchError:
            return False
    return True
