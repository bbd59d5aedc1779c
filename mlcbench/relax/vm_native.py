"""One native entry for a VM function that only allocates and calls compiled kernels.

A fused model with its weights bound is, for the VM, a straight line of kernel calls
whose arguments the build proved right (``fast`` calls, :mod:`mlcbench.relax.vm_codegen`)
and allocations of a static shape. Run by the closures of :mod:`mlcbench.relax.vm`, each
kernel costs a ctypes call and the Python around it, about 2 us here, while the digits
CNN's seven kernels at batch 1 compute for well under a microsecond each. Here such a
function becomes one small machine-code function that calls the kernels in turn::

    int64 chain(void **table)      // table: kernel addresses, then tensor addresses
        status = kernel_0(table[a], table[b], ...); if (status) return 1 << 32 | status
        status = kernel_1(...);                      if (status) return 2 << 32 | status
        return 0

Addresses that live as long as the VM (constants, planned storages, the kernels) are
written into the table once; those of the arguments and of the fresh outputs on every
call. Python runs once per call, not once per kernel. The argument checks stay where
they were: the VM checks the arguments before the call, and the build proved every
kernel argument's shape and dtype.
"""
from __future__ import annotations

import ctypes
import itertools
import threading

from ..ir.errors import CodegenError, RuntimeError_
from ..runtime.allocator import fixed_shape_allocator

_chain_ids = itertools.count()


class NativeChain:
    """``run(values) -> regs``: the function's instructions as one native call.

    ``values`` are the checked arguments in parameter order; the result is the register
    list (the template with the arguments and this call's outputs in place)."""

    def __init__(self, plan: "_Plan", template: list, lib, keepalive):
        self._plan, self._template, self._keepalive = plan, template, keepalive
        self._lock = threading.Lock()
        self._table = (ctypes.c_void_p * plan.num_slots)()
        for slot, reg in plan.fixed_data:
            self._table[slot] = template[reg].data_ptr
        for slot, kernel in plan.kernels:
            self._table[slot] = ctypes.cast(lib.get_function(kernel)._cfunc, ctypes.c_void_p).value
        self._kernel_funcs = [lib.get_function(kernel) for _, kernel in plan.kernels]  # alive
        address = keepalive.addresses[plan.symbol]
        self._entry = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)(address)
        self._table_address = ctypes.addressof(self._table)
        self._allocations = [(reg, slot, fixed_shape_allocator(shape, dtype))
                             for reg, slot, shape, dtype in plan.allocations]

    def run(self, values, param_regs) -> list:
        regs, table = self._template.copy(), self._table
        for reg, value in zip(param_regs, values):
            regs[reg] = value
        # One call at a time: the table (and the planned storages) are shared, and a call
        # from another thread overwriting the table mid-call would have the kernels write
        # into its outputs, which its caller may already have freed.
        with self._lock:
            for reg, slot in self._plan.param_slots:
                table[slot] = regs[reg].data_ptr
            for reg, slot, allocate in self._allocations:
                regs[reg] = out = allocate()
                table[slot] = out.data_ptr
            status = self._entry(self._table_address)
        if status:
            self._fail(status)
        return regs

    def _fail(self, status: int):
        from .vm import VMError
        # The high half is the failing call's index plus one, the low half its signed status.
        index, code = (status >> 32) - 1, ctypes.c_int32(status & 0xFFFFFFFF).value
        kernel, text = self._plan.calls[index]
        raise VMError(f"While executing {text} in {self._plan.function}: RuntimeError_: "
                      f"kernel {kernel} failed with status {code}")


class _Plan:
    """Which table slot each kernel and tensor address takes, and the IR of the chain."""

    def __init__(self, function: str):
        self.function = function
        self.symbol = f"mlc_vm_chain_{next(_chain_ids)}"
        self.slots: dict = {}               # ("kernel", name) or ("reg", reg) -> slot
        self.kernels, self.fixed_data, self.param_slots = [], [], []
        self.allocations, self.calls = [], []

    @property
    def num_slots(self) -> int:
        return max(len(self.slots), 1)

    def slot(self, key) -> int:
        if key not in self.slots:
            self.slots[key] = len(self.slots)
        return self.slots[key]


