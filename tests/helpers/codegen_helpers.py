"""Build kernels directly in the lowered form (flat buffers, loops, Ramp vectors).

Example: ``out[i] = A[i] + 1`` for ``i < 8``::

    A, out = flat("A", 8), flat("out", 8)
    i = Var("i")
    f = kernel("add_one", [A, out], For(i, 0, 8, "serial", BufferStore(out, A[i] + 1.0, (i,))))
    lib = compile_kernels(f)
    lib["add_one"](a_np, out_np)
"""
from __future__ import annotations

import itertools

import numpy as np

from mlcbench.driver.build import build_lowered
from mlcbench.ir import IRModule
from mlcbench.tir import Buffer, PrimFunc, Ramp, Var, decl_buffer

from .interp import run_lowered

_rebuilds = itertools.count()


def flat(name: str, n, dtype: str = "float32") -> Buffer:
    """A one-dimensional buffer of ``n`` elements (``n`` may be a Var)."""
    return decl_buffer((n,), dtype, name)


def kernel(name: str, params, body, noalias: bool = True) -> PrimFunc:
    """A PrimFunc whose parameters are ``params`` (Buffers become handle params)."""
    handles, buffer_map = [], {}
    for p in params:
        if isinstance(p, Buffer):
            handle = Var(p.name, "handle")
            buffer_map[handle] = p
            handles.append(handle)
        else:
            handles.append(p)
    return PrimFunc(tuple(handles), body, buffer_map,
                    {"global_symbol": name, "tir.noalias": noalias})


def compile_kernels(*funcs, target=None):
    """One runtime Module (one LLVM module) holding all ``funcs``."""
    mod = IRModule({f.attrs["global_symbol"]: f for f in funcs})
    return build_lowered(mod, target)


def ramp(base, lanes: int):
    """Contiguous vector index ``[base, base + 1, ..., base + lanes - 1]``."""
    return Ramp(base, 1, lanes)


def host_module_from_optimized_ir(lib):
    """Run the optimized LLVM IR of ``lib`` (built for any x86-64 CPU) on this host.

    The IR that LLVM's optimizer produced for, say, ``-mcpu=znver4`` is compiled for the
    host CPU without optimizing it again: whatever the vectorizer decided for the named
    CPU (a miscompile included) runs here, with 512-bit vectors split in two on an AVX2
    host. Returns a runtime Module with ``lib``'s kernels.
    """
    import llvmlite.binding as llvm

    from mlcbench.codegen.llvm.engine import initialize_llvm
    from mlcbench.runtime import Module

    ir_text = lib.get_source("ll")
    # Saving and setting MXCSR (denormals flushed) works on every x86-64 CPU.
    portable = ir_text.replace("@llvm.x86.sse.stmxcsr", "").replace("@llvm.x86.sse.ldmxcsr", "")
    assert "@llvm.x86." not in portable, "CPU-specific intrinsics cannot run on another CPU"
    initialize_llvm()
    engine = llvm.create_lljit_compiler()
    builder = llvm.JITLibraryBuilder().add_ir(ir_text).add_current_process()
    specs = lib.kernel_specs
    for spec in specs.values():
        builder.export_symbol(spec.symbol)
    tracker = builder.link(engine, f"host_rebuild_{next(_rebuilds)}")
    kernels = {name: (spec, tracker[spec.symbol]) for name, spec in specs.items()}
    return Module(kernels, keepalive=(engine, tracker))



def run_llvm_ir_optimized_for(cpu: str, ir_text: str, symbol: str, n_pointer_args: int):
    """``symbol`` of ``ir_text`` after the code generator's -O3 pipeline for ``-mcpu=cpu``,
    compiled for this host without optimizing again; a ctypes function of pointers."""
    import ctypes

    import llvmlite.binding as llvm

    from mlcbench.codegen.llvm.engine import initialize_llvm, machine_for, optimize
    from mlcbench.target import Target

    initialize_llvm()
    module = llvm.parse_assembly(ir_text)
    module.verify()
    optimize(module, machine_for(Target(f"llvm -mcpu={cpu}")))
    engine = llvm.create_lljit_compiler()
    tracker = (llvm.JITLibraryBuilder().add_ir(str(module)).export_symbol(symbol)
               .link(engine, f"host_rebuild_{next(_rebuilds)}"))
    kernel = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * n_pointer_args)(tracker[symbol])
    kernel.keepalive = (engine, tracker)
    return kernel


def assert_interpreted_and_compiled(lowered: PrimFunc, a, expected) -> None:
    """Run a lowered ``f(A, C)`` in the test interpreter and compiled for the host; both
    must write ``expected`` into a fresh ``C``."""
    out = np.zeros(expected.shape, expected.dtype)
    run_lowered(lowered, a.copy(), out)
    np.testing.assert_array_equal(out, expected)
    out = np.zeros(expected.shape, expected.dtype)
    compile_kernels(lowered.with_attr("global_symbol", "kernel"))["kernel"](a, out)
    np.testing.assert_array_equal(out, expected)
