"""Build kernels directly in the lowered form (flat buffers, loops, Ramp vectors).

Example: ``out[i] = A[i] + 1`` for ``i < 8``::

    A, out = flat("A", 8), flat("out", 8)
    i = Var("i")
    f = kernel("add_one", [A, out], For(i, 0, 8, "serial", BufferStore(out, A[i] + 1.0, (i,))))
    lib = compile_kernels(f)
    lib["add_one"](a_np, out_np)
"""
from __future__ import annotations

from mlcbench.driver.build import build_lowered
from mlcbench.ir import IRModule
from mlcbench.tir import Buffer, PrimFunc, Ramp, Var, decl_buffer


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
