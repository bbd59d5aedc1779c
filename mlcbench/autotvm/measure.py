"""Measuring configs: build each in a worker process, time it in another.

The workers, time limits and crash handling are meta_schedule's
(:mod:`mlcbench.meta_schedule.builder`, :mod:`~mlcbench.meta_schedule.runner`); this
module speaks AutoTVM's language around them. Every config comes back as a
:class:`MeasureResult`; a config that cannot be instantiated, fails to compile,
crashes, hangs or answers wrongly gets an ``error_no`` and tuning goes on::

    option = autotvm.measure_option(
        builder=autotvm.LocalBuilder(timeout=10),
        runner=autotvm.LocalRunner(number=5, repeat=1, timeout=10, min_repeat_ms=50))
    tuner.tune(n_trial=32, measure_option=option)

Given a Dask ``Client`` (or any ``concurrent.futures.Executor``) as ``executor``, or in
place of the builder or the runner in :func:`measure_option`, configs are compiled and
timed on its workers (see :mod:`mlcbench.meta_schedule.executor_pool`)::

    option = autotvm.measure_option(builder=client, runner=client)
"""
from __future__ import annotations

import enum
import os
import time
from typing import NamedTuple

from ..ir.errors import InvalidValueError, MLCBenchError
from ..meta_schedule import builder as ms_builder
from ..meta_schedule import runner as ms_runner
from ..meta_schedule.arg_info import ArgInfo
from ..meta_schedule.executor_pool import as_executor
from ..target import Target

__all__ = ["MeasureErrorNo", "MeasureInput", "MeasureResult", "BuildResult", "Builder",
           "Runner", "LocalBuilder", "LocalRunner", "measure_option", "create_measure_batch"]


class MeasureErrorNo(enum.IntEnum):
    """What went wrong with a config (TVM's numbering)."""

    NO_ERROR = 0
    INSTANTIATION_ERROR = 1
    COMPILE_HOST = 2
    COMPILE_DEVICE = 3
    RUNTIME_DEVICE = 4
    WRONG_ANSWER = 5
    BUILD_TIMEOUT = 6
    RUN_TIMEOUT = 7
    UNKNOWN_ERROR = 8


class MeasureInput(NamedTuple):
    """A config of a task, for a target."""

    target: object
    task: object
    config: object

    @property
    def workload(self) -> tuple:
        return self.task.workload


class MeasureResult(NamedTuple):
    """``costs``: seconds per run (or the error message when ``error_no`` is not 0);
    ``all_cost``: wall seconds of building and measuring; ``timestamp``: when it ended."""

    costs: tuple
    error_no: int
    all_cost: float
    timestamp: float


class BuildResult(NamedTuple):
    """A built config: ``filename`` of its library, or ``error`` (with ``error_no``)."""

    filename: str | None
    arg_info: list | None
    error: str | None
    time_cost: float
    error_no: int = 0


def _error(error_no, message, started) -> MeasureResult:
    return MeasureResult((str(message),), int(error_no), time.time() - started, time.time())


class Builder:
    """Base of builders: ``set_task(task)``, then ``build(measure_inputs)``."""

    n_parallel = 1

    def set_task(self, task) -> None:
        self.task = task

    def build(self, measure_inputs) -> list:
        raise NotImplementedError


class Runner:
    """Base of runners: ``set_task(task)``, then ``run(measure_inputs, build_results)``."""

    def set_task(self, task) -> None:
        self.task = task

    def run(self, measure_inputs, build_results) -> list:
        raise NotImplementedError


class LocalBuilder(Builder):
    """Instantiate each config here, compile it in ``n_parallel`` worker processes.

    Parameters
    ----------
    timeout
        Seconds one compilation may take.
    n_parallel
        Worker processes (default: one per core); also the tuner's batch size.
    build_func
        TVM's choice of compiler: only "default" (``mlcbench.build``) exists here; any
        other value is refused.
    executor
        A Dask ``Client`` or a ``concurrent.futures.Executor`` to compile on instead.
    """

    def __init__(self, timeout: float = 10, n_parallel: int | None = None,
                 build_func: str = "default", executor=None):
        if build_func != "default":
            raise InvalidValueError(f"LocalBuilder: build_func must be 'default' (candidates "
                                    f"are compiled by mlcbench.build), found {build_func!r}")
        self.timeout = timeout
        self.n_parallel = n_parallel or os.cpu_count() or 1
        self._builder = (ms_builder.LocalBuilder(max_workers=self.n_parallel,
                                                 timeout_sec=timeout) if executor is None
                         else ms_builder.ExecutorBuilder(executor, timeout_sec=timeout))

    def build(self, measure_inputs) -> list:
        started = time.time()
        modules, results = [], [None] * len(measure_inputs)
        for index, inp in enumerate(measure_inputs):
            try:
                modules.append((index, inp.task.instantiate_module(inp.config)))
            except Exception as err:   # a template may raise anything for a bad config
                kind = type(err).__name__ if isinstance(err, MLCBenchError) else "error"
                results[index] = BuildResult(None, None, f"{kind}: {err}",
                                             time.time() - started,
                                             MeasureErrorNo.INSTANTIATION_ERROR)
        # A batch belongs to one task, so the first input's target stands for all.
        target = Target(str(measure_inputs[0].target)) if measure_inputs else None
        built = self._builder.build([ms_builder.BuilderInput(m, target) for _, m in modules])
        for (index, mod), out in zip(modules, built):
            if out.error_msg is None:
                results[index] = BuildResult(out.artifact_path, ArgInfo.from_entry_func(mod),
                                             None, time.time() - started)
            else:
                # meta_schedule reports failures as text: the kind is read from its wording.
                error_no = MeasureErrorNo.BUILD_TIMEOUT if "timeout" in out.error_msg \
                    else MeasureErrorNo.COMPILE_HOST
                results[index] = BuildResult(None, None, out.error_msg, time.time() - started,
                                             error_no)
        return results

    def build_reference(self, task):
        """The library of the task's reference module (for correctness checks)."""
        target = Target(str(task.target or "llvm"))
        (out,) = self._builder.build([ms_builder.BuilderInput(task.reference_module(), target)])
        return out.artifact_path


