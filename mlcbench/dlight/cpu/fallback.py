"""Fallback: any function. Producers are inlined where legal, then every block's
leading spatial loops run in parallel when the kernel is large; fully spatial blocks
are vectorized as in Elementwise. Blocks that refuse a step keep their loops."""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ...tir.schedule import Schedule
from ..analysis import block_infos
from ..base import ScheduleRule
from .common import inline_injective_producers, vectorize_and_parallelize


class Fallback(ScheduleRule):
    """Always applies."""

    name = "Fallback"

    def apply(self, func, target, tunable=False):
        sch = Schedule(func)
        inline_injective_producers(sch)
        lanes = target.vector_lanes(32)
        for info in block_infos(sch):
            # On a copy, so a block that refuses a step midway leaves the schedule as it was.
            attempt = sch.copy()
            try:
                vectorize_and_parallelize(attempt, _refresh(attempt, info), lanes)
            except ScheduleError:
                continue
            sch = attempt
        return sch


def _refresh(sch, info):
    return next(i for i in block_infos(sch) if i.name == info.name)
