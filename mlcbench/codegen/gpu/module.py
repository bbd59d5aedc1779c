"""The runtime Module of a GPU build, run by the simulated GPU.

>>> rt_mod = mlcbench.build(sch.mod, target="cuda")               # doctest: +SKIP
>>> rt_mod["main"](a_nd, b_nd, c_nd)          # arrays on mlcbench.cuda(0)
>>> rt_mod.time_evaluator("main", mlcbench.cuda(0), number=10)(a_nd, b_nd, c_nd).mean
>>> print(rt_mod.profile("main", a_nd, b_nd, c_nd))               # the counters
>>> print(rt_mod.imported_modules[0].get_source())                # CUDA C

Calling a host function launches its kernels in order: each kernel is compiled to a
CPU function (:mod:`.threads`) and, on the first call, traced (:mod:`.trace`) on the
call's arguments, which raises on data races and out-of-bounds accesses before any
kernel runs and gives the counters; the CPU functions check the accesses the build could
not prove inside (:mod:`.bounds`) in every block and raise after the call. ``time_evaluator`` reports the *modeled* time of
those counters (:mod:`.model`), not the time the CPU took.
"""
from __future__ import annotations

import numpy as np

from ...ir.errors import RuntimeError_
from ...runtime.benchmark import BenchmarkResult
from ...runtime.device import as_device, kDLCUDA, require_gpu
from ...runtime.errors import ArgumentTypeError, ArgumentValueError
from ...runtime.module import FunctionNotFoundError, Module, TimeEvaluator
from ...runtime.ndarray import NDArray, device_or_ctx
from ...tir import expr as E
from .bounds import new_record, raise_on_record
from .model import machine_peaks
from .profile import GPUProfile, profile_kernel


class GPUKernel:
    """One device kernel: its launch nest, the buffers of its params, its CPU function."""

    def __init__(self, name, func, nest, cpu_function, accesses=()):
        self.name, self.func, self.nest, self.cpu_function = name, func, nest, cpu_function
        self.accesses = list(accesses)

    def run(self, cpu_args, nest=None) -> None:
        """Run every block of ``nest`` (this kernel's, its grid computed for these
        arguments); an out-of-bounds access (skipped) raises afterwards."""
        nest = nest or self.nest
        record = new_record(nest.num_blocks)
        self.cpu_function(*cpu_args, record)
        raise_on_record(self.name, nest, record, self.accesses)

    def buffers(self, values: list) -> tuple:
        """(arguments for the CPU function, the tracer's bindings): flat arrays by data
        var, and the values of scalar params and symbolic dimensions by var."""
        args, bindings = [], {}
        for param, value in zip(self.func.params, values):
            buffer = self.func.buffer_map.get(param)
            if buffer is None:
                args.append(value)
                bindings[param] = value
                continue
            args.append(self._shaped(buffer, value, bindings))
            # The tracer reads flat memory, as the lowered kernel indexes it.
            bindings[buffer.data] = value.reshape(-1)
        return args, bindings

    def _shaped(self, buffer, value, bindings) -> np.ndarray:
        """``value`` in ``buffer``'s shape; symbolic dimensions are bound from it."""
        dims = [d.value if isinstance(d, E.IntImm) else d for d in buffer.shape]
        if any(isinstance(d, E.Var) for d in dims):
            if value.ndim != len(dims):
                raise ArgumentValueError(f"kernel {self.name}: buffer {buffer.name!r} has "
                                         f"{len(dims)} dimensions, found shape {value.shape}")
            for dim, size in zip(dims, value.shape):
                if isinstance(dim, E.Var):
                    bindings[dim] = size
            return value
        if value.size != int(np.prod(dims)):
            raise ArgumentValueError(f"kernel {self.name}: buffer {buffer.name!r} needs "
                                     f"{int(np.prod(dims))} elements, found {value.size}")
        return value.reshape(dims)


