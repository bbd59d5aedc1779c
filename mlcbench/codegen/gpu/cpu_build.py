"""Compiling the simulator's CPU functions (the kernels of :mod:`.threads`) with the LLVM
code generator, into a runtime Module that checks arguments like any other."""
from __future__ import annotations

import re

from ...runtime.metadata import KernelSpec, ParamSpec
from ...runtime.module import Module
from ...tir import expr as E
from ..llvm import codegen_llvm, symbolic_shape_vars


def compile_cpu_functions(funcs: dict, target) -> Module:
    """A Module of ``funcs`` ({name: PrimFunc in the CPU lowered form}) for ``target``."""
    symbols = {name: "mlc_sim_" + re.sub(r"\W", "_", name) for name in funcs}
    specs = [cpu_spec(name, symbols[name], func) for name, func in funcs.items()]
    compiled = codegen_llvm({symbols[n]: f for n, f in funcs.items()}, target,
                            name="simulated_gpu")
    kernels = {spec.name: (spec, compiled.addresses[spec.symbol]) for spec in specs}
    return Module(kernels, keepalive=compiled.keepalive, artifact=compiled.artifact)


def cpu_spec(name: str, symbol: str, func) -> KernelSpec:
    """The calling contract: buffers with their shapes (symbolic dims by name), scalars."""
    params = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            params.append(ParamSpec(param.name, "scalar", str(param.dtype), ()))
            continue
        shape = tuple(d.value if isinstance(d, E.IntImm) else d.name for d in buffer.shape)
        params.append(ParamSpec(buffer.name, "buffer", str(buffer.dtype), shape))
    return KernelSpec(name, symbol, tuple(params),
                      tuple(v.name for v in symbolic_shape_vars(func)))
