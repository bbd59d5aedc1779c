"""``build``: TensorIR in, a runtime Module of compiled functions out (TVM's ``tvm.build``).

It lives with the tensor-IR passes (below the graph IR) so that ``relax.build`` can
compile its kernels with it; ``mlcbench.build`` (:mod:`mlcbench.driver.build`) calls it
after turning a te schedule or a ``tir.Schedule`` into PrimFuncs.

Example::

    lib = mlcbench.build(MyModule, target="llvm")
    lib["mm_relu"](a_nd, b_nd, c_nd)
    print(lib.get_source("ll"))          # the optimized LLVM IR

The steps: lower every PrimFunc (``mlcbench.tir.transform.lower``), describe each
one's calling contract (a ``KernelSpec``: parameter names, dtypes, shapes with
symbolic dims by name), generate one LLVM module for all of them, JIT-compile it, and
wrap the addresses in a ``runtime.Module`` that checks arguments before each call.
All of them are skipped where the kernel cache holds the same functions built for the
same target (:mod:`mlcbench.codegen.kernel_cache`).

For a GPU target (``"cuda"``, a tag such as ``"nvidia/nvidia-a100"``) the functions are
lowered by :func:`mlcbench.tir.transform.lower_gpu` (host launch functions and device
kernels) and handed to ``mlcbench.codegen.gpu.build_gpu``, without the kernel cache.
"""
from __future__ import annotations

import re

from ..codegen import kernel_cache
from ..codegen.llvm import codegen_llvm, symbolic_shape_vars
from ..ir.errors import CodegenError
from ..ir.module import IRModule
from ..runtime.metadata import KernelSpec, ParamSpec, encode_metadata
from ..runtime.module import Module
from ..target import Target
from . import expr as E
from .analysis.scalar_access import scalar_access_checks
from .function import PrimFunc

__all__ = ["as_module", "as_target", "build", "build_lowered", "kernel_spec", "kernel_symbol",
           "lower", "resolve_target"]


def lower(mod_or_func, name: str = "main", target=None) -> IRModule:
    """Lower scheduled TensorIR to the form code generation consumes (``mlcbench.lower``);
    with a GPU ``target``, to the GPU lowered form (``lower_gpu``)."""
    if as_target(target).is_gpu:
        from .transform.lower_gpu import lower_gpu
        return lower_gpu(mod_or_func, as_target(target), name)
    from .transform.pipeline import lower as lower_pipeline
    return lower_pipeline(mod_or_func, name)


def build(mod_or_func, target=None, name: str | None = None) -> Module:
    """Compile a PrimFunc or an IRModule of PrimFuncs for ``target`` (default: the
    target of an enclosing ``with Target(...)``, else ``"llvm"``).

    A PrimFunc is named by its ``global_symbol`` attribute, else ``name``, else "main".
    Non-TIR functions of an IRModule (Relax) are skipped; ``relax.build`` handles them.
    A second build of structurally equal functions for the same target loads their
    machine code from the kernel cache (:mod:`mlcbench.codegen.kernel_cache`).
    """
    if as_target(target).is_gpu:
        return build_gpu_target(as_module(mod_or_func, name), as_target(target))
    target = resolve_target(target)
    mod = as_module(mod_or_func, name)
    return kernel_cache.cached_build(kernel_cache.module_fingerprints(mod), target, "tir.build",
                                     lambda: build_lowered(lower(mod), target),
                                     label=_library_label(_prim_func_names(mod)))


def build_lowered(mod, target=None) -> Module:
    """Compile PrimFuncs that are already in the lowered form (no blocks, flat buffers)."""
    target = resolve_target(target)
    mod = as_module(mod, None)
    funcs = {_function_name(gv, f): f for gv, f in mod.items() if isinstance(f, PrimFunc)}
    if not funcs:
        raise CodegenError("build: the module has no PrimFunc to compile (found "
                           f"{[gv.name_hint for gv in mod]})")
    symbols = {name: kernel_symbol(name) for name in funcs}
    specs = [kernel_spec(name, symbols[name], func) for name, func in funcs.items()]
    compiled = codegen_llvm({symbols[n]: f for n, f in funcs.items()}, target,
                            metadata=encode_metadata(specs), name=_library_label(funcs))
    kernels = {spec.name: (spec, compiled.addresses[spec.symbol]) for spec in specs}
    return Module(kernels, keepalive=compiled.keepalive, artifact=compiled.artifact,
                  type_key="llvm")


