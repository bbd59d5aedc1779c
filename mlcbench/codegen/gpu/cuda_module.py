"""The runtime Module of a GPU build on a real CUDA device (``gpu_backend() == "cuda"``).

The device kernels are printed as PTX (:func:`~mlcbench.codegen.nvptx.ptx_source`) at
build time, and each ``.entry`` is checked against what a launch passes
(:mod:`~mlcbench.codegen.nvptx.entry`). On the first call the PTX is loaded into device
0 (``cuModuleLoadData``; its ``.target`` must not be newer than the device). Calling a
host function launches its kernels in order on the default stream, with the grid and
block of each kernel's launch nest and the device addresses of the arrays, then waits
for them; ``time_evaluator`` times ``number`` calls between two CUDA events.
"""
from __future__ import annotations

import ctypes
import math

import numpy as np

from ...ir.errors import CodegenError, RuntimeError_
from ...runtime import cuda_driver
from ...runtime.benchmark import BenchmarkResult
from ...runtime.cuda_ndarray import CUDANDArray, cuda_empty
from ...runtime.device import cuda
from ...runtime.errors import ArgumentTypeError, ArgumentValueError
from ...runtime.module import TimeEvaluator
from ...tir import expr as E
from ..llvm.function import symbolic_shape_vars
from ..nvptx.entry import check_entry, ptx_entries, ptx_target
from .module import GPUModule, HostFunction

_CTYPES = {"int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
           "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16,
           "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64, "bool": ctypes.c_uint8,
           "float32": ctypes.c_float, "float64": ctypes.c_double}


def _scalar(value, dtype) -> ctypes._SimpleCData:
    """A launch parameter of TIR type ``dtype`` (float16 as its 16 bits)."""
    name = str(dtype)
    if name == "float16":
        return ctypes.c_uint16(int(np.float16(value).view(np.uint16)))
    if name not in _CTYPES:
        raise ArgumentTypeError(f"a kernel parameter of type {name} cannot be passed to a "
                                "CUDA launch")
    return _CTYPES[name](value)


class CUDAKernel:
    """One device kernel on the real device: its launch nest and its CUfunction."""

    def __init__(self, name, func, nest):
        self.name, self.func, self.nest = name, func, nest
        self.shape_vars = symbolic_shape_vars(func)
        self.function = None             # set when the module is loaded

    def params(self, values: list) -> list:
        """ctypes values for ``values`` (arrays, allocations, scalars) in the PTX entry's
        order, the symbolic dimensions (read off the arrays' shapes) last."""
        return self._params_and_dims(values)[0]

    def _params_and_dims(self, values: list) -> tuple:
        params, dims = [], {}
        for param, value in zip(self.func.params, values):
            buffer = self.func.buffer_map.get(param)
            if buffer is None:
                params.append(_scalar(value, param.dtype))
                continue
            params.append(ctypes.c_uint64(value.data_ptr))
            for dim, size in zip(buffer.shape, value.shape):
                if isinstance(dim, E.Var):
                    dims[dim] = size
        for var in self.shape_vars:
            if var not in dims:
                raise ArgumentValueError(f"kernel {self.name}: dimension {var.name} is not "
                                         "the dimension of any array argument")
            params.append(ctypes.c_int64(dims[var]))
        return params, dims

    def launch(self, values: list) -> None:
        params, dims = self._params_and_dims(values)
        # A grid of the symbolic dimensions is computed for these arguments.
        grid = self.nest.bound(dims).grid
        if 0 in grid:
            return                  # no blocks (n = 0): CUDA refuses an empty grid
        cuda_driver.launch(self.function, grid, self.nest.block_dim, params)


class CUDAHostFunction(HostFunction):
    """A host function whose arrays are in device memory (CUDANDArrays)."""

    def __init__(self, name, func, launches, allocations, kernels):
        super().__init__(name, func, launches, allocations, kernels)
        self._scratch: list = []     # the global allocations, made on the first call

    def _bind_intermediates(self, env: dict) -> None:
        # Global memory between kernels, reused by every call: calls queue on one stream,
        # so a call's kernels never overlap the previous call's.
        if len(self._scratch) != len(self.allocations):
            self._scratch = [cuda_empty(tuple(int(d) for d in buffer.shape),
                                        buffer.dtype.to_numpy(), cuda(0))
                             for buffer in self.allocations]
        for buffer, array in zip(self.allocations, self._scratch):
            env[buffer.data] = array

    def _device_array(self, param, arg):
        super()._device_array(param, arg)        # kind, device, dtype and shape
        if not isinstance(arg, CUDANDArray):
            raise ArgumentValueError(f"{self.name}: argument {self._param_name(param)!r} "
                                     "is not in the GPU's memory; make it with "
                                     "mlcbench.nd.array(x, mlcbench.cuda(0))")
        return arg


