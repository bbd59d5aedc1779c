"""The model cache: a second ``relax.build`` of the same model loads the whole Executable.

The kernel cache (:mod:`mlcbench.codegen.kernel_cache`) keys on the kernels, so a build
that hits it still runs the Relax pipeline to find out which kernels the model has:
for ResNet-50 from the onnx wheel that is most of a cached build (legalizing about 180
operators into PrimFuncs and fusing them). This cache keys on the model as it enters
``relax.build`` and stores what the build returns, so a hit runs no pass at all::

    ex = relax.build(mod, "llvm")     # first time: pipeline, kernels; both caches stored
    ex = relax.build(mod, "llvm")     # again, in this process or the next: one file read

The key is a SHA-256 of the module's TVMScript (functions, names, shapes, attributes,
small constants), a digest of every constant's dtype, shape and bytes, the pipeline's
name, and what the kernel cache keys on besides kernels (target, ``PassContext``,
mlcbench's version and source digest, llvmlite's and LLVM's versions). Only builds whose
outcome that key decides are cached: a named pipeline (not a Pass object, which could
be anything), no schedule lookup and no tuning context (their records are not in the
key), the kernel cache enabled (``MLCBENCH_KERNEL_CACHE``, ``kernel_cache.disabled()``).

What the key cannot see is code changed at run time: an op's legalization or a default
schedule rule replaced in this process (the source digest covers edited files). Build
inside ``kernel_cache.disabled()`` while experimenting with such replacements.

An entry lives in the kernel cache's directory, in its file format (checksummed, written
atomically, evicted least recently used first): the JSON half holds the key's material
and the kernels' metadata, the binary half the kernels' object followed by the program
blob of :func:`~mlcbench.relax.executable.encode_program` (VM code and constants). A
model whose entry would take more than a quarter of the cache's bound is not stored.
"""
from __future__ import annotations

import hashlib
import math
from collections import Counter

import numpy as np

from ..codegen import kernel_cache, kernel_store
from ..ir.errors import MLCBenchError
from .analysis import post_order_visit
from .executable import Executable, decode_program, encode_program
from .expr import Constant, Function

STAGE = "relax.build model"
_stats: Counter = Counter()


def stats() -> dict:
    """Counts of this process: ``hits``, ``misses``, ``stores``."""
    return {name: _stats[name] for name in ("hits", "misses", "stores")}


def model_key(mod, target, pipeline, lookup) -> tuple[str, dict] | None:
    """``(key, material)`` of building ``mod``, or None when the build must run."""
    if lookup is not None or not (pipeline is None or isinstance(pipeline, str)):
        return None
    if not kernel_cache.enabled():
        return None
    try:
        text = mod.script()
    except (MLCBenchError, AttributeError, TypeError, ValueError):
        return None     # a module the printer cannot show cannot be keyed by its text
    model = {"script": hashlib.sha256(text.encode("utf-8")).hexdigest(),
             "constants": constants_digest(mod), "pipeline": pipeline or "default"}
    return kernel_cache.cache_key([model], target, STAGE)


def constants_digest(mod) -> str:
    """SHA-256 of the dtype, shape and bytes of every Relax constant, in the order of the
    functions by name and of a post-order visit of each (the script refers to large
    constants by position only)."""
    digest = hashlib.sha256()

    def visit(expr):
        if isinstance(expr, Constant):
            array = np.ascontiguousarray(expr.data.numpy())
            digest.update(f"{array.dtype.str}{array.shape}".encode())
            digest.update(array.reshape(-1).view(np.uint8))

    for gv, func in sorted(mod.items(), key=lambda item: item[0].name_hint):
        if isinstance(func, Function):
            digest.update(gv.name_hint.encode() + b"\0")
            post_order_visit(func, visit)
    return digest.hexdigest()


def load(keyed: tuple[str, dict], rebuild) -> Executable | None:
    """The Executable stored under ``keyed``, or None (absent, damaged, another key's).
    ``rebuild()`` gives the kernels' runtime Module again, for ``get_source``."""
    key, material = keyed
    entry = kernel_store.load(key)
    found = _executable(entry, material, rebuild) if entry is not None else None
    _stats["hits" if found is not None else "misses"] += 1
    return found


def _executable(entry, material: dict, rebuild) -> Executable | None:
    meta, data = entry
    try:
        if meta.get("model") != material:
            return None
        split = int(meta["object_length"])
        if not 0 <= split <= len(data):
            return None
        program, constants = decode_program(data[split:])
        lib = kernel_cache.module_from_entry((meta["kernels"], data[:split]), material,
                                             rebuild)
    except (MLCBenchError, KeyError, TypeError, ValueError, AttributeError):
        return None
    return Executable(lib, program, constants) if lib is not None else None


def store(keyed: tuple[str, dict], ex: Executable, label: str) -> bool:
    """Store ``ex`` under ``keyed``; False when it is not stored (no object, too large
    for the bound, constants that are not arrays, a directory that cannot be written)."""
    key, material = keyed
    if ex.lib._artifact is None:
        return False
    obj = ex.lib._artifact.emit_object()
    try:
        size = len(obj) + sum(math.prod(const.shape) * np.dtype(str(const.dtype)).itemsize
                              for const in ex.constants)
        if size > kernel_store.limit_bytes() // 4:
            return False
        program = encode_program(ex.program, ex.constants)
    except (MLCBenchError, AttributeError, TypeError, ValueError):
        return False
    meta = {"model": material, "object_length": len(obj),
            "kernels": kernel_cache.entry_meta(material, ex.lib, label)}
    stored = kernel_store.store(key, meta, [obj, program])
    _stats["stores"] += stored
    return stored


__all__ = ["STAGE", "constants_digest", "load", "model_key", "stats", "store"]
