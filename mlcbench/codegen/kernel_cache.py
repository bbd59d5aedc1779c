"""The kernel cache: a second build of the same kernels for the same target reuses the
machine code of the first, from disk, instead of scheduling, lowering and running LLVM.

``mlcbench.build``, ``relax.build`` (so ``tvm.compile``, ``relay.build`` and
``mlcbench compile``) go through it::

    ex = relax.build(mod, "llvm")     # first time: schedule, lower, LLVM -O3; stored
    ex = relax.build(mod, "llvm")     # again, in this process or the next: loaded, linked
    kernel_cache.stats()              # {"hits": 1, "misses": 1, "stores": 1, "bypassed": 0}

The key is a SHA-256 of everything that decides the machine code: the structural hash
of each kernel as it enters the build (for ``relax.build``, the kernel before its
default schedule, since scheduling and lowering in Python are most of a model's build;
a kernel that a ``schedule_lookup`` or tuning record replaces is hashed as replaced),
the target (triple, ``-mcpu``, the full ``-mattr`` feature list, its options), the
``PassContext`` (opt level, enabled and disabled passes, plain config values),
mlcbench's version and a digest of its source files, and llvmlite's and LLVM's
versions. Entries are machine code plus JSON (see :mod:`mlcbench.codegen.kernel_store`).

Where: ``$MLCBENCH_CACHE_DIR/kernels`` (default ``~/.cache/mlcbench/kernels``), at most
``MLCBENCH_KERNEL_CACHE_MB`` megabytes (default 512; least recently used entries go
first). ``MLCBENCH_KERNEL_CACHE=0`` turns the cache off; :func:`clear` empties it (as
does deleting the directory). A build under ``PassContext`` instruments, or with config
values that are not plain data (say custom passes), is not cached: its passes run.

A module loaded from the cache has the same functions and object; its ``get_source``
builds the kernels once more, on first use, to show their IR.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import pathlib
import threading
from collections import Counter

from ..ir.structural import structural_hash
from ..ir.transform import PassContext
from . import kernel_store

SWITCH = "MLCBENCH_KERNEL_CACHE"
# Kernel fingerprints already account for this config entry (the schedules it chose).
_SCHEDULE_LOOKUP_CONFIG = "relax.build.schedule_lookup"
_stats: Counter = Counter()


# Per thread: a tuning thread's disabled() must not switch the cache off for the others.
_off = threading.local()


def enabled() -> bool:
    """False when ``MLCBENCH_KERNEL_CACHE`` is 0, off, false or no, or inside
    :func:`disabled` (in this thread)."""
    if getattr(_off, "depth", 0):
        return False
    return os.environ.get(SWITCH, "1").strip().lower() not in ("0", "off", "false", "no")


@contextlib.contextmanager
def disabled():
    """Builds in this block neither read nor write the cache: tuning candidates are each
    built once and would only crowd out the kernels of models."""
    _off.depth = getattr(_off, "depth", 0) + 1
    try:
        yield
    finally:
        _off.depth -= 1


def stats() -> dict:
    """Counts of this process: ``hits``, ``misses``, ``stores``, ``bypassed``."""
    return {name: _stats[name] for name in ("hits", "misses", "stores", "bypassed")}


def clear() -> int:
    """Delete every entry of the cache directory; returns how many files went."""
    return kernel_store.clear()


def kernel_fingerprint(name: str, func, how: str = "as given") -> list:
    """``[name, how, structural hash]`` of one kernel; ``how`` says what the build will
    still do to it (``"default schedule"``) or where it came from (``"looked up"``)."""
    return [name, how, f"{structural_hash(func):016x}"]


def module_fingerprints(mod) -> list:
    """The fingerprints of the PrimFuncs of an IRModule, by name."""
    from ..tir.function import PrimFunc
    return sorted(kernel_fingerprint(gv.name_hint, func) for gv, func in mod.items()
                  if isinstance(func, PrimFunc))


def cache_key(fingerprints: list, target, stage: str) -> tuple[str, dict] | None:
    """``(key, material)``, or None when the build must not be cached (instruments, or
    config that is not plain data)."""
    context = _pass_context_material()
    if context is None:
        return None
    material = {"stage": stage, "kernels": fingerprints, "target": _target_material(target),
                "toolchain": toolchain(), "pass_context": context}
    # Sorted, compact JSON: equal material always gives the same text, so the same key.
    text = json.dumps(material, sort_keys=True, separators=(",", ":"))
    # The material as JSON reads it back, so it compares equal to a stored entry's key.
    return hashlib.sha256(text.encode()).hexdigest(), json.loads(text)


def cached_build(fingerprints: list, target, stage: str, build, label: str = "kernels"):
    """The runtime Module of the kernels ``fingerprints`` describe: loaded from the
    cache, else ``build()`` (and stored). ``build`` must be deterministic for the key:
    it also serves, later, to show the source of a module that came from the cache."""
    keyed = cache_key(fingerprints, target, stage) if enabled() else None
    if keyed is None:
        _stats["bypassed"] += 1
        return build()
    key, material = keyed
    entry = kernel_store.load(key)
    module = module_from_entry(entry, material, build) if entry is not None else None
    if module is not None:
        _stats["hits"] += 1
        return module
    _stats["misses"] += 1
    module = build()
    if _store(key, material, module, label):
        _stats["stores"] += 1
    return module


@functools.lru_cache(maxsize=None)
def toolchain() -> dict:
    """mlcbench's version and source digest, llvmlite's and LLVM's versions."""
    from importlib import metadata

    import llvmlite
    import llvmlite.binding as llvm
    try:
        version = metadata.version("mlcbench")
    except metadata.PackageNotFoundError:   # run from a source tree: the digest decides
        version = "unknown"
    return {"mlcbench": version, "source": _source_digest(),
            "llvmlite": llvmlite.__version__,
            "llvm": ".".join(map(str, llvm.llvm_version_info))}


