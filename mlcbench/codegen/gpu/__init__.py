"""The simulated GPU: GPU kernels run on the CPU with GPU semantics, and counted.

``build_gpu(lowered_mod, target)`` turns a module in the GPU lowered form (device
kernels plus host functions that launch them, from ``tir.transform.lower_gpu``) into a
runtime Module whose functions run on ``mlcbench.cuda(0)``:

* execution (:mod:`.threads`): each kernel becomes one CPU function, blocks as a
  parallel loop, threads as loops pushed down between barriers;
* counters (:mod:`.trace`, :mod:`.access`, :mod:`.sampling`): global transactions
  (coalescing), shared memory bank conflicts, FLOPs, traced with numpy on sample blocks
  and iterations; races on shared memory and out-of-bounds accesses are errors;
* bounds (:mod:`.bounds`): every access the build cannot prove inside is checked in
  the CPU code too, in every block, skipped and reported when it misses;
* modeled time (:mod:`.model`): a roofline over the target's bandwidth and FLOP rate,
  scaled by occupancy. ``time_evaluator`` reports it; :func:`profile` gives the table.
"""
from __future__ import annotations

from ...ir.errors import CodegenError
from ...runtime.device import gpu_backend
from ...target import Target
from ...tir.function import PrimFunc
from .access import AccessCounts, GPUSimulationError
from .cpu_build import compile_cpu_functions
from .launch import launch_nest, launch_sequence
from .model import GPUSpec
from .module import GPUFunction, GPUKernel, GPUModule, HostFunction
from .profile import GPUProfile, KernelProfile
from .source import DeviceSourceModule
from .threads import kernel_as_cpu_func
from .warp import simulate_shuffles

__all__ = ["AccessCounts", "GPUModule", "GPUProfile", "GPUSimulationError", "GPUSpec",
           "KernelProfile", "build_gpu", "profile"]


def build_gpu(lowered_mod, target, backend: str | None = None) -> GPUModule:
    """A runtime Module for ``lowered_mod`` (GPU lowered form) on ``cuda(0)``: the
    simulated GPU, or a real device when ``backend`` (default: ``gpu_backend()``) is
    ``"cuda"`` (:mod:`.cuda_module`).

    A kernel that no host function launches is callable under its own name with its
    own parameters (handy for kernels written by hand in the lowered form).
    """
    target = target if isinstance(target, Target) else Target(target)
    kernels, hosts = _split(lowered_mod)
    if not kernels:
        raise CodegenError("build_gpu: the module has no device kernel (a PrimFunc with "
                           "calling_conv 'device_kernel')")
    if (backend or gpu_backend()) == "cuda":
        nests = {name: launch_nest(func, name) for name, func in kernels.items()}
        return _build_cuda(lowered_mod, target, kernels, hosts, nests)
    # The CPU threads of a block see each other's registers only through memory.
    kernels = {name: simulate_shuffles(func, name) for name, func in kernels.items()}
    nests = {name: launch_nest(func, name) for name, func in kernels.items()}
    checked = {name: kernel_as_cpu_func(func, nests[name]) for name, func in kernels.items()}
    cpu_module = compile_cpu_functions({n: f for n, (f, _) in checked.items()}, Target("llvm"))
    compiled = {name: GPUKernel(name, kernels[name], nests[name], cpu_module[name],
                                checked[name][1]) for name in kernels}
    spec = GPUSpec.from_target(target)
    hosts = _host_functions(kernels, hosts, compiled, HostFunction)
    functions = {name: GPUFunction(host, spec, str(target)) for name, host in hosts.items()}
    device = DeviceSourceModule(lowered_mod, target, list(kernels))
    return GPUModule(functions, device, cpu_module)


def profile(rt_mod: GPUModule, func_name: str, *args, run: bool = True) -> GPUProfile:
    """``rt_mod.profile(func_name, *args)``: run once (``run=False``: only trace) and
    return the counters and the modeled time."""
    if not isinstance(rt_mod, GPUModule):
        raise CodegenError(f"profile: expected a Module built for a GPU target, found "
                           f"{type(rt_mod).__name__}")
    return rt_mod.profile(func_name, *args, run=run)


def _split(lowered_mod) -> tuple:
    kernels, hosts = {}, {}
    for gv, func in lowered_mod.items():
        if not isinstance(func, PrimFunc):
            continue
        name = func.attrs.get("global_symbol") or gv.name_hint
        is_kernel = func.attrs.get("calling_conv") == "device_kernel"
        (kernels if is_kernel else hosts)[name] = func
    return kernels, hosts


def _build_cuda(lowered_mod, target, kernels, hosts, nests):
    """The Module of :mod:`.cuda_module`: the same host functions, kernels on device 0."""
    from .cuda_module import CUDAHostFunction, CUDAKernel, CUDAModule
    compiled = {name: CUDAKernel(name, func, nests[name]) for name, func in kernels.items()}
    functions = _host_functions(kernels, hosts, compiled, CUDAHostFunction)
    device = DeviceSourceModule(lowered_mod, target, list(kernels))
    return CUDAModule(functions, compiled, device, str(target))


def _host_functions(kernels, hosts, compiled, host_class) -> dict:
    """{name: host_class}: the host functions with their launches, then each kernel that
    none launches, as a function of its own that launches it."""
    from .launch import Launch
    functions = {}
    for name, func in hosts.items():
        launches, allocations = launch_sequence(func, name)
        for launch in launches:
            if launch.kernel not in compiled:
                raise CodegenError(f"host function {name!r} launches {launch.kernel!r}, "
                                   f"which the module does not define")
        functions[name] = host_class(name, func, launches, allocations, compiled)
    launched = {launch.kernel for host in functions.values() for launch in host.launches}
    for name, func in kernels.items():
        if name not in launched and name not in functions:
            functions[name] = host_class(name, func, [Launch(name, tuple(func.params))], [],
                                         compiled)
    return functions
