"""The Relax virtual machine: runs an Executable's functions on NDArrays.

::

    ex = relax.build(MyModule, target="llvm")
    vm = relax.VirtualMachine(ex, mlcbench.cpu())
    out = vm["main"](x, w0, b0, w1, b1)              # NDArrays or numpy arrays
    vm.module.time_evaluator("main", mlcbench.cpu(), number=10)(x, w0, b0, w1, b1).mean

Each function's code (:mod:`mlcbench.relax.vm_codegen`) is linked once into a list of
closures over a register list: kernel calls are resolved to their machine-code entry
and, where the build proved the arguments right, called with raw addresses. Constants
and the planned storages (with the tensors that view them) live in a register template
made once per VM; a call copies the template and runs the closures in order. The
storages are therefore reused by every call: a VirtualMachine is not meant for use
from several threads at once (a recursive call gets storages of its own). A function
that only allocates and calls such kernels runs as one native call instead
(:mod:`mlcbench.relax.vm_native`).
"""
from __future__ import annotations

import numpy as np

from ..ir.errors import RuntimeError_
from ..runtime import ndarray as nd
from ..runtime.allocator import fixed_shape_allocator
from ..runtime.benchmark import measure
from ..runtime.device import NO_GPU_MESSAGE, as_device, kDLCPU
from ..runtime.errors import ArgumentTypeError, ArgumentValueError
from ..runtime.module import FunctionNotFoundError, Module, TimeEvaluator
from ..runtime.registry import get_global_func
from .vm_checks import dim_function, make_checker
from .vm_native import link_chain


class VMError(RuntimeError_):
    """A failure while the VM ran a binding; the message names the binding and function."""


