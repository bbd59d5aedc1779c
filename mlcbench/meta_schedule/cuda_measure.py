"""Measuring GPU candidates on a real CUDA device: built in the builder's workers, timed
with CUDA events in this process.

Where ``cuda(0)`` is a real device (``gpu_backend() == "cuda"``), ``tune_tir`` for a GPU
target times each candidate on it, as TVM does, instead of modeling it on the simulated
GPU (:mod:`.gpu_measure`, which every host without a device uses)::

    database = ms.tune_tir(mod, "nvidia/nvidia-h100", work_dir, max_trials_global=64)
    # on a host with an NVIDIA GPU: CUDABuilder / CUDARunner

The builder's workers lower each candidate and print its PTX, so a schedule that breaks
a launch limit or the code generator fails there, isolated and in parallel, without
the device. A module built for the device lives in the process that built it (it cannot
be exported), so the artifact is the candidate itself, as TVMScript text; the runner
parses it (text is data, never run: :func:`~mlcbench.script.parser.entry.from_source`),
builds it again for the device in this process, fills its arguments with seeded random
data and times it with ``time_evaluator`` (CUDA events). Results are checked afterwards
as on the simulator: the fastest records are run once on the simulated GPU and compared
with numpy (:func:`.gpu_measure.check_best`).

The device runs one candidate at a time in the tuning process. A kernel cannot be
stopped once launched, so ``timeout_sec`` bounds only the builds; the schedules the
search produces end in bounded time. A failed launch (too many registers for the block,
say) is recorded as that candidate's error and the next one runs.
"""
from __future__ import annotations

import json

import numpy as np

from ..ir.errors import MLCBenchError
from .builder import LocalBuilder, remove_artifact
from .gpu_measure import export_model
from .runner import EvaluatorConfig, Runner, RunnerFuture, RunnerResult
from .runner_worker import random_array

__all__ = ["CUDABuilder", "CUDARunner", "build_for_device"]


def build_for_device(mod, target) -> dict:
    """Runs in a builder worker: lower ``mod`` for the GPU ``target`` and print its PTX
    (the launch limits verified, each entry checked) without touching a device; returns
    the candidate as TVMScript text and the target, for :class:`CUDARunner`."""
    from ..codegen.gpu import build_gpu
    from ..tir.build import as_module, as_target
    from ..tir.transform.lower_gpu import lower_gpu
    target = as_target(target)
    module = as_module(mod, None)
    build_gpu(lower_gpu(module, target), target, backend="cuda")
    return {"script": module.script(), "target": str(target)}


class CUDABuilder(LocalBuilder):
    """Build candidates for a real device in worker processes (see the module docstring);
    the parameters are :class:`~.builder.LocalBuilder`'s.

    >>> builder = CUDABuilder(max_workers=8, timeout_sec=60)
    """

    def __init__(self, max_workers: int | None = None, timeout_sec: float = 60.0, pool=None):
        super().__init__(max_workers=max_workers, timeout_sec=timeout_sec,
                         f_build=build_for_device, f_export=export_model, pool=pool)


class CUDARunner(Runner):
    """Time the candidates of a :class:`CUDABuilder` on ``cuda(0)``, one after another
    in this process, with ``evaluator_config``'s ``number``, ``repeat`` and
    ``min_repeat_ms`` (CUDA events around the calls). With ``verify_best`` (the default)
    ``tune_tir`` runs the fastest programs once on the simulated GPU and compares them
    with numpy; a caller that checks the results itself on the device, where the
    simulator would take minutes (a 4096^3 matmul), passes False.

    >>> runner = CUDARunner(EvaluatorConfig(number=10, repeat=3, min_repeat_ms=20))
    """

    check_correctness = False      # checked afterwards on the simulator (check_best)

    def __init__(self, evaluator_config: EvaluatorConfig | None = None, seed: int = 0,
                 cleanup: bool = True, verify_best: bool = True):
        self.evaluator_config = evaluator_config or EvaluatorConfig(number=10, repeat=3,
                                                                    min_repeat_ms=20)
        self.seed, self.cleanup, self.verify_best = seed, cleanup, verify_best

    def run(self, runner_inputs) -> list:
        futures = []
        for inp in runner_inputs:
            futures.append(RunnerFuture(self._measure(inp)))
            if self.cleanup:
                remove_artifact(inp.artifact_path)
        return futures

    def _measure(self, inp) -> RunnerResult:
        try:
            mod, target = _read_candidate(inp.artifact_path)
        except (OSError, TypeError, KeyError, ValueError, MLCBenchError) as err:
            return RunnerResult(None, f"no candidate to run in {inp.artifact_path!r}: {err}")
        try:
            seconds = self._time(mod, target, inp.args_info)
        except MLCBenchError as err:
            return RunnerResult(None, f"on the device: {type(err).__name__}: {err}")
        from ..runtime import cuda_driver
        return RunnerResult(seconds, None, host="cuda(0)", cpu=cuda_driver.context().name)

    def _time(self, mod, target, args_info) -> list:
        from ..codegen.gpu import build_gpu
        from ..runtime import cuda, ndarray
        from ..tir.transform.lower_gpu import lower_gpu
        from .runner_worker import entry_function_name
        rt_mod = build_gpu(lower_gpu(mod, target), target, backend="cuda")
        # Seeded: every candidate of a workload runs on the same data.
        rng = np.random.default_rng(self.seed)
        args = [ndarray.array(random_array(info, rng), cuda(0)) for info in args_info]
        config = self.evaluator_config
        evaluator = rt_mod.time_evaluator(entry_function_name(rt_mod), cuda(0),
                                          number=config.number, repeat=config.repeat,
                                          min_repeat_ms=config.min_repeat_ms)
        return list(evaluator(*args).results)

    def shutdown(self) -> None:
        pass


def _read_candidate(path) -> tuple:
    """(IRModule, Target) from a :func:`build_for_device` artifact, parsed, never run."""
    from ..script.parser.entry import from_source
    from ..target import Target
    from ..tir.build import as_module
    with open(path) as src:
        candidate = json.load(src)
    if not (isinstance(candidate, dict) and isinstance(candidate.get("script"), str)
            and isinstance(candidate.get("target"), str)):
        raise ValueError("expected a JSON object with 'script' and 'target' strings")
    return as_module(from_source(candidate["script"]), None), Target(candidate["target"])