class HostFunction:
    """A host function: its params and the kernels it launches, with the arguments."""

    def __init__(self, name, func, launches, allocations, kernels):
        self.name, self.func = name, func
        self.launches, self.allocations, self.kernels = launches, allocations, kernels

    def bind(self, args) -> dict:
        """{Var: numpy array or scalar} for the params, checked as TVM checks them, and
        for the global intermediates between kernels."""
        env = self._bind_params(args)
        self._bind_intermediates(env)
        return env

    def _bind_params(self, args) -> dict:
        params = self.func.params
        if len(args) != len(params):
            names = ", ".join(self._param_name(p) for p in params)
            raise ArgumentValueError(f"{self.name}: expected {len(params)} arguments "
                                     f"({names}), found {len(args)}")
        env = {}
        for param, arg in zip(params, args):
            buffer = self.func.buffer_map.get(param)
            if buffer is None:
                env[param] = arg
                continue
            env[param] = env[buffer.data] = self._device_array(param, arg)
        return env

    def _bind_intermediates(self, env: dict) -> None:
        for buffer in self.allocations:
            shape = tuple(int(d) for d in buffer.shape)
            # Zeroed: an intermediate holds the same values on every call before a kernel writes it.
            env[buffer.data] = np.zeros(shape, dtype=buffer.dtype.to_numpy())

    def _param_name(self, param) -> str:
        buffer = self.func.buffer_map.get(param)
        return buffer.name if buffer is not None else param.name

    def _device_array(self, param, arg) -> np.ndarray:
        name = self._param_name(param)
        if not isinstance(arg, NDArray):
            raise ArgumentTypeError(
                f"{self.name}: argument {name!r}: expected an NDArray on cuda(0), found "
                f"{type(arg).__name__}; make one with mlcbench.nd.array(x, mlcbench.cuda(0))")
        if arg.device.device_type != kDLCUDA:
            raise ArgumentValueError(
                f"{self.name}: argument {name!r} is on {arg.device}, but {self.name} runs on "
                f"cuda(0); copy it with mlcbench.nd.array(x, mlcbench.cuda(0)) or "
                f"x.copyto(mlcbench.cuda(0))")
        buffer = self.func.buffer_map[param]
        if str(arg.dtype) != str(buffer.dtype):
            raise ArgumentValueError(f"{self.name}: argument {name!r}: expected dtype "
                                     f"{buffer.dtype}, found {arg.dtype}")
        want = [d.value if isinstance(d, E.IntImm) else None for d in buffer.shape]
        if len(want) != len(arg.shape) or any(w not in (None, g) for w, g in zip(want, arg.shape)):
            shape = tuple(w if w is not None else str(d) for w, d in zip(want, buffer.shape))
            raise ArgumentValueError(f"{self.name}: argument {name!r}: expected shape "
                                     f"{shape}, found {tuple(arg.shape)}")
        return arg._array

    def launch_args(self, launch, env) -> list:
        values = []
        for expr in launch.args:
            if isinstance(expr, (E.IntImm, E.FloatImm)):
                values.append(expr.value)
            elif isinstance(expr, E.Var) and expr in env:
                values.append(env[expr])
            else:
                raise RuntimeError_(f"{self.name}: launch of {launch.kernel} passes `{expr}`, "
                                    "which is not a parameter, an allocation or a constant")
        return values


class GPUFunction:
    """``rt_mod["main"]``: checks arguments, traces once, runs the kernels on the CPU."""

    def __init__(self, host: HostFunction, spec, target_name: str):
        self.host, self.spec, self.target_name = host, spec, target_name
        self._profiles: dict = {}
        self.last_profile: GPUProfile | None = None

    def __call__(self, *args) -> None:
        self.run(args)

    def run(self, args, trace: bool = False, execute: bool = True) -> GPUProfile:
        """Check, trace (the first time for these shapes, or when ``trace``), run."""
        require_gpu(as_device("cuda"), f"{self.host.name}")
        env = self.host.bind(args)
        planned = []
        for launch in self.host.launches:
            kernel = self.host.kernels[launch.kernel]
            planned.append((kernel, *kernel.buffers(self.host.launch_args(launch, env))))
        # Traced once per signature of shapes and scalars: later calls with new data reuse it.
        key = _signature(args)
        if trace or key not in self._profiles:
            kernels = tuple(profile_kernel(k.nest.bound(g), g, self.spec)
                            for k, _, g in planned)
            self._profiles[key] = GPUProfile(self.host.name, self.target_name, kernels,
                                             machine_peaks(self.spec))
        self.last_profile = self._profiles[key]
        for kernel, cpu_args, bindings in planned if execute else ():
            kernel.run(cpu_args, kernel.nest.bound(bindings))
        return self.last_profile


