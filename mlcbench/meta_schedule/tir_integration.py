"""Apply tuning results to a TensorIR module.

::

    database = ms.tune_tir(MyModule, "llvm --num-cores=2", work_dir, max_trials_global=64,
                           space=stochastic_schedule_mm)
    sch = ms.tir_integration.compile_tir(database, MyModule, "llvm --num-cores=2")
    print(sch.trace)            # the best schedule found, as replayable Python
    lib = mlcbench.build(sch.mod, "llvm --num-cores=2")
"""
from __future__ import annotations

from ..target import Target
from .database import Database, as_ir_module

__all__ = ["compile_tir"]


def compile_tir(database: Database, mod, target):
    """The schedule of ``mod`` with the trace of its fastest record for ``target``
    applied, or None when the database holds no valid record of ``mod``."""
    target = target if isinstance(target, Target) else Target(target)
    return database.query_schedule(as_ir_module(mod), target, workload_name="main")