def _source_digest() -> str:
    """SHA-256 of mlcbench's Python files: a changed pass or code generator (a working
    copy between releases) must not reuse code built by the old one (~30 ms, once)."""
    root = pathlib.Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _target_material(target) -> dict:
    import llvmlite.binding as llvm
    return {"target": str(target), "triple": target.mtriple or llvm.get_process_triple(),
            "mcpu": target.mcpu, "features": target.llvm_features}


def _pass_context_material() -> dict | None:
    ctx = PassContext.current()
    if ctx.instruments:
        return None
    config = {k: v for k, v in ctx.config.items() if k != _SCHEDULE_LOOKUP_CONFIG}
    material = {"opt_level": ctx.opt_level, "required": list(ctx.required_pass),
                "disabled": list(ctx.disabled_pass), "config": config}
    try:
        json.dumps(material, sort_keys=True)
    except (TypeError, ValueError):
        return None
    return material


def _store(key: str, material: dict, module, label: str) -> bool:
    artifact = module._artifact
    # An entry loaded from the cache is already stored.
    if artifact is None or getattr(artifact, "from_cache", False):
        return False
    return kernel_store.store(key, entry_meta(material, module, label), artifact.emit_object())


def entry_meta(material: dict, module, label: str) -> dict:
    """The JSON half of an entry for the kernels of ``module`` (which must have been
    compiled here or loaded from the cache: its artifact gives the externals)."""
    from ..runtime.metadata import encode_metadata
    artifact = module._artifact
    specs = list(module.kernel_specs.values())
    return {"key": material, "label": label,
            "metadata": encode_metadata(specs).rstrip(b"\0").decode("utf-8"),
            "externals": artifact.external_functions(),
            "pipeline": getattr(artifact, "pipeline", "O3")}


def module_from_entry(entry, material: dict, build):
    """The Module of a stored entry, or None when it does not fit (another key's
    material, metadata that does not decode, an object that does not link)."""
    from ..ir.errors import MLCBenchError
    from ..runtime.metadata import decode_metadata
    from ..runtime.module import Module
    from .llvm.jit import jit_link
    meta, obj = entry
    try:
        # A file under this key written for other material (a hash collision, a foreign file).
        if meta.get("key") != material:
            return None
        specs = decode_metadata(meta["metadata"].encode("utf-8"))
        externals = [str(name) for name in meta.get("externals", ())]
        # Linking needs libgomp loaded when the object has parallel loops.
        if any(name.startswith(("GOMP_", "omp_")) for name in externals):
            from .llvm.parallel import load_openmp_runtime
            load_openmp_runtime()
        library = jit_link(obj, [spec.symbol for spec in specs], label=str(meta["label"]))
    except (MLCBenchError, KeyError, TypeError, AttributeError, ValueError):
        return None
    kernels = {spec.name: (spec, library.addresses[spec.symbol]) for spec in specs}
    artifact = CachedArtifact(obj, externals, str(meta.get("pipeline", "O3")), build)
    return Module(kernels, keepalive=library, artifact=artifact, type_key="llvm")


class CachedArtifact:
    """The compiled form of a module loaded from the cache: its object as stored; its
    IR and assembly by building the kernels again when first asked for."""

    type_key = "llvm"
    from_cache = True

    def __init__(self, obj: bytes, externals: list, pipeline: str, build):
        self._object, self._externals, self.pipeline = obj, externals, pipeline
        self._build, self._rebuilt = build, None

    def emit_object(self) -> bytes:
        return self._object

    def external_functions(self) -> list[str]:
        return list(self._externals)

    def get_source(self, fmt: str = "ll") -> str:
        if self._rebuilt is None:
            self._rebuilt = self._build()._artifact
        return self._rebuilt.get_source(fmt)


__all__ = ["CachedArtifact", "cache_key", "cached_build", "clear", "enabled", "entry_meta",
           "kernel_fingerprint", "module_fingerprints", "module_from_entry", "stats",
           "toolchain"]
