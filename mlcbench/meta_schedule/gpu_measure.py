"""Measuring GPU candidates on the simulated GPU: the modeled time, without a full run.

A module built for the simulated GPU lives in the process that built it (it cannot be
exported), and its time is *modeled* from counters that tracing a few thread blocks
gives (:mod:`mlcbench.codegen.gpu`): running every block on the CPU is not needed to
compare candidates. So the builder does all the work in its worker process, with the
worker pool's time limit and crash isolation: ``mlcbench.build`` for the GPU target,
then the trace on seeded random inputs; the "artifact" is a small JSON file with the
modeled seconds, which the runner reads::

    database = ms.tune_tir(mod, "nvidia/geforce-rtx-2080-ti", work_dir, max_trials_global=64)
    # tune_tir picks SimulatedGPUBuilder / SimulatedGPURunner for a GPU target

The modeled time never checks results. :func:`check_best` runs the best program of a
workload once, for real, on the simulator and compares it with numpy (the module built
for the CPU from the unscheduled program); a wrong one is recorded as failed and the
next one is checked.

All of it uses the simulator whatever ``cuda(0)`` is in this process: on a host with a
real device (``gpu_backend() == "cuda"``) the builds ask for ``backend="sim"`` and the
inputs are simulator arrays (host memory on ``cuda(0)``), so the workers never load the
CUDA driver and the search ranks candidates by the same model everywhere.
"""
from __future__ import annotations

import json
import os
import tempfile

import numpy as np

from .arg_info import ArgInfo
from .builder import LocalBuilder, remove_artifact
from .runner import Runner, RunnerFuture, RunnerResult
from .runner_worker import random_array

__all__ = ["SimulatedGPUBuilder", "SimulatedGPURunner", "build_simulated", "check_best",
           "modeled_profile"]


def modeled_profile(rt_mod, func_name: str, args):
    """The counters and modeled time of one call of ``func_name`` on ``args`` (NDArrays
    on ``cuda(0)``), from tracing alone: the kernels do not run. Races and out-of-bounds
    accesses raise as in a call."""
    from ..codegen.gpu.profile import GPUProfile, profile_kernel
    function = rt_mod.get_function(func_name)
    host = function.host
    env = host.bind(args)
    kernels = []
    for launch in host.launches:
        kernel = host.kernels[launch.kernel]
        _, globals_ = kernel.buffers(host.launch_args(launch, env))
        kernels.append(profile_kernel(kernel.nest, globals_, function.spec))
    return GPUProfile(host.name, function.target_name, tuple(kernels))


def device_inputs(mod, seed: int = 0) -> tuple:
    """Seeded random inputs for the entry function of ``mod``: (numpy arrays, arrays of
    the simulated GPU on ``cuda(0)``, also where ``cuda(0)`` is a real device)."""
    from ..runtime import cuda
    from ..runtime.ndarray import NDArray
    # Seeded: every candidate of a workload is traced on the same inputs.
    rng = np.random.default_rng(seed)
    arrays = [random_array(info, rng) for info in ArgInfo.from_entry_func(mod)]
    # The simulator's arrays are host memory marked cuda(0); nd.array would copy to a
    # real device where there is one.
    return arrays, [NDArray(np.ascontiguousarray(a).copy(), cuda(0)) for a in arrays]


def build_simulated(mod, target):
    """``mlcbench.build(mod, target)`` for the simulated GPU, whatever ``cuda(0)`` is."""
    from ..codegen.gpu import build_gpu
    from ..tir.build import as_module, as_target
    from ..tir.transform.lower_gpu import lower_gpu
    target = as_target(target)
    return build_gpu(lower_gpu(as_module(mod, None), target), target, backend="sim")


def build_and_model(mod, target) -> dict:
    """Runs in a builder worker: build ``mod`` for the GPU ``target`` and model one call
    of its entry function on seeded random inputs."""
    from .runner_worker import entry_function_name
    rt_mod = build_simulated(mod, target)
    _, args = device_inputs(mod)
    profile = modeled_profile(rt_mod, entry_function_name(rt_mod), args)
    return {"seconds": profile.seconds, "profile": str(profile)}


