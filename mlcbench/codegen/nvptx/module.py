"""The device kernels of a GPU-lowered module -> LLVM IR for ``nvptx64-nvidia-cuda`` -> PTX.

Example::

    lowered = mlcbench.tir.transform.lower_gpu(sch.mod, Target("nvidia/nvidia-a100"))
    print(ptx_source(lowered, Target("nvidia/nvidia-a100")))
    # .version 7.0
    # .target sm_80
    # .visible .entry main_kernel0( ...

The IR runs through the same -O3 pipeline as CPU code (local arrays become
registers), then LLVM's NVPTX backend prints PTX for the target's ``arch``
(``sm_75`` ... ``sm_90``), at the lowest PTX ISA version that architecture accepts.
Loading the PTX needs a CUDA driver; the simulated GPU runs the lowered kernels instead.
"""
from __future__ import annotations

from functools import lru_cache

import llvmlite.binding as llvm
from llvmlite import ir

from ...ir.errors import CodegenError
from ..llvm.engine import optimize, target_machine
from ..llvm.function import ModuleContext
from .kernel import emit_kernel

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_75"


@lru_cache(maxsize=None)
def _initialize_nvptx() -> None:
    """The NVPTX backend is not the native one: register every target LLVM was built with."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def gpu_arch(target) -> str:
    """``sm_80`` from ``Target("nvidia/nvidia-a100")``; a string target is parsed first."""
    from ...target import Target
    target = Target(target) if isinstance(target, str) else target
    arch = str((getattr(target, "attrs", None) or {}).get("arch") or DEFAULT_ARCH)
    if not arch.startswith("sm_") or not arch[3:].rstrip("a").isdigit():
        raise CodegenError(f"target {str(target)!r}: arch {arch!r} is not a CUDA compute "
                           "capability such as 'sm_75', 'sm_80' or 'sm_90'")
    return arch


def nvptx_machine(arch: str) -> llvm.TargetMachine:
    _initialize_nvptx()
    try:
        return target_machine(arch, "", TRIPLE)
    except CodegenError as err:
        raise CodegenError(f"LLVM's NVPTX backend does not accept arch {arch!r}: {err}") from None


def nvptx_ir(lowered, target) -> str:
    """Unoptimized LLVM IR of the device kernels of ``lowered`` (an IRModule from
    ``lower_gpu``, or one device kernel PrimFunc) for ``target``'s GPU."""
    from ..cuda import device_kernels
    machine = nvptx_machine(gpu_arch(target))
    module = ir.Module(name="device_kernels")
    module.triple = TRIPLE
    module.data_layout = str(machine.target_data)
    ctx = ModuleContext(module, target)
    for symbol, func in device_kernels(lowered):
        emit_kernel(ctx, symbol, func)
    return str(module)


# Intrinsics LLVM's NVPTX backend selects into PTX instructions. Anything else it
# cannot select aborts the process (llvm.pow, llvm.exp, ...), and a plain external
# function (erf, tan for float64) would need libdevice, which is not linked.
_SELECTABLE = ("llvm.nvvm.", "llvm.sqrt.", "llvm.fabs.", "llvm.floor.", "llvm.ceil.",
               "llvm.trunc.", "llvm.rint.", "llvm.nearbyint.", "llvm.roundeven.",
               "llvm.minnum.", "llvm.maxnum.", "llvm.minimum.", "llvm.maximum.",
               "llvm.round.", "llvm.exp2.f32", "llvm.fma.", "llvm.fmuladd.",
               "llvm.copysign.", "llvm.smax.", "llvm.smin.", "llvm.umax.", "llvm.umin.",
               "llvm.abs.", "llvm.ctpop.", "llvm.ctlz.", "llvm.cttz.", "llvm.bswap.",
               "llvm.memcpy.", "llvm.memset.", "llvm.memmove.", "llvm.lifetime.",
               "llvm.assume", "llvm.expect.", "llvm.experimental.noalias",
               "llvm.sadd.", "llvm.uadd.", "llvm.ssub.", "llvm.usub.", "llvm.smul.",
               "llvm.umul.", "llvm.fshl.", "llvm.fshr.", "llvm.vector.reduce.")


def check_device_calls(module) -> None:
    """A CodegenError naming each function the kernels call that a GPU cannot run."""
    defined = [f for f in module.functions if not f.is_declaration]
    for decl in module.functions:
        if not decl.is_declaration or decl.name.startswith(_SELECTABLE):
            continue
        users = [f.name for f in defined if f"@{decl.name}(" in str(f)
                 or f'@"{decl.name}"(' in str(f)]
        if not users:
            continue
        raise CodegenError(
            f"device kernel {users[0]!r} calls {_math_name(decl.name)}, which has no GPU "
            "implementation here (the NVPTX backend cannot select it and libdevice is not "
            "linked); compute it from exp, log, sqrt or arithmetic instead")


def _math_name(name: str) -> str:
    """``'pow' (llvm.pow.f32)`` for an intrinsic, ``'erf'`` for a library function."""
    if name.startswith("llvm."):
        return f"{name.split('.')[1]!r} ({name})"
    return repr(name)


def ptx_source(lowered, target) -> str:
    """PTX text of the device kernels of ``lowered`` for ``target`` (see the module docstring)."""
    machine = nvptx_machine(gpu_arch(target))
    text = nvptx_ir(lowered, target)
    try:
        module = llvm.parse_assembly(text)
        module.verify()
    except RuntimeError as err:
        raise CodegenError(f"LLVM rejected the NVPTX IR of the device kernels: {err}") from None
    check_device_calls(module)
    optimize(module, machine)
    # -O3 may turn arithmetic into intrinsic calls of its own: check what the backend gets.
    check_device_calls(module)
    try:
        return machine.emit_assembly(module)
    except RuntimeError as err:
        raise CodegenError(f"LLVM's NVPTX backend failed to print PTX: {err}") from None
