"""Default schedules without search: rules that look at a PrimFunc's blocks and schedule it.

``ApplyDefaultSchedule(*rules)`` is a module pass: for every PrimFunc not yet marked
``tir.is_scheduled`` it tries the rules in order and keeps the first that applies::

    from mlcbench import dlight as dl
    mod = dl.ApplyDefaultSchedule(*dl.cpu.default_rules())(mod)

Rules read the block structure (iteration kinds, index patterns), never op names, so
any operator written in TE gets a schedule.
"""
from .base import ApplyDefaultSchedule, ScheduleRule
from . import cpu

__all__ = ["ApplyDefaultSchedule", "ScheduleRule", "cpu"]