def plan_chain(name: str, code: dict, template: list):
    """The plan of ``code`` as a native chain, or None when it does anything but static
    allocations and kernel calls on tensors whose shapes the build proved."""
    records = code["code"]
    if not any(r[0] == "kernel" for r in records):
        return None
    plan, params = _Plan(name), {p["reg"] for p in code["params"]}
    allocated: set = set()
    for record in records:
        if record[0] == "alloc" and all(isinstance(d, int) for d in record[2]):
            _, dst, dims, dtype, _ = record
            plan.allocations.append((dst, plan.slot(("reg", dst)), tuple(dims), dtype))
            allocated.add(dst)
        elif record[0] == "kernel" and record[3] and all(k == "t" for k, _ in record[2]):
            if not _plan_call(plan, record, params, allocated, template):
                return None
        else:
            return None
    return plan


def _plan_call(plan: _Plan, record, params: set, allocated: set, template: list) -> bool:
    _, kernel, operands, _, text = record
    plan.calls.append((kernel, text))
    if ("kernel", kernel) not in plan.slots:
        plan.kernels.append((plan.slot(("kernel", kernel)), kernel))
    for _, reg in operands:
        # A tensor passed to several kernels keeps one slot, filled once per call.
        if ("reg", reg) in plan.slots:
            continue
        if reg in params:
            plan.param_slots.append((reg, plan.slot(("reg", reg))))
        # Constants and planned storages live as long as the VM: their address is written once.
        elif reg not in allocated and getattr(template[reg], "data_ptr", None) is not None:
            plan.fixed_data.append((plan.slot(("reg", reg)), reg))
        else:
            return False
    return True


def chain_ir(plan: _Plan, code: dict) -> str:
    """The LLVM IR text of ``plan``'s chain (see the module docstring)."""
    lines = [f"define i64 @{plan.symbol}(ptr %table) {{", "entry:"]
    kernel_calls = [r for r in code["code"] if r[0] == "kernel"]
    # A failure returns (index + 1) << 32 | status: plus one, so 0 still means success.
    for index, (_, kernel, operands, _, _) in enumerate(kernel_calls):
        fn = _load(lines, plan.slots[("kernel", kernel)], f"f{index}")
        args = [_load(lines, plan.slots[("reg", reg)], f"a{index}_{k}")
                for k, (_, reg) in enumerate(operands)]
        lines += [f"  %s{index} = call i32 {fn}({', '.join('ptr ' + a for a in args)})",
                  f"  %ok{index} = icmp eq i32 %s{index}, 0",
                  f"  br i1 %ok{index}, label %next{index}, label %fail{index}",
                  f"fail{index}:",
                  f"  %z{index} = zext i32 %s{index} to i64",
                  f"  %r{index} = or i64 %z{index}, {(index + 1) << 32}",
                  f"  ret i64 %r{index}",
                  f"next{index}:"]
    lines += ["  ret i64 0", "}"]
    return "\n".join(lines) + "\n"


def _load(lines: list, slot: int, name: str) -> str:
    lines += [f"  %{name}p = getelementptr ptr, ptr %table, i64 {slot}",
              f"  %{name} = load ptr, ptr %{name}p"]
    return f"%{name}"


def link_chain(name: str, code: dict, template: list, lib):
    """A :class:`NativeChain` for VM function ``name``, or None where it does not apply
    (see :func:`plan_chain`)."""
    from ..codegen.llvm.engine import compile_ir
    from ..codegen.llvm.jit import jit_link
    from ..target import Target
    plan = plan_chain(name, code, template)
    if plan is None:
        return None
    try:
        artifact = compile_ir(chain_ir(plan, code), Target("llvm"), name=plan.symbol)
        linked = jit_link(artifact.emit_object(), [plan.symbol], label=plan.symbol)
    except CodegenError as err:
        raise RuntimeError_(f"VirtualMachine: linking {name!r} into one native call "
                            f"failed: {err}") from err
    return NativeChain(plan, template, lib, linked)


__all__ = ["NativeChain", "chain_ir", "link_chain", "plan_chain"]
