"""``relax.build``: a Relax IRModule in, an :class:`~mlcbench.relax.Executable` out.

::

    ex = relax.build(MyModule, target="llvm")
    vm = relax.VirtualMachine(ex, mlcbench.cpu())
    vm["main"](x, w0, b0, w1, b1)

The steps, each visible to ``PassContext`` instruments:

1. the pipeline (default ``relax.get_pipeline("default")``: legalize and fuse, then
   ToNonDataflow, CallTIRRewrite and StaticPlanBlockMemory); a custom pipeline that
   leaves ``call_tir`` or dataflow blocks behind is followed by the VM lowering passes;
2. every PrimFunc is compiled once: structurally equal ones (up to their names) share
   one kernel;
3. kernels get a schedule unless they have one: a PrimFunc marked
   ``tir.is_scheduled``, or with a loop that is parallel, vectorized, unrolled or bound
   (someone scheduled it), is kept; else ``schedule_lookup`` is asked (a tuning
   database's best record, say), then the lookup of the active tuning context (inside
   ``with autotvm.apply_history_best(log):``), and what neither covers gets the default
   CPU rules of ``mlcbench.dlight``;
4. TIR lowering and code generation (:func:`mlcbench.tir.build.build_lowered`) into one
   runtime Module, and VM code generation for every Relax function.

Steps 3 and 4's kernels go through the kernel cache (:mod:`mlcbench.codegen.kernel_cache`),
keyed before scheduling: building the same kernels again loads their machine code. The
whole build goes through the model cache (:mod:`mlcbench.relax.model_cache`), keyed on
the module as it comes in: building the same model again with a named pipeline runs
none of the steps.
"""
from __future__ import annotations

import contextlib
from typing import Callable

from ..codegen import kernel_cache
from ..codegen.llvm import codegen_llvm
from ..ir.errors import CodegenError
from ..ir.module import IRModule, as_module
from ..ir.op import Op
from ..ir.structural import structural_equal, structural_hash
from ..ir.transform import Pass, PassContext, Sequential
from ..runtime.metadata import encode_metadata
from ..runtime.module import Module
from ..tir import stmt as S
from ..tir.build import build_lowered, lower, resolve_target
from ..tir.function import PrimFunc
from ..tir.functor import post_order_visit
from . import model_cache, parallel_build
from .executable import Executable
from .expr import Call, DataflowBlock, Function
from .analysis import post_order_visit as relax_post_order_visit
from .pipeline import get_pipeline, vm_lowering_pipeline
from .vm_codegen import ModuleContext, compile_function

SCHEDULE_LOOKUP_CONFIG = "relax.build.schedule_lookup"
"""PassContext config key naming a ``schedule_lookup`` callable (see :func:`build`)."""

ScheduleLookup = Callable   # (func: PrimFunc, name: str, target: Target) -> PrimFunc | None

CONTEXT_SCHEDULE_LOOKUP = "relax.build.context_schedule_lookup"
"""Name of a global function ``() -> ScheduleLookup | None`` that a tuning library
registers: the lookup of whatever tuning context is active where ``build`` is called
(``with autotvm.apply_history_best(log):``), asked for the kernels the explicit
lookup leaves to the default schedule."""


def build(mod, target=None, pipeline=None, schedule_lookup: ScheduleLookup | None = None
          ) -> Executable:
    """Compile a Relax IRModule into an Executable for ``relax.VirtualMachine``.

    Parameters
    ----------
    mod
        An IRModule of Relax functions and PrimFuncs (a lone Relax Function is named main).
    target
        ``"llvm"`` (default: the enclosing ``with Target(...)``, else the host CPU).
    pipeline
        A pipeline name for :func:`~mlcbench.relax.get_pipeline`, a Pass, a list of
        Passes, or None for ``"default"``.
    schedule_lookup
        ``lookup(func, name, target) -> PrimFunc | tir.Schedule | None``: a scheduled
        version of a kernel (e.g. the best record of a tuning database), or None to use
        the default rules. Also read from
        ``PassContext(config={"relax.build.schedule_lookup": lookup})``.

    >>> ex = relax.build(MyModule, target="llvm")             # doctest: +SKIP
    >>> relax.VirtualMachine(ex, tvm.cpu())["main"](x).numpy()  # doctest: +SKIP
    """
    mod = as_module(mod, (Function,), "relax.build", CodegenError)
    target = resolve_target(target)
    lookup = resolve_schedule_lookup(schedule_lookup)
    # No key (a lookup, a custom pipeline: code a key cannot name) means an uncached build.
    keyed = model_cache.model_key(mod, target, pipeline, lookup)
    if keyed is not None:
        found = model_cache.load(keyed, lambda: _rebuild_kernels(mod, target, pipeline))
        if found is not None:
            return found
    ex = _build(mod, target, pipeline, lookup)
    if keyed is not None:
        model_cache.store(keyed, ex, label=f"relax_model_{len(ex.lib.function_names)}_kernels")
    return ex


