"""Tune a whole Relax model: one task per distinct kernel, then build with the results.

::

    tasks = ms.relax_integration.extract_tasks(mod, "llvm --num-cores=2")
    database = ms.relax_integration.tune_relax(mod, None, "llvm --num-cores=2", "./tune_tmp",
                                               max_trials_global=64)
    ex = ms.relax_integration.compile_relax(database, mod, "llvm --num-cores=2")
    vm = relax.VirtualMachine(ex, mlcbench.cpu())

The kernels are those ``relax.build`` compiles: the module after the graph-level
pipeline (LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR), structurally equal
PrimFuncs counted once. A task's weight is how often its kernel is called, so the task
scheduler spends trials where the model spends time. Each task's module is
``IRModule({"main": kernel})`` with ``global_symbol`` ``"main"``, the same key under
which :func:`compile_relax` looks kernels up, whatever the kernel is called in the model.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from ..ir.errors import TuningError
from ..ir.module import IRModule
from ..ir.op import Op
from ..relax.analysis import post_order_visit
from ..relax.expr import Call, Function
from ..relax.pipeline import zero_pipeline
from ..relax.transform.bind_params import bind_params
from ..relax.transform.split_weight_packing import constant_arguments
from ..script import from_source
from ..relax.vm_build import build as relax_build, looks_scheduled, unique_prim_funcs
from ..target import Target
from .database import Database
from .tune import _as_strategy, tune_tasks, tune_tasks_options
from .tune_context import TuneContext

__all__ = ["ExtractedTask", "compile_relax", "extract_tasks", "extracted_tasks_to_tune_contexts",
           "schedule_lookup", "tune_relax"]


@dataclass(frozen=True)
class ExtractedTask:
    """A kernel of a Relax model to tune.

    Attributes
    ----------
    task_name
        The kernel's name in the model (the first in name order among equal kernels).
    mod
        ``IRModule({"main": kernel})``: the workload the database records.
    target
        The target the model is compiled for.
    dispatched
        Every ``mod`` this task stands for (one here: equal kernels share a task).
    weight
        How many times the model calls the kernel.
    constant_params
        The indices of the kernel's parameters every call passes a constant for (its
        weights): a candidate that packs one is measured with it packed once, as the
        model's build runs it (see :mod:`.prepacked`).
    """

    task_name: str
    mod: IRModule
    target: Target
    dispatched: tuple
    weight: int
    constant_params: tuple = ()


def extract_tasks(mod: IRModule, target, params: dict | None = None) -> list[ExtractedTask]:
    """The tuning tasks of a Relax model: one per distinct unscheduled kernel.

    Parameters
    ----------
    mod
        A Relax IRModule (high-level ops, or already legalized and fused).
    target
        The target, a :class:`~mlcbench.target.Target` or a string.
    params
        ``{parameter name: array}`` bound as constants first (see ``BindParams``).

    Example
    -------
    >>> tasks = extract_tasks(mod, "llvm --num-cores=2")          # doctest: +SKIP
    >>> [(t.task_name, t.weight) for t in tasks]                   # doctest: +SKIP
    [('fused_matmul1_add1', 1), ('fused_matmul_add_relu', 1), ...]
    """
    target = _as_target(target)
    with target:
        # The same graph pipeline relax.build runs, so the tasks are the kernels it will compile.
        mod = zero_pipeline()(bind_model_params(mod, params))
    kernel_names, kernels = unique_prim_funcs(mod)
    counts = _call_counts(mod)
    given = constant_arguments(mod)
    weights: dict[str, int] = {}
    constants: dict[str, set] = {}
    for gv, name in kernel_names.items():
        # Equal kernels share one task; their calls add up in its weight.
        weights[name] = weights.get(name, 0) + counts.get(gv.name_hint, 0)
        # A parameter counts as constant only where every one of them is given one.
        here = set(given.get(gv, ()))
        constants[name] = constants[name] & here if name in constants else here
    tasks = []
    for name, func in kernels.items():
        if weights[name] == 0 or looks_scheduled(func):
            continue        # never called, or scheduled by hand: nothing to tune
        task_mod = task_module(func)
        tasks.append(ExtractedTask(name, task_mod, target, (task_mod,), weights[name],
                                   tuple(sorted(constants[name]))))
    return tasks


def task_module(func) -> IRModule:
    """``IRModule({"main": func})`` with ``global_symbol`` ``"main"``: a kernel's workload,
    the same whatever it is called in the model.

    The module is taken through TVMScript and back, as a JSON database stores it: a
    parameter named ``conv.weight`` becomes ``conv_weight``, and the names that
    primitives derive from it (``conv_weight_global``) are those a record's trace will
    meet when it is replayed from the database."""
    return from_source(IRModule({"main": func.with_attr("global_symbol", "main")}).script())


def bind_model_params(mod: IRModule, params: dict | None) -> IRModule:
    """``mod`` with ``params`` bound in every Relax function that has all those names as
    parameters (models usually have one: ``main`` or ``forward``)."""
    if not params:
        return mod
    names = set(params)
    bound = {gv: bind_params(func, params, where=f"params of {gv.name_hint!r}")
             for gv, func in mod.items() if isinstance(func, Function)
             and names <= {p.name_hint for p in func.params}}
    if not bound:
        raise TuningError(f"params: no Relax function of the module has parameters named "
                          f"{sorted(names)}")
    for gv, func in bound.items():
        mod = mod.with_function(gv, func)
    return mod


def _call_counts(mod: IRModule) -> dict[str, int]:
    """``{PrimFunc name: number of call sites}`` over the Relax functions of ``mod``."""
    counts: dict[str, int] = {}

    def visit(expr):
        if not isinstance(expr, Call):
            return
        if isinstance(expr.op, Op) and expr.op.name == "relax.call_tir" and expr.args:
            callee = expr.args[0]
        elif not isinstance(expr.op, Op):
            callee = expr.op
        else:
            return
        name = getattr(callee, "name_hint", None)
        if name is not None:
            counts[name] = counts.get(name, 0) + 1

    for func in mod.functions.values():
        if isinstance(func, Function):
            post_order_visit(func, visit)
    return counts


def extracted_tasks_to_tune_contexts(extracted_tasks, work_dir: str | None = None,
                                     space="post-order-apply", strategy="evolutionary",
                                     num_tuning_cores="physical", seed: int | None = None):
    """``(contexts, weights)``: a TuneContext for each task, seeded from ``seed``.

    ``work_dir`` is taken for TVM's signature only: records go where ``tune_tasks`` puts
    them.
    """
    # One stream for all tasks: each gets its own seed, and the same seed gives the same run.
    rng = random.Random(seed)
    contexts = [TuneContext(task.mod, target=task.target, space_generator=space,
                            search_strategy=_as_strategy(strategy, i),
                            task_name=task.task_name, rand_state=rng.randrange(2 ** 31),
                            num_threads=num_tuning_cores,
                            constant_params=getattr(task, "constant_params", ()))
                for i, task in enumerate(extracted_tasks)]
    return contexts, [float(task.weight) for task in extracted_tasks]


def tune_relax(mod: IRModule, params: dict | None, target, work_dir: str,
               max_trials_global: int, *, max_trials_per_task: int | None = None,
               num_trials_per_iter: int = 64, builder="local", runner="local",
               database="json", cost_model="xgb", measure_callbacks=(),
               task_scheduler="gradient", space="post-order-apply", strategy="evolutionary",
               num_tuning_cores="physical", seed: int | None = None, callbacks=(),
               progress_bar: bool = True, remeasure_top_k: int = 0,
               remeasure_rounds: int = 3) -> Database:
    """Tune every kernel of a Relax model (see :func:`extract_tasks`) with one budget.

    The arguments after ``max_trials_global`` are those of :func:`~.tune.tune_tir`; the
    default ``task_scheduler="gradient"`` gives rounds to the kernels whose weighted
    latency is expected to fall most.

    Example
    -------
    >>> db = tune_relax(mod, None, "llvm --num-cores=2", "./tune_tmp",   # doctest: +SKIP
    ...                 max_trials_global=64, num_trials_per_iter=16)
    """
    tasks = extract_tasks(mod, target, params)
    if not tasks:
        raise TuningError("tune_relax: the model has no unscheduled kernel to tune")
    contexts, weights = extracted_tasks_to_tune_contexts(
        tasks, work_dir, space, strategy, num_tuning_cores, seed)
    return tune_tasks(tasks=contexts, task_weights=weights, work_dir=work_dir,
                      max_trials_global=max_trials_global, **tune_tasks_options(locals()))


def schedule_lookup(database: Database):
    """A ``relax.build`` schedule lookup: ``(func, name, target)`` -> the schedule of the
    fastest record of ``func`` in ``database``, or None (the default schedule).

    Also usable as ``PassContext(config={"relax.build.schedule_lookup": lookup})``.
    """
    def lookup(func, name, target):
        # Through task_module, so the lookup meets the workload exactly as tuning recorded it.
        return database.query_schedule(task_module(func), target, workload_name="main")
    return lookup


def compile_relax(database: Database, mod: IRModule, target, params: dict | None = None):
    """``relax.build`` of ``mod`` with each kernel's best record in ``database`` applied;
    kernels without a valid record get the default schedule.

    Example
    -------
    >>> ex = compile_relax(db, mod, "llvm --num-cores=2")               # doctest: +SKIP
    >>> relax.VirtualMachine(ex, mlcbench.cpu())["forward"](x, *weights)  # doctest: +SKIP
    """
    target = _as_target(target)
    return relax_build(bind_model_params(mod, params), target,
                       schedule_lookup=schedule_lookup(database))


def _as_target(target) -> Target:
    return target if isinstance(target, Target) else Target(target)
