"""Module: the container of compiled functions that ``mlcbench.build`` returns::

    lib = mlcbench.build(mod, target="llvm")
    lib["mm_relu"](a_nd, b_nd, c_nd)                         # run, arguments checked
    lib.time_evaluator("mm_relu", mlcbench.cpu(), number=10)(a_nd, b_nd, c_nd).mean
    lib.export_library("mm_relu.so")                         # and later, anywhere:
    mlcbench.runtime.load_module("mm_relu.so")["mm_relu"](a_nd, b_nd, c_nd)

A Module maps names to ``(KernelSpec, address)`` pairs. The machine code at those
addresses belongs to ``keepalive`` (a JIT engine, or the loaded shared library): the
Module and every PackedFunc taken from it hold a reference to it, because a freed JIT
engine leaves the address pointing at whatever code is loaded there next.
"""
from __future__ import annotations

from ..ir.errors import RuntimeError_
from .benchmark import measure
from .device import NO_GPU_MESSAGE, as_device, kDLCPU
from .errors import ArgumentTypeError
from .metadata import KernelSpec
from .ndarray import device_or_ctx
from .packed_func import PackedFunc
from .registry import get_global_func


class FunctionNotFoundError(RuntimeError_, AttributeError):
    """``mod["name"]`` for a name the module does not define (an AttributeError, as in TVM)."""