class VirtualMachine:
    """Runs an :class:`~mlcbench.relax.Executable` (or a library it was exported to).

    Parameters
    ----------
    rt_mod
        What ``relax.build`` returned, or ``mlcbench.runtime.load_module(path)`` of a
        library written by ``Executable.export_library``.
    device
        ``mlcbench.cpu()`` (the only device this runtime has); a list of devices is
        accepted, as in TVM, and its first entry used.
    native_chains
        Run a function that only allocates and calls kernels the build proved right as
        one native call (:mod:`mlcbench.relax.vm_native`; ``vm["main"].native`` says
        whether it does). False, or ``profile=True``, keeps one Python step per kernel.

    >>> vm = relax.VirtualMachine(ex, tvm.cpu())             # doctest: +SKIP
    >>> vm["main"](x_nd).numpy()                              # doctest: +SKIP
    """

    def __init__(self, rt_mod, device=None, memory_cfg=None, profile: bool = False,
                 native_chains: bool = True):
        from .executable import Executable
        if isinstance(rt_mod, Module):
            rt_mod = Executable.from_module(rt_mod)
        if not isinstance(rt_mod, Executable):
            hint = "; compile it first with relax.build(mod, target)" \
                if type(rt_mod).__name__ == "IRModule" else ""
            raise ArgumentTypeError(f"VirtualMachine: expected an Executable from relax.build "
                                    f"(or a Module loaded from its library), found "
                                    f"{type(rt_mod).__name__}{hint}")
        device = device[0] if isinstance(device, (list, tuple)) else device
        self.device = as_device(device)
        if self.device.device_type != kDLCPU:
            raise RuntimeError_(NO_GPU_MESSAGE.format(what=f"VirtualMachine on {self.device}"))
        self.executable = rt_mod
        self.native_chains = native_chains and not profile
        self._functions: dict[str, VMFunction] = {}
        self._inputs: dict[str, tuple] = {}
        self._outputs: dict = {}

    # -- functions ----------------------------------------------------------------------
    def __getitem__(self, name: str) -> "VMFunction":
        return self.get_function(name)

    def get_function(self, name: str) -> "VMFunction":
        """The callable Relax function ``name`` (linked on first use)."""
        function = self._functions.get(name)
        if function is None:
            code = self.executable.function_code(name)
            if code is None:
                raise FunctionNotFoundError(
                    f"VirtualMachine: no function {name!r}; the executable has "
                    f"{self.executable.function_names}")
            function = VMFunction(self, code)
            self._functions[name] = function
        return function

    # -- stateful calls, as TVM's VM offers them ----------------------------------------
    def set_input(self, func_name: str, *args) -> None:
        """Store the arguments for :meth:`invoke_stateful` (checked now)."""
        self._inputs[func_name] = self.get_function(func_name).convert_args(args)

    def invoke_stateful(self, func_name: str) -> None:
        """Run ``func_name`` on the inputs given to :meth:`set_input`; see :meth:`get_outputs`."""
        if func_name not in self._inputs:
            raise RuntimeError_(f"invoke_stateful({func_name!r}): call "
                                f"vm.set_input({func_name!r}, ...) first")
        function = self.get_function(func_name)
        self._outputs[func_name] = function.invoke_converted(self._inputs[func_name])

    def get_outputs(self, func_name: str):
        """The result of the last :meth:`invoke_stateful` of ``func_name``."""
        if func_name not in self._outputs:
            raise RuntimeError_(f"get_outputs({func_name!r}): run "
                                f"vm.invoke_stateful({func_name!r}) first")
        return self._outputs[func_name]

    # -- timing -------------------------------------------------------------------------
    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: float = 0, limit_zero_time_iterations: int = 100,
                       cooldown_interval_ms: float = 0, repeats_to_cooldown: int = 1,
                       cache_flush_bytes: int = 0, f_preproc: str = ""):
        """A function timing ``func_name`` on its arguments: ``(...)(*args).mean`` seconds.

        Arguments are checked and converted once; each timed call then runs the
        function's instructions. ``time_evaluator("invoke_stateful", dev)(name)`` times
        the inputs stored by :meth:`set_input`, as in TVM.
        """
        preproc_func = get_global_func(f_preproc) if f_preproc else None

        def evaluator(*args):
            if func_name == "invoke_stateful":
                function, converted = self.get_function(args[0]), self._inputs[args[0]]
            else:
                function = self.get_function(func_name)
                converted = function.convert_args(args)
            preproc = (lambda: preproc_func(*args)) if preproc_func else None
            return measure(function.invoke_converted, (converted,), number=number,
                           repeat=repeat, min_repeat_ms=min_repeat_ms,
                           limit_zero_time_iterations=limit_zero_time_iterations,
                           cooldown_interval_ms=cooldown_interval_ms,
                           repeats_to_cooldown=repeats_to_cooldown, preproc=preproc)

        return TimeEvaluator(func_name, evaluator)

    @property
    def module(self) -> "VMModule":
        """TVM's ``vm.module``: ``vm.module["main"]`` and ``vm.module.time_evaluator``."""
        return VMModule(self)

    def __repr__(self) -> str:
        return f"VirtualMachine({self.executable.function_names}, {self.device})"


class VMModule:
    """The VM seen as a runtime module (what TVM's ``vm.module`` is)."""

    def __init__(self, vm: VirtualMachine):
        self.vm = vm

    def __getitem__(self, name: str):
        return self.vm.get_function(name)

    get_function = __getitem__

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: float = 0, **kwargs):
        return self.vm.time_evaluator(func_name, dev, number=number, repeat=repeat,
                                      min_repeat_ms=min_repeat_ms, **kwargs)


