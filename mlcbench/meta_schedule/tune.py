"""Tuning entry points: ``tune_tir`` for a TensorIR module, ``tune_tasks`` for several.

The course's example::

    from mlcbench import meta_schedule as ms
    database = ms.tune_tir(mod=MyModule, target="llvm --num-cores=2", max_trials_global=64,
                           num_trials_per_iter=16,
                           space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
                           work_dir="./tune_tmp")
    sch = ms.tir_integration.compile_tir(database, MyModule, "llvm --num-cores=2")

Records go to ``work_dir`` as JSON lines as they are measured; running the same call
again after a crash or Ctrl-C keeps every earlier record and never measures one of
those programs again. Each call runs up to ``max_trials_global`` new trials, and says
what it resumed from::

    resumed 24 records of 2 workloads from ./tune_tmp; they do not count against
    max_trials_global=64: the search measures up to 64 new programs, none of those 24
"""
from __future__ import annotations

import os
import random

from ..ir.errors import TuningError
from ..ir.module import IRModule
from ..runtime.device import gpu_backend
from ..target import Target
from ..tir.function import PrimFunc
from .builder import Builder, ExecutorBuilder, LocalBuilder
from .cost_model import CostModel
from .cuda_measure import CUDABuilder, CUDARunner
from .database import (Database, JSONDatabase, MemoryDatabase, as_ir_module,
                       check_module_equality)
from .executor_pool import as_executor
from .gpu_measure import SimulatedGPUBuilder, SimulatedGPURunner, check_best
from .gpu_target import is_gpu_target
from .runner import ExecutorRunner, LocalRunner, Runner
from .task_scheduler import TaskScheduler
from .tune_context import TuneContext

__all__ = ["tune_tir", "tune_tasks"]


def tune_tir(mod, target, work_dir: str, max_trials_global: int, *,
             max_trials_per_task: int | None = None, num_trials_per_iter: int = 64,
             builder="local", runner="local", database="json", cost_model="xgb",
             measure_callbacks=(), task_scheduler="round-robin", space="post-order-apply",
             strategy="evolutionary", num_tuning_cores="physical", seed: int | None = None,
             module_equality: str = "structural", callbacks=(), progress_bar: bool = True,
             task_name: str | None = None, remeasure_top_k: int = 0,
             remeasure_rounds: int = 3, constant_params: tuple = ()) -> Database:
    """Tune every PrimFunc of ``mod`` for ``target``; return the database of records.

    Parameters
    ----------
    space
        A SpaceGenerator (``ms.space_generator.ScheduleFn(f)``, ``PostOrderApply()``), a
        schedule function ``f(sch)``, or ``"post-order-apply"`` (schedule rules).
    strategy
        ``"evolutionary"``, ``"replay-trace"``, ``"replay-func"`` or a SearchStrategy.
    cost_model
        ``"xgb"``, ``"random"`` or a CostModel.
    builder, runner, database
        ``"local"`` / ``"local"`` / ``"json"`` (records in ``work_dir``), or objects. For
        a GPU target (``"cuda"``, ``"nvidia/geforce-rtx-2080-ti"``) ``"local"`` times
        each candidate on ``cuda(0)`` where it is a real device (``CUDABuilder`` /
        ``CUDARunner``, see :mod:`.cuda_measure`) and elsewhere models it on the
        simulated GPU (``SimulatedGPUBuilder`` / ``SimulatedGPURunner``, see
        :mod:`.gpu_measure`); either way the fastest programs are then run once on the
        simulated GPU and checked against numpy. Pass those objects to choose; a
        Dask ``Client`` or a ``concurrent.futures.Executor`` as the builder or the
        runner builds or measures on its workers (``ExecutorBuilder`` /
        ``ExecutorRunner`` with their defaults).
    callbacks
        Functions called with a :class:`~.tuning_round.TuningRound` after every round.
    seed
        Seeds every random choice (None: random).
    remeasure_top_k, remeasure_rounds
        At the end, the ``remeasure_top_k`` fastest programs and the default schedule
        are measured again, in turn, ``remeasure_rounds`` times; those figures replace
        the first ones, so a program that was measured while the machine was quiet
        does not win by luck, nor the default lose by a busy spell (see
        :mod:`.remeasure`; the database then holds up to ``remeasure_top_k + 1`` more
        records per task). 0, the default as in TVM: nothing is measured again, the
        default schedule's first figure included.
    constant_params
        Indices of the parameters the caller will pass constants for (a weight): on a
        CPU, a candidate that packs such a parameter is timed with it packed once, as
        ``relax.build`` runs a model's kernels (:mod:`.prepacked`). Empty, the default
        as in TVM: every candidate is timed whole.
    module_equality
        How workloads are told apart: ``"structural"`` (their structural hash) is the
        only value supported; TVM's other values are refused.
    """
    check_module_equality(module_equality, "tune_tir")
    mod = as_ir_module(mod)
    target = target if isinstance(target, Target) else Target(target)
    funcs = [(gv.name_hint, f) for gv, f in mod.functions.items() if isinstance(f, PrimFunc)]
    if not funcs:
        raise TuningError("tune_tir: the module has no PrimFunc to tune")
    # one PrimFunc: tune the module as given, so a schedule function's names still hold
    task_mods = [(task_name or funcs[0][0], mod)] if len(funcs) == 1 else [
        (name, IRModule({name: func})) for name, func in funcs]
    # One stream seeds every task: the same seed replays the same tuning run.
    rng = random.Random(seed)
    tasks = [TuneContext(task_mod, target=target, space_generator=space,
                         search_strategy=_as_strategy(strategy, i), task_name=name,
                         rand_state=rng.randrange(2 ** 31), num_threads=num_tuning_cores,
                         constant_params=constant_params)
             for i, (name, task_mod) in enumerate(task_mods)]
    return tune_tasks(tasks=tasks, task_weights=[1.0] * len(tasks), work_dir=work_dir,
                      max_trials_global=max_trials_global, **tune_tasks_options(locals()))


