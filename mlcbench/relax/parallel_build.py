"""A model's kernels scheduled, lowered and optimized in worker processes, in parallel.

Most of a cold ``relax.build`` of a real network is per kernel and independent: the
default schedules, the lowering passes (Python), LLVM IR generation and LLVM's ``-O3``
(about four fifths of ResNet-50's). The kernels are cut into runs of consecutive
kernels; forked workers each take the next run, schedule, lower and optimize it into an
LLVM module of its own and send back its bitcode and kernel metadata. This process
links the modules, in kernel order, into one module and emits one object from it, as
the serial build does (the kernel cache and ``export_library`` see a single object;
``get_source("ll-unoptimized")`` shows the runs' modules one after the other).

:func:`map_runs` is the same mechanism for any work on runs of kernels whose result
pickles: ``relax.build`` schedules kernels with the default rules through it where it
schedules them ahead of code generation (``PrepackWeights``).

Each kernel is optimized by the same pipeline on the same IR either way: kernels do not
call each other, and what they share (declarations, their own outlined parallel bodies,
which are internal) does not cross kernels. So the parallel build computes what the
serial one does.

``MLCBENCH_BUILD_JOBS`` sets the number of workers (default: the cores this process may
run on, at most 8; ``1`` builds in this process). Builds of fewer than
:data:`MIN_KERNELS` kernels, builds in a daemon process (a pool's worker), in one of
these workers or outside the main thread, and kernels that carry imported LLVM IR
(``pragma_import_llvm``, which the modules would each define) are built in this process.
If a worker fails in any way (a kernel's error, a worker killed), the whole build runs
again here, serially, so an error reads as it does without workers.
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import threading
from collections import Counter
from typing import Callable

from ..codegen.llvm.engine import (LLVMArtifact, check_externals_resolve, compile_ir,
                                   initialize_llvm, jit_link, machine_for)
from ..codegen.llvm.module import generate_ir, imported_llvm
from ..ir.errors import CodegenError
from ..runtime.metadata import decode_metadata, encode_metadata
from ..runtime.module import Module

JOBS_VARIABLE = "MLCBENCH_BUILD_JOBS"
MIN_KERNELS = 8
"""Fewer kernels than this are built in this process (forking costs more than it saves)."""
MAX_DEFAULT_JOBS = 8
RUNS_PER_WORKER = 4         # several runs per worker even out kernels of unequal cost
TIMEOUT_SECONDS = 1800      # a worker that hangs (a lock held at fork) must not hang us

_job: Callable | None = None    # the work of a run, for the workers forked while it is set
_in_worker = False
_stats: Counter = Counter()


def stats() -> dict:
    """Counts of this process: ``parallel`` builds, ``mapped``: works done in workers by
    :func:`map_runs` (a parallel build's among them), ``fallbacks`` to this process."""
    return {name: _stats[name] for name in ("parallel", "mapped", "fallbacks")}


def build_jobs(kernel_count: int) -> int:
    """How many worker processes a build of ``kernel_count`` kernels uses (1: none)."""
    if _in_worker or kernel_count < MIN_KERNELS or multiprocessing.current_process().daemon:
        return 1
    if threading.current_thread() is not threading.main_thread():
        return 1    # forking from a side thread copies whatever locks the main one holds
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    text = os.environ.get(JOBS_VARIABLE, "").strip()
    try:
        jobs = int(text) if text else min(len(os.sched_getaffinity(0)), MAX_DEFAULT_JOBS)
    except (ValueError, AttributeError):
        jobs = 1
    return max(1, min(jobs, kernel_count))


def build_kernels(names: list, lowered_run: Callable, target, serial: Callable,
                  label: str) -> Module:
    """The runtime Module of kernels ``names``: ``lowered_run(names_of_a_run)`` gives the
    lowered IRModule of a run of them (in a worker); ``serial()`` builds all of them
    here, the way taken when workers are not worth it or fail."""
    results = map_runs(names, lambda run: _compile_run(lowered_run, target, run))
    if results is not None:
        try:
            module = _link(results, target, label)
        except Exception:       # noqa: BLE001  (the serial build says what it is)
            module = None
        if module is not None:
            _stats["parallel"] += 1
            return module
        _stats["fallbacks"] += 1
    return serial()


def map_runs(names: list, work: Callable) -> list | None:
    """``[work(run) for run in runs]`` over runs of consecutive ``names``, computed in
    forked workers (``work``'s results must pickle); None when :func:`build_jobs` says
    this process (then the caller does the work itself), or when a worker failed."""
    jobs = build_jobs(len(names))
    if jobs < 2:
        return None
    try:
        results = _run_in_workers(_runs(names, jobs * RUNS_PER_WORKER), work, jobs)
    except Exception:           # noqa: BLE001  (any failure: the serial way says what it is)
        _stats["fallbacks"] += 1
        return None
    _stats["mapped"] += 1
    return results


def _runs(names: list, count: int) -> list:
    """``names`` cut into ``count`` runs of consecutive names, of near-equal length."""
    count = max(1, min(count, len(names)))
    bounds = [len(names) * k // count for k in range(count + 1)]
    return [names[bounds[k]:bounds[k + 1]] for k in range(count)]


def _run_in_workers(runs: list, work: Callable, jobs: int) -> list:
    global _job
    _job = work
    context = multiprocessing.get_context("fork")
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    try:
        return list(pool.map(_work_in_worker, runs, timeout=TIMEOUT_SECONDS))
    finally:
        _job = None
        for process in list(getattr(pool, "_processes", {}).values()):
            if process.is_alive():
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def _work_in_worker(run: list):
    """In a worker (forked while ``_job`` held the work): the work of one run."""
    global _in_worker
    _in_worker = True
    return _job(run)


def _compile_run(lowered_run: Callable, target, names: list) -> tuple:
    """``(kernel metadata, optimized bitcode, unoptimized IR, pipeline)`` of a run."""
    from ..tir.build import _function_name, kernel_spec, kernel_symbol
    from ..tir.function import PrimFunc
    with target:
        lowered = lowered_run(names)
    funcs = {_function_name(gv, f): f for gv, f in lowered.items() if isinstance(f, PrimFunc)}
    symbols = {name: kernel_symbol(name) for name in funcs}
    if imported_llvm(funcs):
        raise CodegenError("kernels with pragma_import_llvm are built in one module")
    specs = [kernel_spec(name, symbols[name], func) for name, func in funcs.items()]
    text = generate_ir({symbols[n]: f for n, f in funcs.items()}, target)
    artifact = compile_ir(text, target, names[0])
    return encode_metadata(specs), artifact._module.as_bitcode(), text, artifact.pipeline


def _link(results: list, target, label: str) -> Module:
    """One module of the runs' optimized modules, in order, with the metadata of all."""
    import llvmlite.binding as llvm
    initialize_llvm()
    specs = [spec for result in results for spec in decode_metadata(result[0])]
    module = llvm.parse_assembly(generate_ir({}, target, encode_metadata(specs), label))
    module.name = label
    for _, bitcode, _, _ in results:
        module.link_in(llvm.parse_bitcode(bitcode))
    module.verify()
    pipelines = [result[3] for result in results if result[3] != "O3"]
    texts = "\n".join(result[2] for result in results)
    artifact = LLVMArtifact(module, machine_for(target), texts, pipelines[0] if pipelines
                            else "O3")
    if any(name.startswith(("GOMP_", "omp_")) for name in artifact.external_functions()):
        from ..codegen.llvm.parallel import load_openmp_runtime
        load_openmp_runtime()   # the workers emitted the parallel loops, and loaded it
    check_externals_resolve(artifact, label)
    library = jit_link(artifact.emit_object(), [spec.symbol for spec in specs], label=label)
    kernels = {spec.name: (spec, library.addresses[spec.symbol]) for spec in specs}
    return Module(kernels, keepalive=library, artifact=artifact, type_key="llvm")


__all__ = ["JOBS_VARIABLE", "MIN_KERNELS", "build_jobs", "build_kernels", "map_runs", "stats"]
