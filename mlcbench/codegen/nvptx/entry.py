"""The ABI of the PTX that :func:`~.module.ptx_source` prints, read back from the text.

A launch passes one value per ``.param`` of the kernel's ``.entry``, in order: the
kernel's TIR parameters (a buffer as its device address, ``.u64 .ptr``; a scalar in
its own type: ``.f32``, ``.u32``, ``.u8`` for bool, ``.b8 x[2]`` for float16), then the
symbolic dimensions of its buffers as ``.u64``. :func:`check_entry` compares a
kernel's entry with what the launch will pass, so a disagreement is an error at build
time instead of a wrong result on the device.

>>> entries = ptx_entries(ptx)                                  # doctest: +SKIP
>>> entries["main_kernel0"].params
(PTXParam(kind='ptr', nbytes=8), PTXParam(kind='ptr', nbytes=8))
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...ir.errors import CodegenError
from ..llvm.function import symbolic_shape_vars

_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(([^)]*)\)")
_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.([a-z])(\d+)(\s+\.ptr)?"
                    r"(?:\s+\.align\s+\d+)?\s+[\w$]+(?:\[(\d+)\])?")
_TARGET = re.compile(r"^\s*\.target\s+(sm_\w+)", re.MULTILINE)


@dataclass(frozen=True)
class PTXParam:
    """One ``.param`` of an entry: ``kind`` is "ptr", "float", "int" or "bytes"."""
    kind: str
    nbytes: int


@dataclass(frozen=True)
class PTXEntry:
    name: str
    params: tuple


def ptx_entries(ptx: str) -> dict:
    """{kernel name: PTXEntry} for every ``.entry`` of ``ptx``."""
    entries = {}
    for match in _ENTRY.finditer(ptx):
        params = []
        for item in filter(None, (p.strip() for p in match.group(2).split(","))):
            found = _PARAM.match(item)
            if found is None:
                raise CodegenError(f"PTX entry {match.group(1)}: cannot read parameter {item!r}")
            letter, bits, pointer, count = found.groups()
            kind = ("ptr" if pointer else "float" if letter == "f"
                    else "bytes" if letter == "b" else "int")
            params.append(PTXParam(kind, int(bits) // 8 * int(count or 1)))
        entries[match.group(1)] = PTXEntry(match.group(1), tuple(params))
    return entries


def ptx_target(ptx: str) -> str:
    """The ``.target`` architecture of ``ptx`` (``sm_75``)."""
    found = _TARGET.search(ptx)
    if found is None:
        raise CodegenError("PTX text has no .target line")
    return found.group(1)


def launch_params(func) -> list:
    """What a launch of the device kernel ``func`` passes, as PTXParams, in order."""
    params = []
    for param in func.params:
        if param in func.buffer_map or param.dtype.is_handle:
            params.append(PTXParam("ptr", 8))
            continue
        dtype = param.dtype
        nbytes = 1 if dtype.is_bool else dtype.bits // 8
        params.append(PTXParam("float" if dtype.is_float else "int", nbytes))
    return params + [PTXParam("int", 8)] * len(symbolic_shape_vars(func))


def check_entry(entry: PTXEntry, func) -> None:
    """CodegenError unless ``entry`` takes what a launch of ``func`` passes."""
    passed = launch_params(func)
    names = [p.name for p in func.params] + [v.name for v in symbolic_shape_vars(func)]
    if len(passed) != len(entry.params):
        raise CodegenError(f"PTX entry {entry.name} takes {len(entry.params)} parameters, "
                           f"but a launch passes {len(passed)} ({', '.join(names)})")
    for index, (want, found) in enumerate(zip(passed, entry.params)):
        fits = want.nbytes == found.nbytes and (
            found.kind in ("bytes", want.kind) and (want.kind != "ptr" or found.kind == "ptr"))
        if not fits:
            raise CodegenError(f"PTX entry {entry.name}: parameter {index} "
                               f"({names[index]}) is {found.kind} of {found.nbytes} bytes, "
                               f"but the launch passes {want.kind} of {want.nbytes} bytes")
