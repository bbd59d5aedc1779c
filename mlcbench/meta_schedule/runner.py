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
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..ir.errors import InvalidValueError, TuningError
from .arg_info import ArgInfo, TensorInfo
from .builder import remove_artifact
from .worker_pool import WorkerPool

__all__ = ["EvaluatorConfig", "LocalRunner", "Runner", "RunnerFuture", "RunnerInput",
           "RunnerResult"]


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
    """

    artifact_path: str | None
    device_type: str = "llvm"
    args_info: list | None = None
    reference_path: str | None = None


@dataclass(frozen=True)
class RunnerResult:
    """Seconds per call, one per repeat; or None with ``error_msg``."""

    run_secs: list | None
    error_msg: str | None


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
    """Base of runners: ``run(list[RunnerInput]) -> list[RunnerFuture]``."""

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
    """

    def __init__(self, timeout_sec: float = 30.0, evaluator_config=None,
                 cooldown_sec: float = 0.0, check_correctness: bool = True,
                 rtol: float = 1e-3, atol: float = 1e-3, cleanup: bool = True,
                 max_workers: int = 1):
        if isinstance(evaluator_config, dict):
            evaluator_config = EvaluatorConfig(**evaluator_config)
        self.evaluator_config = evaluator_config or EvaluatorConfig()
        self.timeout_sec, self.cooldown_sec = timeout_sec, cooldown_sec
        self.check_correctness, self.rtol, self.atol = check_correctness, rtol, atol
        self.cleanup = cleanup
        self.pool = WorkerPool(max_workers, timeout_sec)

    def run(self, runner_inputs: list[RunnerInput]) -> list[RunnerFuture]:
        config = self.evaluator_config
        timing = (config.number, config.repeat, config.min_repeat_ms,
                  config.enable_cpu_cache_flush)
        futures = []
        for index, inp in enumerate(runner_inputs):
            if index and self.cooldown_sec > 0:
                time.sleep(self.cooldown_sec)
            reference = inp.reference_path if self.check_correctness else None
            args = [a.as_json() for a in inp.args_info or ()]
            call = (inp.artifact_path, args, timing, reference, self.rtol, self.atol)
            (outcome,) = self.pool.map(run_in_worker, [call])
            futures.append(RunnerFuture(_as_result(outcome)))
            if self.cleanup:
                remove_artifact(inp.artifact_path)
        return futures

    def shutdown(self) -> None:
        self.pool.shutdown()


def _as_result(outcome) -> RunnerResult:
    if outcome.ok and "run_secs" in outcome.value:
        return RunnerResult(outcome.value["run_secs"], None)
    if outcome.ok:
        return RunnerResult(None, outcome.value["error"])
    return RunnerResult(None, f"run {outcome.status}: {outcome.message}")


# -- the worker side ----------------------------------------------------------------------
_INPUTS: dict = {}         # args key -> numpy arrays, the same in every run of a worker
_REFERENCES: dict = {}     # (reference path, args key) -> arguments after the reference ran


def run_in_worker(artifact_path, args_json, timing, reference_path, rtol, atol) -> dict:
    """Runs in a worker: ``{"run_secs": [...]}``, or ``{"error": message}`` for a wrong
    answer (a crash or a hang never returns: the pool reports it)."""
    from ..runtime import cpu, load_module
    from ..runtime import ndarray as nd
    number, repeat, min_repeat_ms, flush = timing
    infos = [ArgInfo.from_json(a) for a in args_json]
    inputs = _seeded_inputs(infos)
    lib = load_module(artifact_path)
    name = entry_function_name(lib)
    args = [nd.array(a) for a in inputs]
    lib[name](*args)
    if reference_path is not None:
        mismatch = _compare(args, _reference_outputs(reference_path, infos), rtol, atol)
        if mismatch:
            return {"error": f"wrong answer: {mismatch}"}
    evaluator = lib.time_evaluator(name, cpu(), number=number, repeat=repeat,
                                   min_repeat_ms=min_repeat_ms,
                                   f_preproc="cache_flush_cpu_non_first_arg" if flush else "")
    return {"run_secs": list(evaluator(*args).results)}


def entry_function_name(lib) -> str:
    """The function a runner calls: the only one, else ``main``, else the first."""
    names = lib.function_names
    if len(names) != 1 and "main" in names:
        return "main"
    return names[0]


def _seeded_inputs(infos: list[TensorInfo]) -> list[np.ndarray]:
    key = tuple((i.dtype, i.shape) for i in infos)
    if key not in _INPUTS:
        rng = np.random.default_rng(0)
        _INPUTS[key] = [random_array(info, rng) for info in infos]
    return _INPUTS[key]


def random_array(info: TensorInfo, rng) -> np.ndarray:
    """Random data of ``info``'s dtype and shape: uniform [0, 1) floats, small integers."""
    dtype = np.dtype("bool" if info.dtype == "bool" else info.dtype)
    if dtype.kind == "f":
        return rng.random(info.shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(info.shape) < 0.5
    return rng.integers(0, 8, size=info.shape).astype(dtype)


def _reference_outputs(reference_path: str, infos) -> list[np.ndarray]:
    from ..runtime import load_module
    from ..runtime import ndarray as nd
    key = (reference_path, tuple((i.dtype, i.shape) for i in infos))
    if key not in _REFERENCES:
        lib = load_module(reference_path)
        args = [nd.array(a) for a in _seeded_inputs(infos)]
        lib[entry_function_name(lib)](*args)
        _REFERENCES[key] = [a.numpy() for a in args]
    return _REFERENCES[key]


def _compare(args, expected: list[np.ndarray], rtol: float, atol: float) -> str | None:
    """None when every argument matches, else which one differs and by how much."""
    for position, (arg, want) in enumerate(zip(args, expected)):
        got = arg.numpy()
        if want.dtype.kind == "f":
            same = np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        else:
            same = np.array_equal(got, want)
        if not same:
            diff = np.abs(got.astype("float64") - want.astype("float64"))
            worst = np.unravel_index(np.nanargmax(diff), diff.shape)
            return (f"argument {position} differs from the unscheduled module's at "
                    f"{tuple(int(i) for i in worst)}: {got[worst]} instead of {want[worst]} "
                    f"(rtol={rtol}, atol={atol})")
    return None
