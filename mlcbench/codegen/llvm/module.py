"""Generate one LLVM module for a set of lowered PrimFuncs and compile it.

Example::

    compiled = codegen_llvm({"add_one": lowered_func}, Target("llvm"))
    compiled.addresses["add_one"]          # int, callable through ctypes
    compiled.artifact.get_source("ll")     # the optimized LLVM IR
"""
from __future__ import annotations

from dataclasses import dataclass

import llvmlite.binding as llvm
from llvmlite import ir

from ...ir.errors import CodegenError
from . import types as T
from .engine import (JITLibrary, LLVMArtifact, check_externals_resolve, compile_ir, jit_link,
                     machine_for)
from .function import ModuleContext, emit_prim_func


@dataclass
class CompiledLLVM:
    """``addresses`` maps each kernel symbol to its entry address; ``keepalive`` must
    outlive every call through those addresses; ``artifact`` gives IR, asm and objects."""
    addresses: dict
    artifact: LLVMArtifact
    keepalive: JITLibrary


def generate_ir(funcs: dict, target, metadata: bytes | str | None = None,
                name: str = "module") -> str:
    """Textual LLVM IR of ``funcs`` ({symbol: lowered PrimFunc}) with an optional
    metadata global (``__mlcbench_metadata``, NUL-terminated bytes)."""
    _require_cpu(target)
    module = ir.Module(name=name)
    module.triple = target.mtriple or llvm.get_process_triple()
    module.data_layout = str(machine_for(target).target_data)
    ctx = ModuleContext(module, target)
    for symbol, func in funcs.items():
        emit_prim_func(ctx, symbol, func)
    if metadata is not None:
        add_metadata_global(module, metadata)
    return str(module)


def add_metadata_global(module: ir.Module, metadata: bytes | str,
                        symbol: str = "__mlcbench_metadata") -> None:
    """A constant global array holding ``metadata`` and a trailing NUL (exported so a
    loaded ``.so`` can describe its kernels)."""
    data = metadata.encode() if isinstance(metadata, str) else bytes(metadata)
    data = data if data.endswith(b"\0") else data + b"\0"
    array_type = ir.ArrayType(T.I8, len(data))
    glob = ir.GlobalVariable(module, array_type, name=symbol)
    glob.initializer = ir.Constant(array_type, bytearray(data))
    glob.global_constant = True


def codegen_llvm(funcs: dict, target, metadata: bytes | str | None = None,
                 name: str = "module") -> CompiledLLVM:
    """Generate, optimize, compile and JIT-link ``funcs``; see the module docstring."""
    text = generate_ir(funcs, target, metadata, name)
    artifact = compile_ir(text, target, name, imported_llvm(funcs))
    check_externals_resolve(artifact, name)
    library = jit_link(artifact.emit_object(), list(funcs), label=name)
    return CompiledLLVM(library.addresses, artifact, library)


def imported_llvm(funcs: dict) -> tuple:
    """LLVM IR texts that loops carry as ``pragma_import_llvm`` (the definitions of the
    extern functions a tensor intrinsic calls, course chapter 8), each once."""
    from ...tir.functor import post_order_visit
    from ...tir.stmt import For
    texts: list = []

    def collect(node):
        text = node.annotations.get("pragma_import_llvm") if isinstance(node, For) else None
        if text is not None and text not in texts:
            if not isinstance(text, str):
                raise CodegenError(f"pragma_import_llvm on loop {node.loop_var.name!r}: "
                                   f"expected LLVM IR text, found {type(text).__name__}")
            texts.append(text)
    for func in funcs.values():
        post_order_visit(func.body, collect)
    return tuple(texts)


def _require_cpu(target) -> None:
    if not getattr(target, "is_cpu", True):
        raise CodegenError(f"target {str(target)!r} is a {target.kind.name} target; this "
                           "runtime compiles for the CPU only: use Target('llvm')")