# The keywords tune_tir and tune_relax take with tune_tasks' meaning and pass on unchanged.
TUNE_TASKS_OPTIONS = ("max_trials_per_task", "num_trials_per_iter", "builder", "runner",
                      "database", "cost_model", "measure_callbacks", "task_scheduler",
                      "callbacks", "progress_bar", "seed", "remeasure_top_k", "remeasure_rounds")


def tune_tasks_options(arguments: dict) -> dict:
    """The :data:`TUNE_TASKS_OPTIONS` among a caller's ``arguments`` (its ``locals()``)."""
    return {name: arguments[name] for name in TUNE_TASKS_OPTIONS}


def tune_tasks(*, tasks, task_weights, work_dir: str | None, max_trials_global: int,
               max_trials_per_task: int | None = None, num_trials_per_iter: int = 64,
               builder="local", runner="local", database="json", cost_model="xgb",
               measure_callbacks=(), task_scheduler="gradient", callbacks=(),
               progress_bar: bool = True, seed: int | None = None, remeasure_top_k: int = 0,
               remeasure_rounds: int = 3) -> Database:
    """Tune several TuneContexts with one budget, shared by ``task_scheduler``
    (``"gradient"`` or ``"round-robin"``) in proportion to ``task_weights``; the other
    arguments are those of :func:`tune_tir`."""
    if max_trials_global < 1 or num_trials_per_iter < 1:
        raise TuningError(f"max_trials_global and num_trials_per_iter must be >= 1, found "
                          f"{max_trials_global} and {num_trials_per_iter}")
    database = _as_database(database, work_dir)
    if isinstance(database, JSONDatabase) and len(database):
        where = work_dir if work_dir is not None else os.path.dirname(
            database.path_tuning_record)
        print(resume_message(database, where, max_trials_global))
    owned = []
    # GPU targets are timed on the device where there is one, else modeled on the
    # simulated GPU (see cuda_measure, gpu_measure)
    gpu = any(is_gpu_target(task.target) for task in tasks)
    # the builder that matches a runner given as an object, else the host's kind
    on_device = gpu and (isinstance(runner, CUDARunner) or (
        not isinstance(runner, SimulatedGPURunner) and gpu_backend() == "cuda"))
    if builder == "local":
        builder = (CUDABuilder() if on_device else SimulatedGPUBuilder()) if gpu \
            else LocalBuilder()
        owned.append(builder)
    if runner == "local":
        runner = (CUDARunner() if on_device else SimulatedGPURunner()) if gpu \
            else LocalRunner()
        owned.append(runner)
    if as_executor(builder) is not None:
        builder = ExecutorBuilder(builder)
    if as_executor(runner) is not None:
        runner = ExecutorRunner(runner)
    if not isinstance(builder, Builder) or not isinstance(runner, Runner):
        raise TuningError("tune: builder and runner must be 'local', Builder / Runner "
                          "objects, or a Dask Client / concurrent.futures.Executor")
    if isinstance(task_scheduler, str):
        task_scheduler = TaskScheduler.create(task_scheduler)
    try:
        # Without max_trials_per_task one task may take the whole budget.
        task_scheduler.tune(tasks, task_weights, max_trials_global,
                            max_trials_per_task or max_trials_global, num_trials_per_iter,
                            builder, runner, list(measure_callbacks or ()), database,
                            _as_cost_model(cost_model, seed), callbacks=list(callbacks or ()),
                            progress_bar=progress_bar, remeasure_top_k=remeasure_top_k,
                            remeasure_rounds=remeasure_rounds)
        if runner.verify_best:
            for task in tasks:
                check_best(database, task.mod, task.target)
    finally:
        for part in owned:
            part.shutdown()
    return database


def resume_message(database: Database, work_dir, max_trials_global: int) -> str:
    """What a tuning call found on file before it starts, and how the budget counts it."""
    records = database.get_all_tuning_records()
    workloads = len({record.workload.shash for record in records})
    return (f"resumed {len(records)} records of {workloads} workload"
            f"{'s' if workloads != 1 else ''} from {work_dir}; they do not count against "
            f"max_trials_global={max_trials_global}: the search measures up to "
            f"{max_trials_global} new programs, none of those {len(records)}")


def _as_database(database, work_dir) -> Database:
    if isinstance(database, Database):
        return database
    if database == "json":
        if work_dir is None:
            raise TuningError("tune: database='json' keeps its records in work_dir; give "
                              "work_dir, or database='memory'")
        return JSONDatabase(work_dir=work_dir)
    if database == "memory":
        return MemoryDatabase()
    raise TuningError(f"tune: database must be 'json', 'memory' or a Database, found "
                      f"{database!r}")


def _as_strategy(strategy, task_index: int):
    """A fresh strategy per task (a strategy keeps per-task state)."""
    if isinstance(strategy, str) or task_index == 0:
        return strategy
    return strategy.clone()


def _as_cost_model(cost_model, seed):
    """``"xgb"`` / ``"random"`` (seeded with ``seed``), or a CostModel as given."""
    if not isinstance(cost_model, str):
        return cost_model
    if cost_model not in ("xgb", "random"):
        raise TuningError(f"tune: cost_model must be 'xgb', 'random' or a CostModel, found "
                          f"{cost_model!r}")
    return CostModel.create(cost_model, **({} if seed is None else {"seed": seed}))
