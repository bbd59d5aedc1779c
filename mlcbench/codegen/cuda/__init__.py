"""Readable CUDA C (and OpenCL C) of the device kernels of the GPU lowered form.

For learners, as TVM prints ``rt_mod.imported_modules[0].get_source()``::

    lowered = mlcbench.tir.transform.lower_gpu(sch.mod, Target("cuda"))
    print(cuda_source(lowered))
    # extern "C" __global__ void __launch_bounds__(128) main_kernel0(float* __restrict__ A, ...) {
    #   __shared__ float A_shared[130];
    #   ...
    #   __syncthreads();
    #   B[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))] = ...;
    # }

This text is for reading: the simulated GPU runs the lowered kernels themselves, and
the PTX comes from mlcbench.codegen.nvptx.
"""
from __future__ import annotations

from ...ir.errors import CodegenError, InvalidTypeError
from ...ir.module import IRModule
from ...tir.function import PrimFunc
from .dialect import CUDA, DIALECTS, OPENCL, Dialect
from .printer import KernelPrinter

__all__ = ["cuda_source", "opencl_source", "device_kernels", "Dialect", "CUDA", "OPENCL"]

# nvrtc has no <cstdint>: the 64-bit integer names are macros, as in TVM's preamble.
_CUDA_INT64 = "#define int64_t long long\n#define uint64_t unsigned long long\n"


def device_kernels(lowered) -> list:
    """``[(symbol, PrimFunc)]`` of the device kernels (``calling_conv == "device_kernel"``)
    of a GPU-lowered IRModule, in module order; a lone kernel PrimFunc also works."""
    if isinstance(lowered, PrimFunc):
        functions = {lowered.attrs.get("global_symbol") or "kernel": lowered}
    elif isinstance(lowered, IRModule):
        functions = {getattr(gv, "name_hint", str(gv)): f for gv, f in lowered.functions.items()}
    else:
        raise InvalidTypeError(f"expected a GPU-lowered IRModule (or one device kernel "
                               f"PrimFunc), found {type(lowered).__name__}")
    kernels = [(func.attrs.get("global_symbol") or name, func)
               for name, func in functions.items()
               if isinstance(func, PrimFunc) and func.attrs.get("calling_conv") == "device_kernel"]
    if not kernels:
        raise CodegenError("no device kernels (PrimFuncs with calling_conv 'device_kernel') "
                           f"among {sorted(functions)}: lower for a GPU target first, "
                           "mlcbench.tir.transform.lower_gpu(mod, Target('cuda'))")
    return kernels


def device_source(lowered, dialect: Dialect) -> str:
    """All device kernels of ``lowered`` printed in ``dialect``, one after another."""
    texts = [KernelPrinter(dialect, func, symbol).print_kernel()
             for symbol, func in device_kernels(lowered)]
    source = "\n\n".join(texts) + "\n"
    if dialect is CUDA and "int64_t" in source:
        source = _CUDA_INT64 + "\n" + source
    return source


def cuda_source(lowered) -> str:
    """CUDA C of the device kernels of a GPU-lowered module (see the module docstring)."""
    return device_source(lowered, CUDA)


def opencl_source(lowered) -> str:
    """The same kernels as OpenCL C: ``__kernel``, ``__local``, ``get_local_id(0)``,
    ``barrier(CLK_LOCAL_MEM_FENCE)`` (course chapter 7 prints both)."""
    return device_source(lowered, OPENCL)