class VMFunction:
    """One linked Relax function: ``f(*args)`` checks the arguments and runs the code."""

    def __init__(self, vm: VirtualMachine, code: dict):
        self.vm, self.name = vm, code["name"]
        self._code = code
        self.param_names = tuple(p["name"] for p in code["params"])
        self._param_regs = tuple(p["reg"] for p in code["params"])
        self._checkers = tuple(make_checker(self.name, f"parameter {p['name']}", p["check"])
                               for p in code["params"])
        self._template = self._make_template()
        self._instructions, self._texts = _Linker(vm, self.name).link_block(code["code"])
        self._result = code["result"]
        self._busy = False
        self.native = link_chain(self.name, code, self._template, vm.executable.lib) \
            if vm.native_chains else None

    def _make_template(self) -> list:
        regs = [None] * self._code["num_regs"]
        constants = self.vm.executable.constants
        for reg, spec in self._code["init"]:
            regs[reg] = _initial_value(spec, regs, constants)
        return regs

    # -- calling ------------------------------------------------------------------------
    def convert_args(self, args) -> tuple:
        """Check ``args`` against the parameters: ``(values, symbolic dims)``, where numpy
        arrays became NDArrays and dims maps registers to the extents the args gave."""
        if len(args) != len(self._checkers):
            raise ArgumentValueError(
                f"{self.name}: expected {len(self._checkers)} arguments "
                f"({', '.join(self.param_names)}), found {len(args)}")
        dims: dict = {}
        values = tuple([check(arg, dims) for check, arg in zip(self._checkers, args)])
        return values, dims

    def __call__(self, *args):
        return self.invoke_converted(self.convert_args(args))

    def invoke_converted(self, converted: tuple):
        """Run on arguments already passed through :meth:`convert_args`."""
        if self.native is not None:
            return self.native.run(converted[0], self._param_regs)[self._result]
        if self._busy:      # a recursive call: planned storages must not be shared
            regs = self._make_template()
        else:
            # A shallow copy: constants and planned storages are shared, registers are not.
            regs = self._template.copy()
        values, dims = converted
        for reg, value in zip(self._param_regs, values):
            regs[reg] = value
        for reg, extent in dims.items():
            regs[reg] = extent
        busy, self._busy = self._busy, True
        try:
            run_block(self._instructions, self._texts, regs, self.name)
        finally:
            # Restored, not cleared: an outer call stays busy after a recursive one returns.
            self._busy = busy
        return regs[self._result]

    def __repr__(self) -> str:
        return f"VMFunction({self.name}({', '.join(self.param_names)}))"


def run_block(instructions, texts, regs, function_name: str) -> None:
    """Run closures in order; a failure is reported with the binding that raised it."""
    pc = 0
    try:
        for pc, instruction in enumerate(instructions):
            instruction(regs)
    except VMError as err:
        kind, text = texts[pc]
        # A VMError from a nested If block already names its binding.
        if kind != "call":
            raise
        # Chained to the original failure, not to the callee's VMError wrapper.
        raise VMError(f"{err}\n  called from: {text} in {function_name}") from err.__cause__
    except Exception as err:  # noqa: BLE001 -- every failure gets the binding's name
        kind, text = texts[pc]
        raise VMError(f"While executing {text} in {function_name}: "
                      f"{type(err).__name__}: {err}") from err


def _initial_value(spec, regs, constants):
    kind = spec[0]
    if kind == "const":
        return constants[spec[1]]
    if kind == "value":
        return spec[1]
    if kind == "shape":
        return tuple(spec[1])
    if kind == "storage":
        # Storage is raw bytes; the views reinterpret slices of it.
        return nd.empty((spec[1],), "uint8")
    assert kind == "view", spec
    storage, shape, dtype, offset = regs[spec[1]], tuple(spec[2]), spec[3], spec[4]
    count = int(np.prod(shape, dtype=np.int64))
    nbytes = count * np.dtype(dtype).itemsize
    # A zero-copy slice, so every view aliases the planned storage.
    raw = np.from_dlpack(storage)[offset:offset + nbytes]
    return nd.numpyasarray(raw.view(dtype).reshape(shape))


