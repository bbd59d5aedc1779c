"""Runners: load built candidates and time them, each in a worker process.

``LocalRunner`` loads a candidate's library in a worker (see :mod:`.worker_pool`), fills
its arguments with seeded random data, optionally checks its answer against a
reference build of the unscheduled module, then times it with ``time_evaluator``
semantics (``number`` / ``repeat`` / ``min_repeat_ms``, optional cache flush). A
candidate that segfaults, hangs past ``timeout_sec`` or answers wrongly comes back with
an ``error_msg``; the worker is replaced when needed and the next candidate runs::

    runner = LocalRunner(timeout_sec=10, evaluator_config=EvaluatorConfig(number=5))
    (future,) = runner.run([RunnerInput(artifact_path, "llvm", args_info)])
    future.result().run_secs       # seconds per call, one per repeat (or None)

``ExecutorRunner`` (also named ``DaskRunner``) measures on the workers of a Dask client
or of any ``concurrent.futures.Executor`` (see :mod:`.executor_pool`). Libraries travel
to the workers as bytes; every result names the worker, its host and its CPU, and one
runner refuses to mix measurements taken on different CPUs (they are not comparable)
unless ``allow_mixed_cpus=True``. On Dask each measurement holds the resource
``measure=1``, so a worker started with ``dask worker --resources measure=1`` measures
one candidate at a time while builds elsewhere go on::

    runner = DaskRunner(client, evaluator_config=EvaluatorConfig(number=5))
    result = runner.run(inputs)[0].result()
    result.worker, result.host, result.cpu
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

from ..ir.errors import InvalidValueError, TuningError
from .adaptive_timing import AdaptiveTiming, Measurement, time_limit
from .background import BackgroundCall
from .builder import remove_artifact
from .database import MAX_RUN_SECS
from .executor_pool import ExecutorPool, worker_identity
from .runner_worker import (REFERENCE_TIMEOUT_SEC, run_artifact_bytes, run_in_worker,
                            run_reference_in_worker)
from .worker_pool import WorkerPool

__all__ = ["DaskRunner", "EvaluatorConfig", "ExecutorRunner", "LocalRunner", "Runner",
           "RunnerFuture", "RunnerInput", "RunnerResult"]


@dataclass(frozen=True)
class EvaluatorConfig:
    """How to time a candidate (TVM's defaults): each of ``repeat`` measurements runs it
    ``number`` times, more when that lasts under ``min_repeat_ms``; with
    ``enable_cpu_cache_flush`` the caches are flushed before every measurement."""

    number: int = 3
    repeat: int = 1
    min_repeat_ms: float = 100
    enable_cpu_cache_flush: bool = False

    def __post_init__(self):
        if self.number < 1 or self.repeat < 1 or self.min_repeat_ms < 0:
            raise TuningError(f"EvaluatorConfig: number and repeat must be >= 1 and "
                              f"min_repeat_ms >= 0, found number={self.number}, "
                              f"repeat={self.repeat}, min_repeat_ms={self.min_repeat_ms}")


@dataclass(frozen=True)
class RunnerInput:
    """A built candidate: its library, the device kind and its arguments.

    ``reference_path``, when given, is a library of the unscheduled module: the
    candidate's outputs must match it (see ``LocalRunner(check_correctness=...)``).
    ``workload_key`` names the workload the candidate implements and ``best_secs`` is
    the best time known for it: with them a runner may stop measuring a candidate
    that is clearly slower (see :mod:`.adaptive_timing`); without, it measures in full.
    """

    artifact_path: str | None
    device_type: str = "llvm"
    args_info: list | None = None
    reference_path: str | None = None
    workload_key: str | None = None
    best_secs: float | None = None


@dataclass(frozen=True)
class RunnerResult:
    """Seconds per call, one per repeat; or None with ``error_msg``. ``worker``,
    ``host`` and ``cpu`` say where it was measured (None where the runner does not say),
    ``measurement`` how (an :class:`~.adaptive_timing.Measurement`)."""

    run_secs: list | None
    error_msg: str | None
    worker: str | None = None
    host: str | None = None
    cpu: str | None = None
    measurement: Measurement | None = None


class RunnerFuture:
    """A result that may not be ready yet: ``done()`` and ``result()``."""

    def __init__(self, result: RunnerResult | None = None):
        self._result = result

    def done(self) -> bool:
        return self._result is not None

    def result(self) -> RunnerResult:
        if self._result is None:
            raise TuningError("RunnerFuture.result: the run has not finished")
        return self._result


class Runner:
    """Base of runners: ``run(list[RunnerInput]) -> list[RunnerFuture]``.

    ``verify_best``: after tuning, ``tune_tir`` runs the fastest programs once on the
    simulated GPU and compares them with numpy (the GPU runners, whose timings check no
    results; :func:`.gpu_measure.check_best`)."""

    verify_best = False

    def run(self, runner_inputs: list[RunnerInput]) -> list[RunnerFuture]:
        raise NotImplementedError

    @staticmethod
    def create(kind: str = "local", *args, **kwargs) -> "Runner":
        if kind != "local":
            raise InvalidValueError(f"Runner.create: unknown kind {kind!r}, expected 'local'")
        return LocalRunner(*args, **kwargs)


class LocalRunner(Runner):
    """Time candidates one after another in a worker process (see the module docstring).

    Parameters
    ----------
    timeout_sec
        Seconds one candidate (check and timing together) may take.
    evaluator_config
        An :class:`EvaluatorConfig`, or a dict of its fields.
    check_correctness
        Compare every candidate's arguments after one call with the reference build's
        (when the input names one), within ``rtol``/``atol``.
    cooldown_sec
        Pause between candidates, so one's heat does not slow the next.
    cleanup
        Delete each candidate's library once it has run.
    pool
        Where candidates run: a :class:`~.worker_pool.WorkerPool` of ``max_workers``
        processes by default, or any pool with its ``map``.
    adaptive
        An :class:`~.adaptive_timing.AdaptiveTiming`: a candidate whose input names
        its workload is measured only as long as its comparison with the best of that
        workload needs (the best is remembered across calls). None: every candidate
        in full.
    """

    def __init__(self, timeout_sec: float = 30.0, evaluator_config=None,
                 cooldown_sec: float = 0.0, check_correctness: bool = True,
                 rtol: float = 1e-3, atol: float = 1e-3, cleanup: bool = True,
                 max_workers: int = 1, pool=None, *,
                 adaptive: AdaptiveTiming | None = AdaptiveTiming()):
        if isinstance(evaluator_config, dict):
            evaluator_config = EvaluatorConfig(**evaluator_config)
        self.evaluator_config = evaluator_config or EvaluatorConfig()
        self.timeout_sec, self.cooldown_sec = timeout_sec, cooldown_sec
        self.check_correctness, self.rtol, self.atol = check_correctness, rtol, atol
        self.cleanup = cleanup
        # A spare worker: a candidate stopped at the time limit waits for no restart.
        self.pool = pool if pool is not None else WorkerPool(max_workers, timeout_sec,
                                                             spares=1)
        self.adaptive = adaptive
        self.best_secs: dict[str, float] = {}    # workload key -> best time measured
        self._references_run: set = set()
        self._prefetch: tuple | None = None        # (its pool, its BackgroundCall)

    def run(self, runner_inputs: list[RunnerInput]) -> list[RunnerFuture]:
        host, cpu = worker_identity()
        futures = []
        self._join_prefetch()          # nothing else may run while candidates are timed
        self._run_references(runner_inputs)
        for index, inp in enumerate(runner_inputs):
            # No pause before the first candidate: nothing ran before it.
            if index and self.cooldown_sec > 0:
                time.sleep(self.cooldown_sec)
            best = self._best_known(inp)
            # Adaptive timing only with something to compare with; otherwise a full measurement.
            call = self._call(inp) + (best, self.adaptive if best is not None else None)
            (outcome,) = self._map_one(call, best)
            result = _as_result(outcome, "local", host, cpu)
            self._remember(inp, result)
            futures.append(RunnerFuture(result))
            if self.cleanup:
                remove_artifact(inp.artifact_path)
        return futures

    def prefetch_reference(self, runner_input: RunnerInput) -> None:
        """Start running ``runner_input``'s reference (its ``reference_path`` on its
        ``args_info``) and return: the search for the first candidates runs meanwhile.
        It runs in a worker of its own, started here (Linux stops a worker when the
        thread that started it ends), and leaves its outputs beside the reference for
        the measuring workers; :meth:`run` waits for it before it times anything."""
        self._join_prefetch()
        if not self.check_correctness or runner_input.reference_path is None \
                or not isinstance(self.pool, WorkerPool):
            return
        pool = WorkerPool(1)
        pool.start()
        self._prefetch = (pool, BackgroundCall(
            lambda: self._run_references([runner_input], pool), "mlcbench-reference"))

    def _join_prefetch(self) -> None:
        if self._prefetch is None:
            return
        (pool, call), self._prefetch = self._prefetch, None
        try:
            call.result()
        finally:
            pool.shutdown()

    def _run_references(self, runner_inputs, pool=None) -> None:
        """Run each reference once, before its candidates and not within their time
        limit: the unscheduled module of a large workload can take longer than a
        candidate may (a 1024^3 matmul: seconds, minutes on a busy machine). Its outputs
        are then kept for every worker (see :mod:`.runner_worker`). ``pool``: where
        (default: the runner's)."""
        if not self.check_correctness or not isinstance(self.pool, WorkerPool):
            return
        pool = self.pool if pool is None else pool
        for inp in runner_inputs:
            args = [a.as_json() for a in inp.args_info or ()]
            key = (inp.reference_path, repr(args))
            if inp.reference_path is None or key in self._references_run:
                continue
            self._references_run.add(key)
            pool.map(run_reference_in_worker, [(inp.reference_path, args)],
                     timeout_sec=REFERENCE_TIMEOUT_SEC)

    def _map_one(self, call: tuple, best: float | None) -> list:
        """Run one candidate; with a best to compare with, under a shorter time limit
        (:func:`~.adaptive_timing.time_limit`) where the pool takes one."""
        limit = None if best is None else time_limit(best, self.adaptive, self.timeout_sec)
        if limit is None or not isinstance(self.pool, WorkerPool):
            return self.pool.map(run_in_worker, [call])
        outcomes = self.pool.map(run_in_worker, [call], timeout_sec=limit)
        if outcomes[0].status == "timeout" and (self.timeout_sec is None
                                                or limit < self.timeout_sec):
            # Say that the shorter, adaptive limit stopped it, not the runner's own timeout.
            outcomes[0] = replace(outcomes[0], message=(
                f"{outcomes[0].message}: {self.adaptive.time_limit_factor:g}x the best "
                f"time of this workload, {best * 1e3:.3g} ms, or at least "
                f"{self.adaptive.min_time_limit_sec:g} s"))
        return outcomes

    def _best_known(self, inp: RunnerInput) -> float | None:
        """The best time to compare ``inp`` with: None when it is measured in full."""
        if self.adaptive is None or inp.workload_key is None:
            return None
        # Failed records carry MAX_RUN_SECS and prove nothing about speed.
        known = [s for s in (inp.best_secs, self.best_secs.get(inp.workload_key))
                 if s is not None and 0 < s < MAX_RUN_SECS]
        return min(known, default=None)

    def _remember(self, inp: RunnerInput, result: RunnerResult) -> None:
        if inp.workload_key is None or result.error_msg is not None or not result.run_secs:
            return
        seconds = sum(result.run_secs) / len(result.run_secs)
        self.best_secs[inp.workload_key] = min(
            seconds, self.best_secs.get(inp.workload_key, MAX_RUN_SECS))

    def _call(self, inp: RunnerInput) -> tuple:
        """The arguments of :func:`run_in_worker` for ``inp``."""
        config = self.evaluator_config
        timing = (config.number, config.repeat, config.min_repeat_ms,
                  config.enable_cpu_cache_flush)
        reference = inp.reference_path if self.check_correctness else None
        args = [a.as_json() for a in inp.args_info or ()]
        return (inp.artifact_path, args, timing, reference, self.rtol, self.atol)

    def shutdown(self) -> None:
        try:
            self._join_prefetch()
        finally:
            self.pool.shutdown()


class ExecutorRunner(LocalRunner):
    """Measure candidates on the workers of ``executor`` (a Dask ``Client`` or any
    ``concurrent.futures.Executor``), all of a batch at once; the other parameters are
    :class:`LocalRunner`'s (``cooldown_sec`` is spent on the worker before each
    candidate).

    Parameters
    ----------
    allow_mixed_cpus
        Accept measurements from workers with different CPU models in one run.
    resources
        The Dask resources one measurement holds (default ``{"measure": 1}``: one
        measurement at a time on a worker started with ``--resources measure=1``).
    isolate
        Measure each candidate in a process of its own on the worker: a crash or a
        hang then costs that process, not the worker (see :mod:`.executor_pool`).
    """

    def __init__(self, executor, timeout_sec: float = 30.0, evaluator_config=None,
                 cooldown_sec: float = 0.0, check_correctness: bool = True,
                 rtol: float = 1e-3, atol: float = 1e-3, cleanup: bool = True,
                 allow_mixed_cpus: bool = False, resources: dict | None = None,
                 isolate: bool = True):
        pool = ExecutorPool(executor, timeout_sec, isolate=isolate,
                            resources={"measure": 1} if resources is None else resources)
        super().__init__(timeout_sec, evaluator_config, cooldown_sec, check_correctness,
                         rtol, atol, cleanup, pool=pool)
        self.allow_mixed_cpus = allow_mixed_cpus
        self.cpu: tuple | None = None      # (CPU model, worker) of the first measurement

    def run(self, runner_inputs: list[RunnerInput]) -> list[RunnerFuture]:
        # before anything is measured: every worker that may measure has this run's CPU
        self._check_cpus((w, cpu) for w, (_, cpu) in self.pool.worker_identities().items())
        # Libraries travel as bytes: the workers may not share this machine's file system.
        calls = [self._bytes_call(inp) for inp in runner_inputs]
        try:
            outcomes = self.pool.map(run_artifact_bytes, calls)
        finally:
            for inp in runner_inputs if self.cleanup else ():
                remove_artifact(inp.artifact_path)
        self._check_cpus((o.worker, o.cpu) for o in outcomes if o.cpu)
        return [RunnerFuture(_as_result(o, o.worker, o.host, o.cpu)) for o in outcomes]

    def _bytes_call(self, inp: RunnerInput) -> tuple:
        path, args, timing, reference, rtol, atol = self._call(inp)
        return (_read(path), args, timing, None if reference is None else _read(reference),
                rtol, atol, self.cooldown_sec)

    def _check_cpus(self, worker_cpus) -> None:
        for worker, cpu in worker_cpus:
            if self.cpu is None:
                self.cpu = (cpu, worker)
            elif cpu != self.cpu[0] and not self.allow_mixed_cpus:
                raise TuningError(
                    f"measurements of one run must be comparable: worker {worker} has the "
                    f"CPU {cpu!r}, but {self.cpu[1]} measured this run on {self.cpu[0]!r}; "
                    f"give every run workers of one CPU model, or pass "
                    f"allow_mixed_cpus=True to the runner to mix them")


DaskRunner = ExecutorRunner


def _read(path: str | None) -> bytes | None:
    if path is None:
        raise TuningError("ExecutorRunner: a runner input has no artifact_path (the "
                          "candidate was not built)")
    with open(path, "rb") as library:
        return library.read()


def _as_result(outcome, worker=None, host=None, cpu=None) -> RunnerResult:
    where = dict(worker=worker, host=host, cpu=cpu)
    if outcome.ok and "run_secs" in outcome.value:
        how = outcome.value.get("measurement")
        return RunnerResult(outcome.value["run_secs"], None, **where,
                            measurement=None if how is None else Measurement.from_json(how))
    if outcome.ok:
        return RunnerResult(None, outcome.value["error"], **where)
    return RunnerResult(None, f"run {outcome.status}: {outcome.message}", **where)