def _rebuild_kernels(mod: IRModule, target, pipeline) -> Module:
    """The kernels of a model loaded from the model cache, compiled again (to show
    their source)."""
    with kernel_cache.disabled():
        return _build(mod, target, pipeline, None).lib


def _build(mod: IRModule, target, pipeline, lookup) -> Executable:
    """``build`` past the model cache: the pipeline, the kernels, the VM code."""
    with target:
        with _lookup_visible_to_passes(lookup):
            mod = _as_pass(pipeline)(mod)
        if needs_vm_lowering(mod):
            mod = vm_lowering_pipeline()(mod)
        kernel_names, kernels = unique_prim_funcs(mod)
        lib = compile_kernels(kernels, target, lookup)
    relax_names = {gv: gv.name_hint for gv, func in mod.items() if isinstance(func, Function)}
    ctx = ModuleContext(kernel_names, lib.kernel_specs, relax_names)
    functions = {name: compile_function(mod[gv], name, ctx) for gv, name in relax_names.items()}
    return Executable(lib, {"format": 1, "functions": functions}, ctx.constants)


@contextlib.contextmanager
def _lookup_visible_to_passes(lookup):
    """The pipeline's passes see ``build``'s schedule lookup (PrepackWeights schedules
    the kernels whose weights it packs ahead of the build's own scheduling). Only while
    the pipeline runs: a callable in the config keeps the kernels out of the cache."""
    config = PassContext.current().config
    if lookup is None:
        yield
        return
    saved = config.get(SCHEDULE_LOOKUP_CONFIG)
    config[SCHEDULE_LOOKUP_CONFIG] = lookup
    try:
        yield
    finally:
        if saved is None:
            config.pop(SCHEDULE_LOOKUP_CONFIG, None)
        else:
            config[SCHEDULE_LOOKUP_CONFIG] = saved


def resolve_schedule_lookup(schedule_lookup: ScheduleLookup | None = None):
    """The lookup ``build`` uses: ``schedule_lookup`` (else the PassContext's), then the
    active tuning context's (see ``CONTEXT_SCHEDULE_LOOKUP``) for what it leaves."""
    from ..runtime.registry import get_global_func
    explicit = schedule_lookup or PassContext.current().config.get(SCHEDULE_LOOKUP_CONFIG)
    provider = get_global_func(CONTEXT_SCHEDULE_LOOKUP, allow_missing=True)
    contextual = provider() if provider is not None else None
    if explicit is None or contextual is None:
        return explicit or contextual

    def chained(func, name, target):
        found = explicit(func, name, target)
        return found if found is not None else contextual(func, name, target)
    return chained


def _as_pass(pipeline) -> Pass:
    if pipeline is None or isinstance(pipeline, str):
        return get_pipeline(pipeline or "default")
    if isinstance(pipeline, Pass):
        return pipeline
    if isinstance(pipeline, (list, tuple)):
        return Sequential(list(pipeline), name="relax.user_pipeline")
    raise CodegenError(f"relax.build: pipeline is a name, a Pass or a list of Passes, found "
                       f"{type(pipeline).__name__}")


def needs_vm_lowering(mod: IRModule) -> bool:
    """Whether a Relax function still has dataflow blocks or ``call_tir``-style calls."""
    found = []

    def visit(expr):
        if isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name in (
                "relax.call_tir", "relax.call_dps_packed"):
            found.append(expr)

    for func in mod.functions.values():
        if isinstance(func, Function):
            if any(isinstance(b, DataflowBlock) for b in _blocks(func.body)):
                return True
            relax_post_order_visit(func, visit)
            if found:
                return True
    return False


def _blocks(body):
    return getattr(body, "blocks", ())


# -- kernels ---------------------------------------------------------------------------------

def unique_prim_funcs(mod: IRModule) -> tuple[dict, dict]:
    """``({GlobalVar: kernel name}, {kernel name: PrimFunc})``: equal PrimFuncs (up to
    their ``global_symbol``) share the name of the first, in name order."""
    kernel_names, kernels, buckets = {}, {}, {}
    # Name order, so which name a shared kernel takes does not depend on module order.
    for gv, func in sorted(mod.items(), key=lambda item: item[0].name_hint):
        if not isinstance(func, PrimFunc):
            continue
        key = func.replace(attrs={k: v for k, v in func.attrs.items() if k != "global_symbol"})
        bucket = buckets.setdefault(structural_hash(key), [])
        # Equal hashes do not prove equal functions: compare within the bucket.
        same = next((name for name, other in bucket if structural_equal(other, key)), None)
        if same is None:
            same = gv.name_hint
            bucket.append((same, key))
            kernels[same] = func.with_attr("global_symbol", same)
        kernel_names[gv] = same
    return kernel_names, kernels


_SCHEDULED_LOOP_KINDS = (S.ForKind.PARALLEL, S.ForKind.VECTORIZED, S.ForKind.UNROLLED,
                         S.ForKind.THREAD_BINDING)


def looks_scheduled(func: PrimFunc) -> bool:
    """Marked ``tir.is_scheduled``, or has a loop someone made parallel/vector/unrolled."""
    if func.attrs.get("tir.is_scheduled"):
        return True
    found = []
    post_order_visit(func.body, lambda node: found.append(
        isinstance(node, S.For) and node.kind in _SCHEDULED_LOOP_KINDS))
    return any(found)


