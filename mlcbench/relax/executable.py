"""Executable: what ``relax.build`` returns -- compiled kernels plus the VM program.

``ex.lib`` is the runtime Module of machine-code kernels; the *program* is the VM code
of every Relax function (plain JSON-able data, see :mod:`mlcbench.relax.vm_codegen`)
and its constant pool. ``ex.export_library("model.so")`` writes one shared library:
the kernels, and the program with its constants as one more symbol,
``__mlcbench_relax_vm``, assembled from the program's bytes with ``.incbin``. So::

    ex.export_library("model.so")
    loaded = mlcbench.runtime.load_module("model.so")        # any process
    vm = relax.VirtualMachine(loaded, mlcbench.cpu())        # runs as ex did

The blob is ``MAGIC``, the JSON length and the data length (little-endian uint64),
the JSON (program plus, per constant, dtype, shape and offset), then the constants'
bytes, each at an offset that is a multiple of 64.
"""
from __future__ import annotations

import ctypes
import json
import os
import struct
import tempfile

import numpy as np

from ..ir.errors import RuntimeError_
from ..runtime import ndarray as nd
from ..runtime.module import Module

PROGRAM_SYMBOL = "__mlcbench_relax_vm"
MAGIC = b"MLCRXVM1"
_HEADER = struct.Struct("<8sQQ")
_ALIGN = 64


class Executable:
    """Kernels (``lib``) plus the VM program; run it with ``relax.VirtualMachine``.

    >>> ex = relax.build(MyModule, target="llvm")            # doctest: +SKIP
    >>> print(ex.as_text())                                  # the VM code, per function
    """

    def __init__(self, lib: Module, program: dict, constants: list):
        self.lib = lib
        self.program = program
        self.constants = list(constants)

    @property
    def mod(self) -> Module:
        """The runtime Module of compiled kernels (TVM's ``ex.mod``)."""
        return self.lib

    @property
    def function_names(self) -> list[str]:
        return list(self.program["functions"])

    def function_code(self, name: str) -> dict | None:
        return self.program["functions"].get(name)

    def planned_storage_bytes(self, name: str = "main") -> int:
        """Bytes of the storages the memory plan reserved for function ``name``."""
        code = self.function_code(name) or {"init": []}
        return sum(spec[1] for _, spec in code["init"] if spec[0] == "storage")

    def as_text(self) -> str:
        """The VM code, one instruction per line (for reading, not for parsing)."""
        lines = []
        for name, code in self.program["functions"].items():
            params = ", ".join(f"r{p['reg']}:{p['name']}" for p in code["params"])
            lines.append(f"function {name}({params}) -> r{code['result']}")
            lines += [f"  r{reg} := {_spec_text(spec)}" for reg, spec in code["init"]]
            lines += _code_lines(code["code"], "  ")
        return "\n".join(lines)

    def stats(self) -> str:
        functions = self.program["functions"]
        kernels = len(self.lib.function_names)
        nbytes = sum(c.numpy().nbytes for c in self.constants)
        return (f"{len(functions)} Relax function(s), {kernels} kernel(s), "
                f"{len(self.constants)} constant(s) of {nbytes} bytes")

    def __repr__(self) -> str:
        return f"Executable({self.function_names}, kernels={self.lib.function_names})"

    # -- export and load ----------------------------------------------------------------
    def export_library(self, file_name, fcompile=None, workspace_dir=None, cc=None,
                       options=None) -> None:
        """Write a shared library holding the kernels and the program (module docstring)."""
        file_name = os.fspath(file_name)
        if not file_name.endswith((".so", ".dylib", ".dll")):
            raise RuntimeError_(f"export_library: {file_name!r}: an Executable exports as a "
                                "shared library (.so), which holds the kernels and the program")
        if self.lib._artifact is None and self.lib.library_path:
            self.lib.export_library(file_name)      # loaded from a library: copy it
            return
        with tempfile.TemporaryDirectory(dir=workspace_dir) as tmp:
            blob_path = os.path.join(tmp, "program.bin")
            with open(blob_path, "wb") as handle:
                handle.write(encode_program(self.program, self.constants))
            asm_path = os.path.join(tmp, "program.s")
            with open(asm_path, "w", encoding="utf-8") as handle:
                handle.write(_program_assembly(blob_path))
            if fcompile is not None:
                def fcompile_with_program(output, objects):
                    return fcompile(output, list(objects) + [asm_path])
                self.lib.export_library(file_name, fcompile=fcompile_with_program,
                                        workspace_dir=workspace_dir)
            else:
                self.lib.export_library(file_name, workspace_dir=workspace_dir, cc=cc,
                                        options=[asm_path] + list(options or ()))

    @staticmethod
    def from_module(module: Module) -> "Executable":
        """The Executable inside a library loaded with ``mlcbench.runtime.load_module``."""
        path = module.library_path
        if not path:
            raise RuntimeError_("VirtualMachine: this Module holds kernels only, no VM program; "
                                "pass the Executable relax.build returned, or load a library "
                                "written by Executable.export_library")
        program, constants = decode_program(_read_program_bytes(module, path))
        return Executable(module, program, constants)


def load_executable(path) -> Executable:
    """``Executable.from_module(mlcbench.runtime.load_module(path))``."""
    from ..runtime.library import load_module
    return Executable.from_module(load_module(path))


# -- the program blob ------------------------------------------------------------------------

