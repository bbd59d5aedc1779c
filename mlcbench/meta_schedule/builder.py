"""Builders: compile scheduled modules into shared libraries a runner can load.

``LocalBuilder`` compiles each candidate in a worker process with a time limit (see
:mod:`.worker_pool`), writes it as a ``.so`` in a fresh temporary folder and returns
its path; a candidate that fails to compile, crashes the compiler or takes too long
comes back with an ``error_msg`` instead, and the other candidates are unaffected::

    builder = LocalBuilder(max_workers=2, timeout_sec=30)
    (result,) = builder.build([BuilderInput(sch.mod, Target("llvm"))])
    result.artifact_path      # ".../mlcbench-build-xxxx/candidate.so", or None
    result.error_msg          # None, or what went wrong

``ExecutorBuilder`` (also named ``DaskBuilder``) compiles on the workers of a Dask
client or of any ``concurrent.futures.Executor`` instead (see :mod:`.executor_pool`):
the library comes back as bytes and is written here, so a runner anywhere can be given
it::

    builder = DaskBuilder(distributed.Client("tcp://scheduler:8786"))
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass

from ..codegen import kernel_cache
from ..ir.errors import InvalidValueError
from ..ir.module import IRModule
from ..target import Target
from ..tir.build import build
from .code_size import oversized_reason, statement_limit
from .executor_pool import ExecutorPool
from .worker_pool import WorkerPool

__all__ = ["Builder", "BuilderInput", "BuilderResult", "DaskBuilder", "ExecutorBuilder",
           "LocalBuilder"]


@dataclass(frozen=True)
class BuilderInput:
    """A module to compile for ``target``; ``params`` is accepted for TVM compatibility."""

    mod: IRModule
    target: object
    params: dict | None = None


@dataclass(frozen=True)
class BuilderResult:
    """``artifact_path`` of the built library, or ``error_msg`` when the build failed."""

    artifact_path: str | None
    error_msg: str | None


class Builder:
    """Base of builders: ``build(list[BuilderInput]) -> list[BuilderResult]``."""

    def build(self, build_inputs: list[BuilderInput]) -> list[BuilderResult]:
        raise NotImplementedError

    @staticmethod
    def create(kind: str = "local", *args, **kwargs) -> "Builder":
        if kind != "local":
            raise InvalidValueError(f"Builder.create: unknown kind {kind!r}, expected 'local'")
        return LocalBuilder(*args, **kwargs)


class LocalBuilder(Builder):
    """Compile candidates in ``max_workers`` worker processes (default: one per core).

    Parameters
    ----------
    timeout_sec
        Seconds one build may take before its worker is stopped.
    f_build
        ``f_build(mod, target) -> runtime.Module``; default :func:`default_build`
        (``mlcbench.build``). Must be importable by name (a module-level function).
    f_export
        ``f_export(module) -> artifact path``, or the library's bytes (written to a
        temporary folder here); default :func:`default_export`.
    pool
        Where the builds run: a :class:`~.worker_pool.WorkerPool` of ``max_workers``
        processes by default, or any pool with its ``map``.
    max_unrolled_statements
        A candidate whose unrolled and vectorized body holds more statements is not
        compiled: it fails with the reason (see :mod:`.code_size`). "target": the
        target's :func:`~.code_size.statement_limit`; None: no limit.
    initializer
        TVM's worker initializer is not supported (the workers start with mlcbench
        imported; ``f_build`` decides what they run); anything but None is refused.
    """

    def __init__(self, max_workers: int | None = None, timeout_sec: float = 30.0,
                 f_build=None, f_export=None, initializer=None, pool=None,
                 max_unrolled_statements: int | str | None = "target"):
        if initializer is not None:
            raise InvalidValueError("LocalBuilder: initializer is not supported (workers "
                                    "start with mlcbench imported; pass f_build to change "
                                    f"what they run), found {initializer!r}")
        self.max_workers = max_workers or os.cpu_count() or 1
        self.timeout_sec = timeout_sec
        self.f_build, self.f_export = f_build or default_build, f_export or default_export
        self.pool = pool if pool is not None else WorkerPool(self.max_workers, timeout_sec)
        if max_unrolled_statements not in (None, "target") and not (
                isinstance(max_unrolled_statements, int) and max_unrolled_statements > 0):
            raise InvalidValueError("LocalBuilder: max_unrolled_statements must be a positive "
                                    "int, 'target' or None, found "
                                    f"{max_unrolled_statements!r}")
        self.max_unrolled_statements = max_unrolled_statements

    def build(self, build_inputs: list[BuilderInput]) -> list[BuilderResult]:
        results: list[BuilderResult | None] = [self._refusal(inp.mod, inp.target)
                                               for inp in build_inputs]
        todo = [i for i, refused in enumerate(results) if refused is None]
        # The target as text: it crosses into the worker processes.
        calls = [(self.f_build, self.f_export, build_inputs[i].mod, str(build_inputs[i].target))
                 for i in todo]
        for index, outcome in zip(todo, self.pool.map(build_and_export, calls) if calls else []):
            if outcome.ok:
                results[index] = BuilderResult(local_artifact(outcome.value), None)
            else:
                results[index] = BuilderResult(None, f"build {outcome.status}: {outcome.message}")
        return results

    def _refusal(self, mod, target) -> BuilderResult | None:
        """A failed result for a candidate too large to compile in reasonable time."""
        limit = self.max_unrolled_statements
        if limit is None:
            return None
        if limit == "target":
            limit = statement_limit(target)
        reason = oversized_reason(mod, limit)
        return None if reason is None else BuilderResult(None, f"build refused: {reason}")

    def shutdown(self) -> None:
        self.pool.shutdown()


class ExecutorBuilder(LocalBuilder):
    """Compile candidates on the workers of ``executor`` (a Dask ``Client`` or any
    ``concurrent.futures.Executor``), as many at once as they have threads; each library
    travels back as bytes. ``isolate`` builds in a process of its own on the worker, so
    a compiler crash costs that process only (see :mod:`.executor_pool`)."""

    def __init__(self, executor, timeout_sec: float = 30.0, f_build=None,
                 isolate: bool = True):
        super().__init__(max_workers=1, timeout_sec=timeout_sec, f_build=f_build,
                         f_export=export_bytes,
                         pool=ExecutorPool(executor, timeout_sec, isolate=isolate))


DaskBuilder = ExecutorBuilder


def build_and_export(f_build, f_export, mod: IRModule, target: str) -> str:
    """Runs in a worker: compile ``mod`` and write it where the runner can load it."""
    return f_export(f_build(mod, Target(target)))


def default_build(mod: IRModule, target: Target):
    """Compile ``mod`` exactly as ``mlcbench.build`` does, outside the kernel cache (each
    candidate is built once; its entry would only evict the kernels of models)."""
    # Each candidate is built once; its cache entry would only evict the kernels of models.
    with kernel_cache.disabled():
        return build(mod, target)


def default_export(module) -> str:
    """Write ``module`` as ``candidate.so`` in a new temporary folder; return its path."""
    folder = tempfile.mkdtemp(prefix="mlcbench-build-")
    path = os.path.join(folder, "candidate.so")
    module.export_library(path)
    return path


def export_bytes(module) -> bytes:
    """The shared library of ``module`` as bytes (for a builder on another machine)."""
    path = default_export(module)
    try:
        with open(path, "rb") as library:
            return library.read()
    finally:
        remove_artifact(path)


def local_artifact(artifact) -> str:
    """The path of a built library: ``artifact`` itself, or its bytes written here."""
    if not isinstance(artifact, bytes):
        return artifact
    path = os.path.join(tempfile.mkdtemp(prefix="mlcbench-build-"), "candidate.so")
    with open(path, "wb") as library:
        library.write(artifact)
    return path


def remove_artifact(artifact_path: str | None) -> None:
    """Delete a built library and the temporary folder :func:`default_export` made."""
    if not artifact_path:
        return
    folder = os.path.dirname(artifact_path)
    # Only folders this module made are removed whole.
    if os.path.basename(folder).startswith("mlcbench-build-"):
        shutil.rmtree(folder, ignore_errors=True)
    elif os.path.exists(artifact_path):
        os.remove(artifact_path)
