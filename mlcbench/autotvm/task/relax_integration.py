"""The whole-model flow of TVM's AutoTVM tutorials, on Relax models.

::

    tasks = autotvm.task.extract_from_program(mod, params=None, target="llvm")
    for i, task in enumerate(tasks):
        tuner = autotvm.tuner.XGBTuner(task, loss_type="rank")
        tuner.tune(n_trial=min(64, len(task.config_space)), measure_option=option,
                   callbacks=[autotvm.callback.log_to_file("model.log")])
    with autotvm.apply_history_best("model.log"):
        ex = relax.build(mod, target="llvm")      # tuned kernels where a record exists

Tasks come from the kernels ``relax.build`` compiles, i.e. after FuseOps/FuseTIR: a
kernel is covered when its anchor block (the one matmul or convolution in it) is what a
template computes; its epilogue (bias, relu) is left out of the workload, as TVM's
"dense + injective" kernels are tuned by their dense. Tuning the kernels rather than the
high-level calls keeps one source of truth for what gets compiled (a transpose the
pipeline keeps as its own kernel makes a ``weight_layout="KN"`` dense) and lets fused
and unfused kernels with the same anchor share records. Every template that computes an
anchor gets a task (``dense_pack.x86`` and ``dense.x86`` for a dense, as TVM's strategy
lists both); at build time the kernel uses whichever has the fastest record, records of
templates chosen by a template key included (``create(..., "winograd")``: extraction
does not list those, as in TVM).

While ``with apply_history_best(...)`` is active, ``relax.build`` asks
:func:`tuned_kernel` for each kernel through the lookup this module registers under
``relax.vm_build.CONTEXT_SCHEDULE_LOOKUP``; the tuned anchor replaces the kernel's own
(see :mod:`~mlcbench.autotvm.templates.splice`), kernels without a record keep the
default schedule.
"""
from __future__ import annotations

import functools

from ...ir.errors import InvalidValueError, TuningError
from ...ir.module import IRModule, as_module
from ...relax.vm_build import CONTEXT_SCHEDULE_LOOKUP
from ...runtime.registry import register_func
from ...target import Target
from ..templates.match import TEMPLATES_OF_KIND, find_anchor
from ..templates.splice import splice_anchor
from .dispatcher import DispatchContext, FallbackContext
from .task import TEMPLATE_KEYS, Task, check_target_host

__all__ = ["extract_from_program", "tuned_kernel"]

OP_KINDS = {"nn.dense": "dense", "nn.matmul": "dense", "matmul": "dense",
            "nn.linear": "dense", "linear": "dense", "nn.conv2d": "conv2d"}
"""Op names ``extract_from_program(ops=...)`` accepts, with or without ``relax.``."""


def extract_from_program(mod, params=None, target=None, target_host=None, ops=None
                         ) -> list[Task]:
    """The AutoTVM tasks of a Relax model: one per distinct (template, workload).

    Parameters
    ----------
    mod
        A Relax IRModule or Function (high-level ops, or already legalized/fused).
    params
        ``{parameter name: array}`` bound as constants before extraction, or None.
    target
        The target (default ``"llvm"``). ``target_host``, as in TVM's signature, may
        only name a CPU target (the tasks run on the host).
    ops
        Only tasks of these ops: names such as ``"nn.dense"``, ``"relax.matmul"``,
        ``"nn.conv2d"`` (or Op objects); None for every op a template covers.

    Returns
    -------
    Tasks named as in TVM (``dense_pack.x86``, ``conv2d_nchw.x86``), in the order the
    kernels are found; ``task.count`` is how many calls of the model it covers.

    Example
    -------
    >>> tasks = autotvm.task.extract_from_program(mod, params=None, target="llvm")
    >>> [(t.name, t.count) for t in tasks][:2]                    # doctest: +SKIP
    [('dense_pack.x86', 1), ('dense.x86', 1)]
    """
    from ...meta_schedule.relax_integration import extract_tasks
    check_target_host(target_host, "extract_from_program")
    kinds = _op_kinds(ops)
    target = target if isinstance(target, Target) else Target(target or "llvm")
    counts: dict = {}
    for kernel in extract_tasks(_relax_module(mod), target, params):
        anchor = find_anchor(kernel.mod["main"])
        if anchor is None or anchor.kind not in kinds:
            continue
        for workload in anchor.workloads():
            # A workload's count is how often the model runs it, over all its kernels.
            counts[workload] = counts.get(workload, 0) + kernel.weight
    tasks = []
    for workload, count in counts.items():
        task = Task(workload[0], workload[1:], target)
        task.count = count
        tasks.append(task)
    return tasks


def _relax_module(mod) -> IRModule:
    from ...relax.expr import Function
    return as_module(mod, (Function,), "extract_from_program", TuningError)


def _op_kinds(ops) -> set:
    if ops is None:
        return set(TEMPLATES_OF_KIND)
    kinds = set()
    for op in ops:
        name = str(getattr(op, "name", op)).removeprefix("relax.")
        if name not in OP_KINDS:
            raise TuningError(f"extract_from_program: no template covers op {name!r}; "
                              f"ops with templates: {sorted(OP_KINDS)}")
        kinds.add(OP_KINDS[name])
    return kinds


def tuned_kernel(func, name: str, target, context: DispatchContext | None = None):
    """``func`` with its anchor scheduled by the fastest record ``context`` holds for
    it (default: the current dispatch context), or None when it has none.

    This is the ``schedule_lookup`` ``relax.build`` uses inside ``apply_history_best``.
    """
    context = context or DispatchContext.current()
    target = target if isinstance(target, Target) else Target(str(target))
    anchor = find_anchor(func)
    if anchor is None:
        return None
    best = None
    for workload in anchor.workloads() + _keyed_workloads(anchor):
        hit = context.best_record(target, workload)
        # Whichever template has the fastest record wins.
        if hit is not None and (best is None or hit[0] < best[0]):
            best = (hit[0], workload, hit[1])
    if best is None:
        return None
    _, workload, config = best
    scheduled = Task(workload[0], workload[1:], target).instantiate_module(config)["main"]
    return splice_anchor(func, anchor, scheduled, target.vector_lanes(32))


def _keyed_workloads(anchor) -> list:
    """Workloads of the templates a template key names for the anchor's templates
    (``conv2d_nchw_winograd.x86`` for a 3x3 stride-1 convolution): tasks made with
    ``create(name, args, ..., "winograd")`` leave records under those."""
    workloads = []
    for name, *args in anchor.workloads():
        for (task_name, _), (keyed_name, convert) in TEMPLATE_KEYS.items():
            if task_name != name:
                continue
            try:
                workloads.append((keyed_name,) + convert(tuple(args)))
            except InvalidValueError:       # the keyed template does not apply here
                continue
    return workloads


@register_func(CONTEXT_SCHEDULE_LOOKUP, override=True)
def context_schedule_lookup():
    """The ``relax.build`` lookup of the active dispatch context; None outside one."""
    context = DispatchContext.current()
    # Outside apply_history_best there are no records to look up.
    if isinstance(context, FallbackContext):
        return None
    return functools.partial(tuned_kernel, context=context)