def schedule_kernels(kernels: dict, target, lookup: ScheduleLookup | None) -> dict:
    """Each kernel scheduled: kept, looked up, or given the default dlight rules."""
    given, default = plan_schedules(kernels, target, lookup)
    return with_default_schedules(kernels, given, default)


def plan_schedules(kernels: dict, target, lookup: ScheduleLookup | None) -> tuple[dict, dict]:
    """``(given, default)``: the kernels with a schedule (their own, or the lookup's), and
    those left to the default rules, still unscheduled."""
    given, default = {}, {}
    for name, func in kernels.items():
        # A hand schedule wins over any lookup: it was written for this kernel.
        if looks_scheduled(func):
            given[name] = func
            continue
        found = lookup(func, name, target) if lookup is not None else None
        if found is not None:
            given[name] = _as_prim_func(found, name).with_attr("global_symbol", name)
        else:
            default[name] = func
    return given, default


def with_default_schedules(kernels: dict, given: dict, default: dict) -> dict:
    """``given`` plus ``default`` scheduled by the default CPU rules, in ``kernels``' order."""
    out = dict(given)
    if default:
        out.update(_default_schedules(default))
    return {name: out[name] for name in kernels}


def _default_schedules(default: dict) -> dict:
    """``default`` scheduled by the default CPU rules for ``Target.current()``; many
    kernels are scheduled in worker processes (:func:`.parallel_build.map_runs`)."""
    from ..dlight import ApplyDefaultSchedule, cpu
    from ..target import Target
    target = Target.current() or Target("llvm")

    def schedule(names: list) -> dict:
        with target:
            scheduled = ApplyDefaultSchedule(*cpu.default_rules())(
                IRModule({name: default[name] for name in names}))
        return {gv.name_hint: func for gv, func in scheduled.items()}
    runs = parallel_build.map_runs(list(default), schedule)
    # No workers (build_jobs chose this process) or one failed: schedule here instead.
    if runs is None:
        return schedule(list(default))
    return {name: func for run in runs for name, func in run.items()}


def _as_prim_func(found, name: str) -> PrimFunc:
    """What a schedule lookup returned -- a PrimFunc, a tir.Schedule or an IRModule of one
    PrimFunc (what tuning APIs hand back) -- as a PrimFunc."""
    mod = getattr(found, "mod", found)
    if isinstance(mod, IRModule):
        funcs = [f for f in mod.functions.values() if isinstance(f, PrimFunc)]
        found = funcs[0] if len(funcs) == 1 else found
    if not isinstance(found, PrimFunc):
        raise CodegenError(f"relax.build: schedule_lookup for kernel {name!r} returned "
                           f"{type(found).__name__}; expected a PrimFunc, a tir.Schedule or "
                           "None (use the default schedule)")
    return found


def compile_kernels(kernels: dict, target, lookup: ScheduleLookup | None) -> Module:
    """Schedule (:func:`schedule_kernels`), lower and compile ``kernels`` into one Module.

    Through the kernel cache, keyed before scheduling: kernels left to the default rules
    are hashed unscheduled, so a second build of a model skips its scheduling and
    lowering (in Python, most of its build time) as well as LLVM. Many kernels are
    scheduled, lowered and optimized in worker processes (:mod:`.parallel_build`).
    """
    if not kernels:
        # A model of packed calls only still needs a library to export the program into.
        compiled = codegen_llvm({}, target, metadata=encode_metadata([]), name="relax_vm")
        return Module({}, keepalive=compiled.keepalive, artifact=compiled.artifact)
    given, default = plan_schedules(kernels, target, lookup)
    # Sorted, so the cache key does not depend on the order of the kernels.
    fingerprints = sorted(
        [kernel_cache.kernel_fingerprint(name, func) for name, func in given.items()]
        + [kernel_cache.kernel_fingerprint(name, func, "default schedule")
           for name, func in default.items()])

    label = f"relax_{len(kernels)}_kernels"

    def build_serial() -> Module:
        with target:
            scheduled = with_default_schedules(kernels, given, default)
            return build_lowered(lower(IRModule(scheduled)), target)

    def lowered_run(names: list) -> IRModule:
        run = {name: kernels[name] for name in names}
        scheduled = with_default_schedules(
            run, {n: given[n] for n in names if n in given},
            {n: default[n] for n in names if n in default})
        return lower(IRModule(scheduled))

    def build_all() -> Module:
        return parallel_build.build_kernels(list(kernels), lowered_run, target, build_serial,
                                            label)
    return kernel_cache.cached_build(fingerprints, target, "relax.build", build_all,
                                     label=label)


__all__ = ["CONTEXT_SCHEDULE_LOOKUP", "SCHEDULE_LOOKUP_CONFIG", "build", "compile_kernels",
           "looks_scheduled", "needs_vm_lowering", "plan_schedules", "resolve_schedule_lookup",
           "schedule_kernels", "unique_prim_funcs", "with_default_schedules"]