class _Linker:
    """Turns instruction records into closures ``run(regs)``."""

    def __init__(self, vm: VirtualMachine, function_name: str):
        self.vm, self.function_name = vm, function_name
        self.lib = vm.executable.lib

    def link_block(self, code) -> tuple[list, list]:
        instructions, texts = [], []
        for record in code:
            instructions.append(getattr(self, "link_" + record[0])(record))
            texts.append((record[0], record[-1]))
        return instructions, texts

    def link_kernel(self, record):
        _, kernel, operands, fast, _ = record
        packed = self.lib.get_function(kernel)
        if fast:
            return fast_kernel_call(packed, [reg for _, reg in operands])

        def run(regs):
            values = []
            for kind, reg in operands:
                # A shape operand passes its extents as separate scalar arguments.
                if kind == "s":
                    values.extend(regs[reg])
                else:
                    values.append(regs[reg])
            packed(*values)
        return run

    def link_packed(self, record):
        _, dst, name, args, spec, _ = record
        check = make_checker(self.function_name, f"the result of {name!r}", spec)

        def run(regs):
            regs[dst] = check(get_global_func(name)(*[regs[r] for r in args]), regs)
        return run

    def link_call(self, record):
        _, dst, callee, args, _ = record
        vm = self.vm

        def run(regs):
            # Resolved per call: the callee links on first use and may be this very function.
            regs[dst] = vm.get_function(callee)(*[regs[r] for r in args])
        return run

    def link_alloc(self, record):
        _, dst, dims, dtype, _ = record
        if all(isinstance(d, int) for d in dims):
            allocate = fixed_shape_allocator(tuple(dims), dtype)

            def run(regs):
                regs[dst] = allocate()
            return run
        dim_fns = [dim_function(d) for d in dims]

        def run_dynamic(regs):
            regs[dst] = nd.empty(tuple(f(regs) for f in dim_fns), dtype)
        return run_dynamic

    def link_tuple(self, record):
        _, dst, fields, _ = record

        def run(regs):
            regs[dst] = tuple([regs[r] for r in fields])
        return run

    def link_getitem(self, record):
        _, dst, src, index, _ = record

        def run(regs):
            regs[dst] = regs[src][index]
        return run

    def link_shape(self, record):
        _, dst, dims, _ = record
        dim_fns = [dim_function(d) for d in dims]

        def run(regs):
            regs[dst] = tuple(f(regs) for f in dim_fns)
        return run

    def link_prim(self, record):
        _, dst, value, _ = record
        value_fn = dim_function(value)

        def run(regs):
            regs[dst] = value_fn(regs)
        return run

    def link_match_cast(self, record):
        _, dst, src, spec, text = record
        check = make_checker(self.function_name, f"the value of {text}", spec)

        def run(regs):
            regs[dst] = check(regs[src], regs)
        return run

    def link_if(self, record):
        _, dst, cond, then_code, then_reg, else_code, else_reg, _ = record
        arms = [(self.link_block(then_code), then_reg), (self.link_block(else_code), else_reg)]
        name = self.function_name

        def run(regs):
            (instructions, texts), result = arms[0] if _truth(regs[cond]) else arms[1]
            run_block(instructions, texts, regs, name)
            regs[dst] = regs[result]
        return run


def _truth(value) -> bool:
    if isinstance(value, nd.NDArray):
        if value.shape not in ((), (1,)):
            raise ArgumentValueError(f"an If condition is a scalar, found a tensor of shape "
                                     f"{value.shape}")
        return bool(np.from_dlpack(value).reshape(()))
    return bool(value)


def fast_kernel_call(packed, regs: list):
    """``run(regs)`` calling the machine code with the registers' addresses directly.

    The build proved every argument a tensor of the kernel's shape and dtype, so the
    per-argument checks of a PackedFunc are skipped. The call is generated as source so
    it reads registers by constant index: a comprehension over the registers cost about
    0.6 us more per call here, as much as the C call itself (benchmarks/relax_vm.py
    measures the VM's overhead per kernel call).
    """
    cfunc, name = packed._cfunc, packed.name
    arguments = ", ".join(f"regs[{int(r)}].data_ptr" for r in regs)
    source = (f"def run(regs):\n"
              f"    status = cfunc({arguments})\n"
              f"    if status:\n"
              f"        fail(status)\n")

    def fail(status):
        raise RuntimeError_(f"kernel {name} failed with status {status}")

    # _keep holds the PackedFunc, and so its library, alive as long as the closure.
    namespace = {"cfunc": cfunc, "fail": fail, "_keep": packed}
    exec(compile(source, f"<vm kernel call {name}>", "exec"), namespace)  # noqa: S102
    return namespace["run"]


__all__ = ["VMError", "VMFunction", "VMModule", "VirtualMachine"]
