"""Elementwise: functions made only of injective blocks (after inlining producers).

Each block's loops are fused, split by the vector lanes and vectorized; the outer part
runs in parallel when the kernel has at least ~256K elements (smaller ones finish
before a second thread would help).
"""
from __future__ import annotations

from ...tir.schedule import Schedule
from ..analysis import block_infos
from ..base import ScheduleRule
from .common import inline_injective_producers, schedule_remaining_blocks


class Elementwise(ScheduleRule):
    """Fuse, vectorize and parallelize injective kernels."""

    name = "Elementwise"

    def apply(self, func, target, tunable=False):
        sch = Schedule(func)
        if not all(info.is_injective for info in block_infos(sch)):
            return None
        inline_injective_producers(sch)
        schedule_remaining_blocks(sch, target.vector_lanes(32))
        return sch