def encode_program(program: dict, constants: list) -> bytes:
    """The bytes stored under :data:`PROGRAM_SYMBOL` (see the module docstring)."""
    entries, chunks, offset = [], [], 0
    for const in constants:
        array = np.ascontiguousarray(const.numpy())
        entries.append({"dtype": array.dtype.name, "shape": list(array.shape),
                        "offset": offset})
        data = array.tobytes()
        padding = (-len(data)) % _ALIGN
        chunks.append(data + b"\0" * padding)
        offset += len(data) + padding
    text = json.dumps({"program": program, "constants": entries},
                      separators=(",", ":")).encode("utf-8")
    text += b" " * ((-(len(text) + _HEADER.size)) % _ALIGN)
    data = b"".join(chunks)
    return _HEADER.pack(MAGIC, len(text), len(data)) + text + data


def decode_program(blob: bytes) -> tuple[dict, list]:
    """Inverse of :func:`encode_program`: ``(program, constants as NDArrays)``."""
    magic, text_len, data_len = _HEADER.unpack_from(blob)
    if magic != MAGIC:
        raise RuntimeError_(f"VM program: bad magic {magic!r}, expected {MAGIC!r}")
    doc = json.loads(blob[_HEADER.size:_HEADER.size + text_len].decode("utf-8"))
    base = _HEADER.size + text_len
    constants = []
    for entry in doc["constants"]:
        dtype = np.dtype(entry["dtype"])
        count = int(np.prod(entry["shape"], dtype=np.int64))
        start = base + entry["offset"]
        array = np.frombuffer(blob, dtype, count, start).reshape(entry["shape"])
        constants.append(nd.array(array))
    if len(blob) != base + data_len:
        raise RuntimeError_(f"VM program: expected {base + data_len} bytes, found {len(blob)}")
    return doc["program"], constants


def _program_assembly(blob_path: str) -> str:
    """Assembly defining :data:`PROGRAM_SYMBOL` as the blob's bytes, read-only, with a
    non-executable stack note (without it the linker may mark the library as needing an
    executable stack, which newer C libraries refuse to load)."""
    quoted = blob_path.replace("\\", "\\\\").replace('"', '\\"')
    return (f"    .section .rodata\n"
            f"    .globl {PROGRAM_SYMBOL}\n"
            f"    .p2align 6\n"
            f"{PROGRAM_SYMBOL}:\n"
            f"    .incbin \"{quoted}\"\n"
            f"    .section .note.GNU-stack,\"\",%progbits\n")


def _read_program_bytes(module: Module, path: str) -> bytes:
    # Read through the handle the Module holds, so program and kernels come from the
    # same loaded library.
    library = module._keepalive if isinstance(module._keepalive, ctypes.CDLL) \
        else ctypes.CDLL(path)
    try:
        cell = ctypes.c_char.in_dll(library, PROGRAM_SYMBOL)
    except ValueError:
        raise RuntimeError_(f"VirtualMachine: {path} holds kernels but no VM program (no "
                            f"{PROGRAM_SYMBOL} symbol); export it with "
                            "Executable.export_library") from None
    address = ctypes.addressof(cell)
    _, text_len, data_len = _HEADER.unpack(ctypes.string_at(address, _HEADER.size))
    return ctypes.string_at(address, _HEADER.size + text_len + data_len)


# -- printing ----------------------------------------------------------------------------

def _spec_text(spec) -> str:
    kind = spec[0]
    if kind == "const":
        return f"constant[{spec[1]}]"
    if kind == "storage":
        return f"storage({spec[1]} bytes, {spec[2]})"
    if kind == "view":
        return f"view(r{spec[1]}, {tuple(spec[2])}, {spec[3]})"
    return f"{kind} {spec[1]!r}"


def _code_lines(code, pad: str) -> list[str]:
    lines = []
    for record in code:
        op = record[0]
        if op == "if":
            lines.append(f"{pad}r{record[1]} := if r{record[2]}:")
            lines += _code_lines(record[3], pad + "    ") + [f"{pad}    -> r{record[4]}",
                                                           f"{pad}  else:"]
            lines += _code_lines(record[5], pad + "    ") + [f"{pad}    -> r{record[6]}"]
        else:
            lines.append(pad + _INSTRUCTION_TEXT[op](record))
    return lines


def _regs(regs) -> str:
    return ", ".join(f"r{r}" for r in regs)


_INSTRUCTION_TEXT = {
    "kernel": lambda r: f"kernel {r[1]}({_regs(reg for _, reg in r[2])})"
                        + ("" if r[3] else "  # arguments checked at run time"),
    "packed": lambda r: f"r{r[1]} := packed {r[2]!r}({_regs(r[3])})"
                        + ("" if r[4] == ["object"] else f"  # result: {json.dumps(r[4])}"),
    "call": lambda r: f"r{r[1]} := call {r[2]}({_regs(r[3])})",
    "alloc": lambda r: f"r{r[1]} := alloc_tensor({json.dumps(r[2])}, {r[3]})",
    "tuple": lambda r: f"r{r[1]} := tuple({_regs(r[2])})",
    "getitem": lambda r: f"r{r[1]} := r{r[2]}[{r[3]}]",
    "shape": lambda r: f"r{r[1]} := shape({json.dumps(r[2])})",
    "prim": lambda r: f"r{r[1]} := prim({json.dumps(r[2])})",
    "match_cast": lambda r: f"r{r[1]} := match_cast(r{r[2]}, {json.dumps(r[3])})",
}


__all__ = ["Executable", "MAGIC", "PROGRAM_SYMBOL", "decode_program", "encode_program",
           "load_executable"]