def _signature(args) -> tuple:
    """What the counters depend on besides the data: array shapes and dtypes, scalars."""
    return tuple((a.shape, str(a.dtype)) if isinstance(a, NDArray) else a for a in args)


class GPUModule(Module):
    """The host functions of a GPU build; ``imported_modules[0]`` is the device code."""

    def __init__(self, functions: dict, device_module, cpu_module: Module):
        super().__init__({}, type_key="cuda")
        self._gpu_functions = functions
        self._cpu_module = cpu_module
        self.import_module(device_module)

    @property
    def entry_name(self) -> str:
        return next(iter(self._gpu_functions), "")

    @property
    def function_names(self) -> list:
        return list(self._gpu_functions)

    def get_function(self, name: str, query_imports: bool = False):
        if name not in self._gpu_functions:
            known = ", ".join(self._gpu_functions) or "none"
            raise FunctionNotFoundError(f"module has no function {name!r} (it has: {known})")
        return self._gpu_functions[name]

    def _has(self, name: str, recursive: bool) -> bool:
        return name in self._gpu_functions

    def __contains__(self, name: str) -> bool:
        return name in self._gpu_functions

    def get_source(self, fmt: str = "ll") -> str:
        """The CPU code the simulator runs (``"ll"`` or ``"asm"``); the CUDA C and PTX
        are ``imported_modules[0].get_source("cu" | "ptx")``."""
        return self._cpu_module.get_source(fmt)

    def export_library(self, *args, **kwargs) -> None:
        raise RuntimeError_("export_library: a module built for the simulated GPU cannot be "
                            "exported; build it again in the process that runs it")

    def profile(self, func_name: str, *args, run: bool = True) -> GPUProfile:
        """Run ``func_name`` once on ``args`` and return its counters (``print`` them).

        ``run=False`` only traces (races and bounds are still checked) and leaves the
        arrays as they were: the modeled time of a tuning candidate, at a fraction of
        the cost of running it on the CPU.
        """
        return self.get_function(func_name).run(args, trace=True, execute=run)

    def _timed_function(self, func_name: str, dev, ctx, number: int, repeat: int):
        """The function ``time_evaluator`` times, its device and counts checked."""
        function = self.get_function(func_name)
        device = as_device(device_or_ctx(dev, ctx, "time_evaluator"))
        if device.device_type != kDLCUDA:
            raise ArgumentValueError(f"time_evaluator: {func_name} runs on cuda(0), found "
                                     f"{device}")
        if number < 1 or repeat < 1:
            raise ArgumentValueError(f"number and repeat must be >= 1, found number={number}, "
                                     f"repeat={repeat}")
        return function

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: float = 0, limit_zero_time_iterations: int = 100,
                       cooldown_interval_ms: float = 0, repeats_to_cooldown: int = 1,
                       cache_flush_bytes: int = 0, f_preproc: str = "", *, ctx=None):
        """TVM's signature; the evaluator runs the function once (so its results are
        computed) and reports the modeled time of one call, ``repeat`` times. The
        arguments that shape a measurement (``number``, ``min_repeat_ms``, cooldowns,
        cache flushes) change nothing in a model and are only checked."""
        function = self._timed_function(func_name, dev, ctx, number, repeat)

        def evaluator(*call_args):
            found = function.run(call_args)
            # A model gives the same time on every repeat: report it repeat times.
            return BenchmarkResult((found.seconds,) * repeat)
        return TimeEvaluator(func_name, evaluator)

    def __repr__(self) -> str:
        return f"Module(cuda, simulated, functions={self.function_names})"