class CUDAFunction:
    """``rt_mod["main"]``: checks the arguments, launches the kernels, waits for them."""

    def __init__(self, host: CUDAHostFunction, module: "CUDAModule"):
        self.host, self.module = host, module

    def __call__(self, *args) -> None:
        self.launch_all(args)
        cuda_driver.context().synchronize()

    def launch_all(self, args) -> None:
        """Queue the kernel launches of one call (no wait)."""
        self.module.load()
        cuda_driver.context()          # current on this thread too
        env = self.host.bind(args)
        for launch in self.host.launches:
            self.host.kernels[launch.kernel].launch(self.host.launch_args(launch, env))


class CUDAModule(GPUModule):
    """The host functions of a GPU build on device 0; ``imported_modules[0]`` is the
    device code (CUDA C and the PTX that runs)."""

    def __init__(self, hosts: dict, kernels: dict, device_module, target_name: str):
        super().__init__({}, device_module, None)
        self._gpu_functions = {name: CUDAFunction(host, self) for name, host in hosts.items()}
        self._kernels, self._target_name = kernels, target_name
        self.ptx = device_module.get_source("ptx")
        entries = ptx_entries(self.ptx)
        for name, kernel in kernels.items():
            if name not in entries:
                raise CodegenError(f"the PTX of {target_name!r} has no .entry {name}")
            check_entry(entries[name], kernel.func)
        self._handle = None

    def load(self) -> None:
        """Load the PTX into device 0 (once) and look up each kernel."""
        if self._handle is not None:
            return
        device = cuda_driver.context()
        arch = ptx_target(self.ptx)
        if _arch_number(arch) > _arch_number(device.arch):
            raise RuntimeError_(f"the kernels were built for {arch} (target "
                                f"{self._target_name!r}), but device 0 ({device.name}) is "
                                f"{device.arch}; build for 'cuda' or this GPU's tag")
        handle = cuda_driver.load_module(self.ptx)
        for name, kernel in self._kernels.items():
            kernel.function = cuda_driver.get_function(handle, name)
        self._handle = handle

    def get_source(self, fmt: str = "ptx") -> str:
        """The PTX that runs (``"ptx"``); CUDA C is ``imported_modules[0].get_source()``."""
        return self.imported_modules[0].get_source(fmt)

    def export_library(self, *args, **kwargs) -> None:
        raise RuntimeError_("export_library: a module built for a CUDA device cannot be "
                            "exported; build it again in the process that runs it")

    def profile(self, func_name: str, *args, run: bool = True):
        raise RuntimeError_("profile: the access counters come from the simulated GPU; "
                            "run with MLCBENCH_GPU=sim to see them (this module runs on a "
                            "real device, whose profiler is Nsight Compute)")

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: float = 0, limit_zero_time_iterations: int = 100,
                       cooldown_interval_ms: float = 0, repeats_to_cooldown: int = 1,
                       cache_flush_bytes: int = 0, f_preproc: str = "", *, ctx=None):
        """TVM's signature: ``repeat`` times, the mean of ``number`` calls timed with CUDA
        events (``number`` grows until a repeat lasts ``min_repeat_ms``), after one call
        that loads the kernels and computes the results."""
        function = self._timed_function(func_name, dev, ctx, number, repeat)

        def evaluator(*call_args):
            function(*call_args)
            results = []
            for _ in range(repeat):
                count = number
                seconds = cuda_driver.time_calls(lambda: function.launch_all(call_args), count)
                while min_repeat_ms and seconds * count * 1e3 < min_repeat_ms:
                    count = max(count * 2, math.ceil(min_repeat_ms / max(seconds * 1e3, 1e-6)))
                    seconds = cuda_driver.time_calls(lambda: function.launch_all(call_args),
                                                     count)
                results.append(seconds)
            return BenchmarkResult(tuple(results))
        return TimeEvaluator(func_name, evaluator)

    def __repr__(self) -> str:
        return f"Module(cuda, device 0, functions={self.function_names})"


def _arch_number(arch: str) -> int:
    return int(arch[3:].rstrip("a"))
