"""What a runner's worker process does: load a candidate, fill its arguments with seeded
random data, check its answer against the reference's outputs (computed once per worker
and kept beside the reference), and time it (:mod:`.runner` sends these calls to the
workers)."""
from __future__ import annotations

import hashlib
import os
import tempfile
import time

import numpy as np

from .adaptive_timing import AdaptiveTiming, measure_candidate
from .arg_info import ArgInfo, TensorInfo
from .builder import local_artifact, remove_artifact
from .prepacked import prepacked_arguments

__all__ = ["REFERENCE_TIMEOUT_SEC", "entry_function_name", "random_array", "run_artifact_bytes",
           "run_in_worker", "run_reference_in_worker"]

_INPUTS: dict = {}         # args key -> numpy arrays, the same in every run of a worker
_REFERENCES: dict = {}     # (reference path, args key) -> arguments after the reference ran


def run_in_worker(artifact_path, args_json, timing, reference_path, rtol, atol,
                  best_secs: float | None = None,
                  adaptive: AdaptiveTiming | None = None) -> dict:
    """Runs in a worker: ``{"run_secs": [...], "measurement": {...}}``, or ``{"error":
    message}`` for a wrong answer (a crash or a hang never returns: the pool reports
    it). With ``adaptive`` and ``best_secs`` a clearly slower candidate stops early."""
    from ..runtime import load_module
    from ..runtime import ndarray as nd
    from ..runtime.benchmark import cache_flush_cpu_non_first_arg
    infos = [ArgInfo.from_json(a) for a in args_json]
    lib = load_module(artifact_path)
    func = lib[entry_function_name(lib)]
    args = [nd.array(a) for a in _seeded_inputs(infos)]
    # A weight the model packs at build time is packed once here, outside the timing;
    # ``called`` keeps the packed copy alive, converted holds only its address.
    called = prepacked_arguments(lib, func, args)
    converted = func.convert_args(called)

    def check():
        if reference_path is None:
            return None
        mismatch = _compare(args, _reference_outputs(reference_path, infos), rtol, atol)
        return mismatch and f"wrong answer: {mismatch}"

    flush = (lambda: cache_flush_cpu_non_first_arg(*args)) if timing[3] else None
    run_secs, how = measure_candidate(
        lambda: func.call_converted(converted), check, timing, best_secs,
        adaptive or AdaptiveTiming(), _counting_measure(func, converted), flush)
    if run_secs is None:
        return {"error": how}
    return {"run_secs": run_secs, "measurement": how.as_json()}


def _counting_measure(func, converted):
    """``measure(number, repeat, min_repeat_ms, preproc) -> (seconds per call of each
    repeat, calls made)`` for :func:`~.adaptive_timing.measure_candidate`."""
    from ..runtime.benchmark import measure
    calls = [0]

    def call():
        calls[0] += 1
        func.call_converted(converted)

    def timed(number, repeat, min_repeat_ms, preproc):
        before = calls[0]
        result = measure(call, (), number=number, repeat=repeat,
                         min_repeat_ms=min_repeat_ms, preproc=preproc, warmup=False)
        return list(result.results), calls[0] - before
    return timed


REFERENCE_TIMEOUT_SEC = 3600.0


def run_reference_in_worker(reference_path: str, args_json) -> None:
    """Runs in a worker: the reference's outputs, computed and kept for the candidates."""
    _reference_outputs(reference_path, [ArgInfo.from_json(a) for a in args_json])


def run_artifact_bytes(artifact: bytes, args_json, timing, reference: bytes | None, rtol,
                       atol, cooldown_sec: float = 0.0) -> dict:
    """Runs on a remote worker: :func:`run_in_worker` on a library given as bytes."""
    if cooldown_sec > 0:
        time.sleep(cooldown_sec)
    path = local_artifact(artifact)
    try:
        reference_path = None if reference is None else _reference_file(reference)
        return run_in_worker(path, args_json, timing, reference_path, rtol, atol)
    finally:
        remove_artifact(path)


def _reference_file(library: bytes) -> str:
    """The reference library written once per worker machine, named by its hash (every
    candidate of a task carries the same one)."""
    digest = hashlib.sha256(library).hexdigest()[:24]
    path = os.path.join(tempfile.gettempdir(), f"mlcbench-reference-{digest}.so")
    if not os.path.exists(path):
        partial = f"{path}.{os.getpid()}.part"
        with open(partial, "wb") as out:
            out.write(library)
        os.replace(partial, path)      # another process may be writing the same file
    return path


def entry_function_name(lib) -> str:
    """The function a runner calls: the only one, else ``main``, else the first."""
    names = lib.function_names
    # A module with one function is called whatever its name.
    if len(names) != 1 and "main" in names:
        return "main"
    return names[0]


def _seeded_inputs(infos: list[TensorInfo]) -> list[np.ndarray]:
    key = tuple((i.dtype, i.shape) for i in infos)
    if key not in _INPUTS:
        # The same inputs for every candidate and the reference, in every worker.
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
    # Small integers fit every integer dtype, int8 and uint8 included.
    return rng.integers(0, 8, size=info.shape).astype(dtype)


def _reference_outputs(reference_path: str, infos) -> list[np.ndarray]:
    """The arguments after one run of the reference, computed once per worker, and
    kept beside a reference in a build folder: a worker that replaces one killed by a
    hanging candidate reads them instead of running the unscheduled module again
    (seconds for a large matmul)."""
    key = (reference_path, tuple((i.dtype, i.shape) for i in infos))
    if key not in _REFERENCES:
        folder = os.path.dirname(reference_path)
        digest = hashlib.sha256(repr(key[1]).encode()).hexdigest()[:16]
        stored = (os.path.join(folder, f"reference-outputs-{digest}.npz")
                  if os.path.basename(folder).startswith("mlcbench-build-") else None)
        _REFERENCES[key] = _read_outputs(stored, len(infos))
        if _REFERENCES[key] is None:
            _REFERENCES[key] = _run_reference(reference_path, infos)
            _write_outputs(stored, _REFERENCES[key])
    return _REFERENCES[key]


def _run_reference(reference_path: str, infos) -> list[np.ndarray]:
    from ..runtime import load_module
    from ..runtime import ndarray as nd
    lib = load_module(reference_path)
    args = [nd.array(a) for a in _seeded_inputs(infos)]
    lib[entry_function_name(lib)](*args)
    return [a.numpy() for a in args]


def _read_outputs(path: str | None, count: int) -> list[np.ndarray] | None:
    if path is None:
        return None
    try:
        with np.load(path) as stored:
            outputs = [stored[f"arg{i}"] for i in range(count)]
    except (OSError, KeyError, ValueError, TypeError):
        return None
    return outputs


def _write_outputs(path: str | None, outputs: list[np.ndarray]) -> None:
    if path is None:
        return
    partial = f"{path}.{os.getpid()}.part"
    try:
        with open(partial, "wb") as out:
            np.savez(out, **{f"arg{i}": a for i, a in enumerate(outputs)})
        os.replace(partial, path)        # another worker may be writing the same file
    except OSError:
        pass


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
