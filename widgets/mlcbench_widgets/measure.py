"""Build a scheduled module, check it against the unscheduled one, and time it.

The reference is the *unscheduled* function compiled as written: a schedule must not
change the result, so every buffer (outputs, and inputs that must stay untouched) is
compared after both ran on the same random arguments. ::

    runner = KernelRunner(MyModule, "mm_relu")
    m = runner.measure(scheduled_mod, flops=2 * 128**3)
    print(m)        # 0.412 ms, 10.18 GFLOPS, matches the unscheduled function
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

import mlcbench
from mlcbench.ir import RuntimeError_
from mlcbench.runtime.timing import Timing
from mlcbench.tir import IntImm

from .gpu_roofline import is_gpu_target

__all__ = ["KernelRunner", "Measurement"]

# A schedule reorders float sums; compare with a tolerance that scales with the values.
RTOL, ATOL_SCALE = 1e-4, 1e-5


@dataclass(frozen=True)
class Measurement:
    """What one "Run" found. ``seconds``: the best of the repeats (mean per call of a batch
    each); ``gflops``: None without a count; ``results``: every repeat's figure."""
    seconds: float
    gflops: float | None
    correct: bool
    max_abs_error: float
    build_seconds: float
    results: tuple = ()
    profile: object = None      # GPU targets: the GPUProfile the modeled time comes from

    @property
    def timing(self) -> Timing:
        return Timing("run", self.results or (self.seconds,))

    def __str__(self) -> str:
        speed = f", {self.gflops:.2f} GFLOPS" if self.gflops is not None else ""
        check = ("matches the unscheduled function" if self.correct else
                 f"DIFFERS from the unscheduled function (max error {self.max_abs_error:.3g})")
        steady = self.timing
        flag = "" if steady.steady else (f" (unsteady: the best repeats differ by "
                                         f"{steady.disagreement:.0%}; the machine was busy)")
        return f"{self.seconds * 1e3:.4g} ms{speed}{flag}, {check}"


class KernelRunner:
    """Random arguments for one PrimFunc and its reference results, made on first use."""

    def __init__(self, mod, func_name: str, seed: int = 0, target="llvm"):
        self.mod, self.func_name, self.target = mod, func_name, target
        self.gpu = is_gpu_target(target)
        self.seed = seed
        self._arrays: list[np.ndarray] | None = None
        self._reference: list[np.ndarray] | None = None

    @property
    def kernel_name(self) -> str:
        func = self.mod[self.func_name]
        return func.attrs.get("global_symbol") or self.func_name

    def arguments(self) -> list[np.ndarray]:
        """One numpy array per parameter buffer, seeded: uniform [0, 1) floats, small ints."""
        if self._arrays is None:
            func = self.mod[self.func_name]
            if len(func.params) != len(func.buffer_map):
                raise RuntimeError_(f"run: {self.func_name} takes scalar parameters; the "
                                    "explorer can only run functions whose parameters are "
                                    "all buffers")
            rng = np.random.default_rng(self.seed)
            self._arrays = [_random_array(rng, func.buffer_map[p]) for p in func.params]
        return self._arrays

    def reference(self) -> list[np.ndarray]:
        """Every argument after the unscheduled function ran on :meth:`arguments`."""
        if self._reference is None:
            # An unscheduled function binds no thread, so a GPU target's reference is the
            # CPU build of the same function.
            lib = mlcbench.build(self._only_our_function(self.mod),
                                 target="llvm" if self.gpu else self.target)
            self._reference = self._call(lib, mlcbench.cpu())[1]
        return self._reference

    def _only_our_function(self, mod):
        return mlcbench.IRModule({self.func_name: mod[self.func_name]})

    @property
    def device(self):
        return mlcbench.cuda(0) if self.gpu else mlcbench.cpu()

    def _call(self, lib, device):
        """Run once on fresh copies; returns (the nd arrays, their numpy values)."""
        arrays = [mlcbench.nd.array(a.copy(), device) for a in self.arguments()]
        lib[self.kernel_name](*arrays)
        return arrays, [a.numpy() for a in arrays]

    def measure(self, mod, flops: int | None = None, repeat: int = 5,
                min_repeat_ms: float = 20.0) -> Measurement:
        """Build ``mod``, compare with the reference, then time it (best of ``repeat``).

        A kernel slower than 0.2 s per call is timed once, so "Run" stays responsive.
        On a GPU target the time is the simulated GPU's modeled time, and the
        measurement keeps the counters it comes from (``profile``).
        """
        reference = self.reference()
        start = time.perf_counter()
        lib = mlcbench.build(self._only_our_function(mod), target=self.target)
        build_seconds = time.perf_counter() - start
        start = time.perf_counter()
        arrays, values = self._call(lib, self.device)
        first_call = time.perf_counter() - start
        correct, error = _compare(values, reference)
        if first_call > 0.2:
            repeat, min_repeat_ms = 1, 0.0
        timer = lib.time_evaluator(self.kernel_name, self.device, number=1, repeat=repeat,
                                   min_repeat_ms=min_repeat_ms)
        result = timer(*arrays)
        gflops = flops / result.min / 1e9 if flops else None
        profile = lib.profile(self.kernel_name, *arrays, run=False) if self.gpu else None
        return Measurement(result.min, gflops, correct, error, build_seconds,
                           tuple(result.results), profile)


def _random_array(rng, buffer) -> np.ndarray:
    shape = []
    for dim in buffer.shape:
        if not isinstance(dim, IntImm):
            raise RuntimeError_(f"run: buffer {buffer.name} has the symbolic dimension "
                                f"{dim}; the explorer runs functions with constant shapes")
        shape.append(dim.value)
    dtype = np.dtype(str(buffer.dtype))
    if dtype.kind == "f":
        return rng.random(shape, dtype=np.float64).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(0, 8, size=shape).astype(dtype)


def _compare(values, reference) -> tuple[bool, float]:
    correct, error = True, 0.0
    for got, want in zip(values, reference):
        if got.size == 0:
            continue
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        error = max(error, float(np.nanmax(diff)))
        scale = float(np.nanmax(np.abs(want))) if want.size else 0.0
        correct &= bool(np.allclose(got, want, rtol=RTOL, atol=ATOL_SCALE * max(scale, 1.0),
                                    equal_nan=True))
    return correct, error