class Module:
    """Compiled functions plus what keeps their code alive; see the module docstring.

    ``artifact``, when given, provides ``emit_object() -> bytes`` (a position-independent
    ELF object embedding the metadata) and ``get_source(fmt) -> str``.
    """

    def __init__(self, kernels: dict, keepalive=None, artifact=None, type_key: str = "llvm"):
        for name, entry in kernels.items():
            if not (isinstance(entry, tuple) and len(entry) == 2
                    and isinstance(entry[0], KernelSpec) and isinstance(entry[1], int)):
                raise ArgumentTypeError(f"Module: kernel {name!r} must map to "
                                        f"(KernelSpec, address), found {entry!r}")
        self._kernels = dict(kernels)
        self._keepalive = keepalive
        self._artifact = artifact
        self._functions: dict[str, PackedFunc] = {}
        self._imports: list[Module] = []
        self.type_key = type_key
        self.library_path: str | None = None  # set by load_module

    # -- looking up functions ---------------------------------------------------------
    @property
    def entry_name(self) -> str:
        """Name of the function ``mod(...)`` runs: the first one compiled ("" if none)."""
        return next(iter(self._kernels), "")

    @property
    def function_names(self) -> list[str]:
        return list(self._kernels)

    @property
    def kernel_specs(self) -> dict[str, KernelSpec]:
        """The calling contract of every function, by name."""
        return {name: spec for name, (spec, _) in self._kernels.items()}

    def get_function(self, name: str, query_imports: bool = False) -> PackedFunc:
        """The PackedFunc called ``name``; with ``query_imports`` also search imported modules."""
        if name in self._functions:
            return self._functions[name]
        if name in self._kernels:
            spec, address = self._kernels[name]
            # Made once per name: a PackedFunc builds its argument checkers when constructed.
            func = PackedFunc(spec, address, keepalive=self._keepalive)
            self._functions[name] = func
            return func
        if query_imports:
            for imported in self._imports:
                if imported._has(name, recursive=True):
                    return imported.get_function(name, query_imports=True)
        known = ", ".join(self._kernels) or "none"
        raise FunctionNotFoundError(f"module has no function {name!r} (it has: {known})")

    def _has(self, name: str, recursive: bool) -> bool:
        return name in self._kernels or (
            recursive and any(m._has(name, True) for m in self._imports))

    def __getitem__(self, name: str) -> PackedFunc:
        return self.get_function(name)

    def __contains__(self, name: str) -> bool:
        return name in self._kernels

    def __call__(self, *args) -> None:
        """Run the entry function (``entry_name``)."""
        return self.get_function(self.entry_name)(*args)

    # -- imports ----------------------------------------------------------------------
    @property
    def imported_modules(self) -> list["Module"]:
        return list(self._imports)

    def import_module(self, other: "Module") -> None:
        """Make ``other``'s functions reachable through ``get_function(..., query_imports=True)``."""
        if not isinstance(other, Module):
            raise ArgumentTypeError(f"import_module: expected a Module, found {type(other).__name__}")
        self._imports.append(other)

    # -- source and export ------------------------------------------------------------
    def get_source(self, fmt: str = "ll") -> str:
        """The generated code: ``"ll"`` (LLVM IR, the default) or ``"asm"`` (assembly)."""
        fmt = {"": "ll", "llvm": "ll", "s": "asm", "assembly": "asm"}.get(fmt, fmt)
        if fmt not in ("ll", "asm"):
            raise RuntimeError_(f"get_source: unknown format {fmt!r}, expected 'll' or 'asm'")
        if self._artifact is None:
            origin = f"loaded from {self.library_path}" if self.library_path else "this module"
            raise RuntimeError_(f"get_source: {origin} carries no source; build it again "
                                "with mlcbench.build to see its code")
        return self._artifact.get_source(fmt)

    def export_library(self, file_name, fcompile=None, workspace_dir=None, cc=None,
                       options=None) -> None:
        """Write a shared library that :func:`load_module` can load in another process."""
        from .library import export_library
        export_library(self, file_name, fcompile=fcompile, workspace_dir=workspace_dir,
                       cc=cc, options=options)

    # -- timing -----------------------------------------------------------------------
    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: float = 0, limit_zero_time_iterations: int = 100,
                       cooldown_interval_ms: float = 0, repeats_to_cooldown: int = 1,
                       cache_flush_bytes: int = 0, f_preproc: str = "", *, ctx=None):
        """A function that times ``func_name`` on its arguments and returns a BenchmarkResult.

        Arguments are checked once; the timing loop then calls the machine code directly,
        adding about a microsecond of Python per call. ``f_preproc`` names a global
        function run with the arguments before each repeat (e.g.
        ``"cache_flush_cpu_non_first_arg"``). See :mod:`mlcbench.runtime.benchmark`.
        ``ctx=`` is the older name of ``dev``; without either, the CPU.
        """
        func = self.get_function(func_name, query_imports=True)
        device = as_device(device_or_ctx(dev, ctx, "time_evaluator"))
        if device.device_type != kDLCPU:
            raise RuntimeError_(NO_GPU_MESSAGE.format(what=f"time_evaluator on {device}"))
        preproc_func = get_global_func(f_preproc) if f_preproc else None

        def evaluator(*args):
            converted = func.convert_args(args)
            func.call_converted(converted)  # warm-up, and the only status check
            preproc = (lambda: preproc_func(*args)) if preproc_func else None
            return measure(func._cfunc, converted, number=number, repeat=repeat,
                           min_repeat_ms=min_repeat_ms,
                           limit_zero_time_iterations=limit_zero_time_iterations,
                           cooldown_interval_ms=cooldown_interval_ms,
                           repeats_to_cooldown=repeats_to_cooldown, preproc=preproc,
                           warmup=False)

        return TimeEvaluator(func_name, evaluator)

    def __repr__(self) -> str:
        return f"Module({self.type_key}, functions={list(self._kernels)})"


class TimeEvaluator:
    """What ``time_evaluator`` returns: call it with the kernel's arguments to measure.

    ``lib.time_evaluator("f", dev, number=10)(a, b, c).mean`` -- the timing needs the
    arguments, so reading ``.mean`` on the evaluator itself explains that instead of
    failing with a bare AttributeError.
    """

    _RESULT_FIELDS = ("mean", "median", "min", "max", "std", "results")

    def __init__(self, func_name: str, evaluator):
        self.func_name, self._evaluator = func_name, evaluator

    def __call__(self, *args):
        return self._evaluator(*args)

    def __getattr__(self, name):
        if name in TimeEvaluator._RESULT_FIELDS:
            raise AttributeError(
                f"time_evaluator({self.func_name!r}, ...) returns an evaluator, not a result: "
                f"call it with the arguments of {self.func_name} first, e.g. "
                f"lib.time_evaluator({self.func_name!r}, dev, number=10)(a, b, c).{name}")
        raise AttributeError(name)

    def __repr__(self):
        return f"<TimeEvaluator of {self.func_name}>"