def export_model(result: dict) -> str:
    """Write the modeled result as ``candidate.json`` in a new temporary folder."""
    folder = tempfile.mkdtemp(prefix="mlcbench-build-")
    path = os.path.join(folder, "candidate.json")
    with open(path, "w") as out:
        json.dump(result, out)
    return path


class SimulatedGPUBuilder(LocalBuilder):
    """Build and model candidates in worker processes (see the module docstring); the
    other parameters are :class:`~.builder.LocalBuilder`'s.

    >>> builder = SimulatedGPUBuilder(max_workers=2, timeout_sec=60)
    """

    def __init__(self, max_workers: int | None = None, timeout_sec: float = 60.0, pool=None):
        super().__init__(max_workers=max_workers, timeout_sec=timeout_sec,
                         f_build=build_and_model, f_export=export_model, pool=pool)


class SimulatedGPURunner(Runner):
    """Report the modeled time a :class:`SimulatedGPUBuilder` wrote, ``repeat`` times
    (a model gives the same figure every time).

    >>> runner = SimulatedGPURunner()
    """

    check_correctness = False      # the modeled time needs no reference build
    verify_best = True             # tune_tir checks the fastest programs (check_best)

    def __init__(self, repeat: int = 1, cleanup: bool = True):
        self.repeat, self.cleanup = repeat, cleanup

    def run(self, runner_inputs) -> list:
        futures = []
        for inp in runner_inputs:
            # The builder already modeled the time; running only reads it back.
            futures.append(RunnerFuture(self._result(inp.artifact_path)))
            if self.cleanup:
                remove_artifact(inp.artifact_path)
        return futures

    def _result(self, path) -> RunnerResult:
        try:
            with open(path) as src:
                seconds = float(json.load(src)["seconds"])
        except (OSError, TypeError, KeyError, ValueError) as err:
            return RunnerResult(None, f"no modeled time for {path!r}: {err}")
        # A model gives the same figure every time: one reading, repeated.
        return RunnerResult([seconds] * self.repeat, None)

    def shutdown(self) -> None:
        pass


def check_best(database, mod, target, max_checks: int = 3, rtol: float = 1e-3,
               atol: float = 1e-3):
    """Run the fastest records of ``mod`` in turn on the simulated GPU until one
    matches numpy; a record that does not is committed again as failed (with the
    mismatch as its error), so ``compile_tir`` skips it. Returns the checked record,
    or None when none of ``max_checks`` matched."""
    from .database import MAX_RUN_SECS, TuningRecord
    workload = database.lookup_workload(mod)
    if workload is None:
        return None
    expected = _reference_outputs(mod)
    # Fastest first, so the first record that matches numpy is the one to keep.
    for record in database.get_top_k(workload, max_checks):
        error = _mismatch(record.as_schedule().mod, target, expected, rtol, atol)
        if error is None:
            return record
        database.commit_tuning_record(TuningRecord(
            record.trace, workload, [MAX_RUN_SECS], target, record.args_info,
            f"wrong answer on the simulated GPU: {error}"))
    return None


def _reference_outputs(mod) -> list:
    """Every argument after one call of the unscheduled ``mod`` built for the CPU."""
    from ..runtime import ndarray as nd
    from ..tir.build import build
    from .runner_worker import entry_function_name
    arrays, _ = device_inputs(mod)
    # The reference runs on the CPU: the unscheduled function needs no GPU schedule.
    lib = build(mod, "llvm")
    args = [nd.array(a) for a in arrays]
    lib[entry_function_name(lib)](*args)
    return [a.numpy() for a in args]


def _mismatch(sch_mod, target, expected, rtol, atol) -> str | None:
    from ..ir.errors import MLCBenchError
    from .runner_worker import entry_function_name
    try:
        rt_mod = build_simulated(sch_mod, target)
        _, args = device_inputs(sch_mod)
        rt_mod[entry_function_name(rt_mod)](*args)
    except MLCBenchError as err:
        return f"{type(err).__name__}: {err}"
    for position, (arg, want) in enumerate(zip(args, expected)):
        if not np.allclose(arg.numpy(), want, rtol=rtol, atol=atol):
            worst = float(np.max(np.abs(arg.numpy().astype("float64") - want)))
            return f"argument {position} differs from numpy by up to {worst:g}"
    return None