class LocalRunner(Runner):
    """Time built configs in a worker process, one after another.

    Parameters
    ----------
    number, repeat, min_repeat_ms
        ``time_evaluator`` settings: ``repeat`` measurements of ``number`` runs each (more
        runs when they last under ``min_repeat_ms``).
    timeout
        Seconds one config (check and timing) may take.
    cooldown_interval
        Seconds to pause between configs.
    enable_cpu_cache_flush
        Flush the CPU caches before each measurement.
    check_correctness
        Compare each config's outputs with the task's reference module.
    executor, allow_mixed_cpus
        A Dask ``Client`` or a ``concurrent.futures.Executor`` to measure on instead (see
        ``meta_schedule.ExecutorRunner``), and whether its workers may differ in CPU.
    """

    def __init__(self, number: int = 4, repeat: int = 3, timeout: float = 10,
                 min_repeat_ms: float = 0, cooldown_interval: float = 0.0,
                 enable_cpu_cache_flush: bool = False, check_correctness: bool = False,
                 executor=None, allow_mixed_cpus: bool = False):
        self.number, self.repeat, self.min_repeat_ms = number, repeat, min_repeat_ms
        self.timeout, self.check_correctness = timeout, check_correctness
        config = ms_runner.EvaluatorConfig(number, repeat, min_repeat_ms,
                                           enable_cpu_cache_flush)
        common = dict(timeout_sec=timeout, evaluator_config=config,
                      cooldown_sec=cooldown_interval, check_correctness=check_correctness)
        self._runner = (ms_runner.LocalRunner(**common) if executor is None else
                        ms_runner.ExecutorRunner(executor, allow_mixed_cpus=allow_mixed_cpus,
                                                 **common))
        self.reference_path = None

    def prepare_reference(self, builder: LocalBuilder, task) -> None:
        if self.check_correctness and self.reference_path is None:
            self.reference_path = builder.build_reference(task)

    def run(self, measure_inputs, build_results) -> list:
        # one batch: a runner on several workers measures the configs at once
        # all_cost covers the build too, as TVM's does.
        started = time.time() - max((b.time_cost for b in build_results), default=0.0)
        ready = [ms_runner.RunnerInput(b.filename, "llvm", b.arg_info, self.reference_path)
                 for b in build_results if b.error is None]
        outs = iter([f.result() for f in self._runner.run(ready)] if ready else [])
        results = []
        for built in build_results:
            if built.error is not None:
                results.append(_error(built.error_no, built.error, started))
                continue
            # Results come back in the order the built configs were sent.
            out = next(outs)
            if out.error_msg is None:
                results.append(MeasureResult(tuple(out.run_secs), 0, time.time() - started,
                                             time.time()))
            else:
                results.append(_error(_run_error_no(out.error_msg), out.error_msg, started))
        return results

    def __del__(self):
        ms_builder.remove_artifact(getattr(self, "reference_path", None))


def _run_error_no(message: str) -> MeasureErrorNo:
    if message.startswith("wrong answer"):
        return MeasureErrorNo.WRONG_ANSWER
    if "timeout" in message:
        return MeasureErrorNo.RUN_TIMEOUT
    return MeasureErrorNo.RUNTIME_DEVICE


def measure_option(builder=None, runner=None) -> dict:
    """How to measure: ``{"builder": ..., "runner": ...}`` (defaults: local ones); a Dask
    ``Client`` or a ``concurrent.futures.Executor`` stands for a builder or a runner with
    the default settings on its workers."""
    if as_executor(builder) is not None:
        builder = LocalBuilder(executor=builder)
    if as_executor(runner) is not None:
        runner = LocalRunner(executor=runner)
    return {"builder": builder or LocalBuilder(), "runner": runner or LocalRunner()}


def create_measure_batch(task, option: dict):
    """``measure_batch(inputs) -> results`` for ``task``; ``.n_parallel`` is its width."""
    builder, runner = option["builder"], option["runner"]
    builder.set_task(task)
    runner.set_task(task)
    if isinstance(runner, LocalRunner) and isinstance(builder, LocalBuilder):
        runner.prepare_reference(builder, task)

    def measure_batch(measure_inputs):
        return runner.run(measure_inputs, builder.build(measure_inputs))

    measure_batch.n_parallel = getattr(builder, "n_parallel", 1)
    return measure_batch
