"""The public spelling ``mlcbench.build`` / ``mlcbench.lower`` over :mod:`mlcbench.tir.build`.

The compiler itself (lowering, kernel specs, LLVM, the kernel cache) is in
:mod:`mlcbench.tir.build`, below the graph IR, so that ``relax.build`` compiles its
kernels with the same code. What this module adds is the inputs the older tutorials
pass: a te schedule with its argument list, or a ``tir.Schedule``, each turned into
PrimFuncs first::

    s = te.create_schedule(C.op)
    func = mlcbench.build(s, [A, B, C], target="llvm", name="mmult")
    print(mlcbench.lower(s, [A, B, C]))
"""
import sys

from ..ir.errors import InvalidTypeError
from ..tir import build as _tir
from ..tir.build import as_module, build_lowered, kernel_spec, kernel_symbol, resolve_target

__all__ = ["as_module", "build", "build_lowered", "compile_module", "kernel_spec",
           "kernel_symbol", "lower", "resolve_target"]


def _te_schedule_type():
    # a te schedule exists only once mlcbench.te.schedule was imported: no import needed
    module = sys.modules.get("mlcbench.te.schedule")
    return None if module is None else module.Schedule


def _scheduled(inputs, args, name, target=None):
    """A te schedule with its arguments, or a tir.Schedule, as a PrimFunc / IRModule;
    a te schedule's thread bindings are refused unless ``target`` is a GPU."""
    te_schedule = _te_schedule_type()
    if te_schedule is not None and isinstance(inputs, te_schedule):
        if args is None:
            from ..ir.errors import ScheduleError
            raise ScheduleError("build/lower of a te schedule needs its arguments: "
                                "build(s, [A, B, C], target='llvm')")
        if not _tir.as_target(target).is_gpu:
            inputs.refuse_thread_bindings()
        return inputs.to_prim_func(list(args), name or "main")
    from ..tir.schedule import Schedule
    # A PrimFunc or an IRModule passes through to tir.build as it is.
    return inputs.mod if isinstance(inputs, Schedule) else inputs


def build(inputs, args=None, target=None, name=None, *, target_host=None):
    """Compile a PrimFunc, an IRModule, a tir.Schedule, or a te schedule with ``args``.

    For a PrimFunc or an IRModule the second positional argument is the target, as in
    TVM unity (``build(mod, "llvm")``); for a te schedule it is the argument list, as in
    the older TVM (``build(s, [A, B, C], "llvm", name="mmult")``). ``target_host`` of the
    older API must be a CPU target; the host and the target are then one machine.
    """
    # Only checked: host and target are one machine here, so it selects nothing.
    if target_host is not None:
        resolve_target(target_host)
    te_schedule = _te_schedule_type()
    if te_schedule is None or not isinstance(inputs, te_schedule):
        if args is not None and not isinstance(args, (list, tuple)):
            # build(mod, target, name): the older positional order of this function
            name = target if name is None else name
            target, args = args, None
    else:
        _tir.as_target(target)      # a bad target is refused before the schedule is read
    return _tir.build(_scheduled(inputs, args, name, target), target, name)


def lower(inputs, args=None, name: str = "main", simple_mode: bool = False, target=None):
    """Lower scheduled TensorIR (or a te schedule with ``args``) for code generation.

    ``simple_mode=True`` is TVM's way to print the compact loop nest, without the loop
    partitioning its pipeline otherwise runs; this pipeline never partitions loops
    (:func:`~mlcbench.tir.transform.default_lowering_pipeline`), so both values give
    that compact form. A GPU ``target`` (``"cuda"``) gives the GPU lowered form
    (:func:`mlcbench.tir.transform.lower_gpu`: host launches and device kernels).
    """
    if not isinstance(simple_mode, bool):
        raise InvalidTypeError(f"lower: simple_mode must be True or False, found "
                               f"{type(simple_mode).__name__} {simple_mode!r}")
    # lower(mod, "name"): the second positional argument is the name when it is a string.
    if isinstance(args, str):
        name, args = args, None
    return _tir.lower(_scheduled(inputs, args, name, target), name, target=target)


def compile_module(mod, target=None, **kwargs):
    """Current TVM's ``tvm.compile(mod, target)``: a module holding Relax functions is
    built by ``relax.build`` (an Executable for ``relax.VirtualMachine``), one of
    PrimFuncs only by :func:`build` (a runtime Module)."""
    from ..relax.expr import Function
    from ..relax.vm_build import build as relax_build
    if isinstance(mod, Function) or (hasattr(mod, "functions") and any(
            isinstance(func, Function) for func in mod.functions.values())):
        return relax_build(mod, target, **kwargs)
    return build(mod, target=target, **kwargs)
