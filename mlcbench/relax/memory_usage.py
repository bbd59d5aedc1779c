"""How much memory a module's functions allocate, with and without the memory plan.

``relax.analysis.estimate_memory_usage(mod)`` counts the constant-size allocations of
each Relax function. A module that still has ``call_tir`` (or dataflow blocks) is
lowered first, as ``relax.build`` would (ToNonDataflow, CallTIRRewrite,
StaticPlanBlockMemory), so the figures are those of the program the VM runs::

    >>> print(relax.analysis.estimate_memory_usage(MyModule))     # doctest: +SKIP
    Memory usage estimation:
    - Function main:
     * Without memory planning, there are 3 constant-size memory allocation(s) with total size 9.909e-07 GB.
     * With memory planning, there are 3 constant-size memory allocation(s) with total size 9.909e-07 GB.
     * Memory planning reduces constant memory size to 100.0%.

Per function, ``intermediate_bytes`` is the sum of the intermediate tensors the plan
placed in shared storage and ``storage_bytes`` what it reserves for them; the tensors it
left alone (``fresh_bytes``: the outputs, and any it could not plan) are allocated on
every call either way.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.dtype import dtype as as_dtype
from ..ir.module import IRModule
from ..ir.op import Op
from .analysis import post_order_visit
from .expr import Call, Function


@dataclass(frozen=True)
class FunctionMemoryUsage:
    """Constant-size allocations of one function, in bytes."""
    name: str
    intermediate_bytes: int
    num_intermediates: int
    storage_bytes: int
    num_storages: int
    fresh_bytes: int
    num_fresh: int

    @property
    def unplanned_bytes(self) -> int:
        """Every tensor allocated on its own: intermediates plus fresh tensors."""
        return self.intermediate_bytes + self.fresh_bytes

    @property
    def planned_bytes(self) -> int:
        """Storages of the plan plus the fresh tensors."""
        return self.storage_bytes + self.fresh_bytes


@dataclass(frozen=True)
class MemoryUsage:
    """``functions``: name -> :class:`FunctionMemoryUsage`; ``str()`` reads like TVM's."""
    functions: dict

    def __getitem__(self, name: str) -> FunctionMemoryUsage:
        return self.functions[name]

    def __str__(self) -> str:
        lines = ["Memory usage estimation:"]
        for name, usage in self.functions.items():
            before = usage.num_intermediates + usage.num_fresh
            after = usage.num_storages + usage.num_fresh
            ratio = usage.planned_bytes / usage.unplanned_bytes if usage.unplanned_bytes else 1.0
            lines += [f"- Function {name}:",
                      f" * Without memory planning, there are {before} constant-size memory "
                      f"allocation(s) with total size {usage.unplanned_bytes / 2**30:.4g} GB.",
                      f" * With memory planning, there are {after} constant-size memory "
                      f"allocation(s) with total size {usage.planned_bytes / 2**30:.4g} GB.",
                      f" * Memory planning reduces constant memory size to {ratio:.1%}."]
        return "\n".join(lines)


def _tensor_bytes(call: Call) -> int | None:
    shape = call.struct_info.static_shape()
    if shape is None:
        return None
    count = 1
    for extent in shape:
        count *= extent
    return count * as_dtype(call.struct_info.dtype).itemsize


def function_memory_usage(func: Function, name: str) -> FunctionMemoryUsage:
    """The allocations of one lowered function (see the module docstring)."""
    sizes = {"relax.memory.alloc_tensor": [], "relax.memory.alloc_storage": [],
             "relax.builtin.alloc_tensor": []}

    def visit(expr):
        if isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name in sizes:
            if expr.op.name == "relax.memory.alloc_storage":
                nbytes = expr.args[0].values[0]
                nbytes = getattr(nbytes, "value", None)
            else:
                nbytes = _tensor_bytes(expr)
            if nbytes is not None:
                sizes[expr.op.name].append(nbytes)

    post_order_visit(func, visit)
    views, storages = sizes["relax.memory.alloc_tensor"], sizes["relax.memory.alloc_storage"]
    fresh = sizes["relax.builtin.alloc_tensor"]
    return FunctionMemoryUsage(name, sum(views), len(views), sum(storages), len(storages),
                               sum(fresh), len(fresh))


def estimate_memory_usage(mod) -> MemoryUsage:
    """Allocations of every Relax function of ``mod`` (an IRModule or one Function)."""
    from .pipeline import vm_lowering_pipeline
    from .vm_build import needs_vm_lowering
    if isinstance(mod, Function):
        mod = IRModule({mod.attrs.get("global_symbol", "main"): mod})
    if needs_vm_lowering(mod):
        mod = vm_lowering_pipeline()(mod)
    return MemoryUsage({gv.name_hint: function_memory_usage(func, gv.name_hint)
                        for gv, func in mod.items() if isinstance(func, Function)})


__all__ = ["FunctionMemoryUsage", "MemoryUsage", "estimate_memory_usage",
           "function_memory_usage"]