def build_gpu_target(mod: IRModule, target: Target) -> Module:
    """Lower for the GPU ``target`` and build with ``mlcbench.codegen.gpu.build_gpu``.
    An "opencl" build runs on the same simulated GPU; its device source reads as OpenCL C."""
    if target.kind.name not in ("cuda", "nvptx", "opencl"):
        raise CodegenError(f"build: target {str(target)!r} ({target.kind.name}) is not "
                           "supported; GPU code is built for 'cuda', 'opencl' or a tag such "
                           "as 'nvidia/geforce-rtx-2080-ti'")
    from .transform.lower_gpu import lower_gpu
    lowered = lower_gpu(mod, target)
    try:
        from ..codegen.gpu import build_gpu
    except ImportError as err:
        if not _lacks_gpu_codegen(err):
            raise
        raise CodegenError(f"build: target {str(target)!r} needs the GPU code generator "
                           "(mlcbench.codegen.gpu.build_gpu), which this installation "
                           f"lacks ({err}); mlcbench.tir.transform.lower_gpu(mod, target) "
                           "shows the lowered kernels") from err
    return build_gpu(lowered, target)


def _lacks_gpu_codegen(err: ImportError) -> bool:
    """The GPU code generator is absent (not: present, but failing on an import of its own)."""
    if isinstance(err, ModuleNotFoundError):
        return err.name in ("mlcbench.codegen.gpu", "mlcbench.codegen")
    return "build_gpu" in str(err)


def as_target(target) -> Target:
    """``target`` as a Target (a string, a dict of the older API, or None: the target in
    scope, else ``"llvm"``), whatever its kind."""
    if target is None:
        return Target.current() or Target("llvm")
    if isinstance(target, dict):     # {"llvm": ...} style of the older TVM API
        target = next(iter(target))
    return target if isinstance(target, Target) else Target(target)


def resolve_target(target) -> Target:
    target = as_target(target)
    if not target.is_cpu:
        raise CodegenError(f"build: target {str(target)!r} needs a {target.kind.name} device; "
                           "this runtime compiles for the CPU only (use target='llvm')")
    return target


def as_module(mod_or_func, name: str | None) -> IRModule:
    if isinstance(mod_or_func, PrimFunc):
        symbol = mod_or_func.attrs.get("global_symbol") or name or "main"
        return IRModule({symbol: mod_or_func})
    if isinstance(mod_or_func, IRModule):
        return mod_or_func
    raise CodegenError(f"build expects a PrimFunc or an IRModule, found "
                       f"{type(mod_or_func).__name__}")


def _function_name(gv, func) -> str:
    return func.attrs.get("global_symbol") or gv.name_hint


def kernel_symbol(name: str) -> str:
    """C symbol of kernel ``name``: prefixed so a kernel called ``exp`` or ``free`` cannot
    capture calls meant for the C library."""
    return "mlc_" + re.sub(r"\W", "_", name)


def _prim_func_names(mod) -> dict:
    return {_function_name(gv, f): f for gv, f in mod.items() if isinstance(f, PrimFunc)}


def _library_label(funcs: dict) -> str:
    if not funcs:
        return "module"
    first = re.sub(r"\W", "_", next(iter(funcs)))
    return first if len(funcs) == 1 else f"{first}_and_{len(funcs) - 1}_more"


def kernel_spec(name: str, symbol: str, func: PrimFunc) -> KernelSpec:
    """The calling contract of ``func``: parameters in order, then symbolic dims.

    ``def f(A: T.Buffer((n, 4)), alpha: T.float32)`` ->
    ``KernelSpec("f", symbol, (ParamSpec("A", "buffer", "float32", ("n", 4)),
    ParamSpec("alpha", "scalar", "float32", ())), shape_vars=("n",))``.
    """
    shape_vars = symbolic_shape_vars(func)
    names = _unique_names([p for p in func.params if p not in func.buffer_map] + shape_vars)
    params = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            params.append(ParamSpec(names[param], "scalar", str(param.dtype), ()))
            continue
        shape = tuple(_dim_spec(name, buffer, d, names) for d in buffer.shape)
        params.append(ParamSpec(buffer.name, "buffer", str(buffer.dtype), shape))
    checks = scalar_access_checks(func, names)
    return KernelSpec(name, symbol, tuple(params), tuple(names[v] for v in shape_vars), checks)


def _dim_spec(func_name: str, buffer, dim, names: dict):
    if isinstance(dim, E.IntImm):
        return dim.value
    if isinstance(dim, E.Var) and dim in names:
        return names[dim]
    raise CodegenError(f"build {func_name!r}: dimension `{dim}` of buffer {buffer.name!r} must "
                       "be a constant or a variable; bind a compound shape with T.match_buffer "
                       "on a variable first")


def _unique_names(variables) -> dict:
    """{Var: name}, suffixing repeats (two distinct vars named ``n`` become n, n_1)."""
    names, used = {}, set()
    for var in variables:
        base = candidate = var.name or "v"
        k = 0
        while candidate in used:
            k += 1
            candidate = f"{base}_{k}"
        names[var] = candidate
        used.add(candidate)
    return names
