"""Timing with TVM's ``time_evaluator`` semantics.

One warm-up call, then ``repeat`` measurements; each measurement runs the function
``number`` times back to back and records the mean seconds per call. When a measurement
lasts less than ``min_repeat_ms``, ``number`` grows (and stays grown for later repeats)
and the measurement is taken again, so very fast kernels are timed over a long enough
window for the clock to be trusted.

>>> result = measure(lambda: None, (), number=100, repeat=3)
>>> len(result.results)
3
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np

from .errors import ArgumentValueError
from .registry import register_func

# A short batch grows number by at least this factor per retry, as TVM's evaluator does.
_GOLDEN_RATIO = 1.618


@dataclass(frozen=True)
class BenchmarkResult:
    """Seconds per call, one entry per repeat, with summary statistics.

    ``print(result)`` gives TVM's summary table in milliseconds.
    """

    results: tuple

    def __post_init__(self):
        object.__setattr__(self, "results", tuple(float(r) for r in self.results))

    @property
    def mean(self) -> float:
        return statistics.fmean(self.results)

    @property
    def median(self) -> float:
        return statistics.median(self.results)

    @property
    def min(self) -> float:
        return min(self.results)

    @property
    def max(self) -> float:
        return max(self.results)

    @property
    def std(self) -> float:
        """Population standard deviation (0 for a single repeat), as numpy computes it."""
        return statistics.pstdev(self.results)

    def __str__(self) -> str:
        heads = ("mean (ms)", "median (ms)", "max (ms)", "min (ms)", "std (ms)")
        values = (self.mean, self.median, self.max, self.min, self.std)
        return ("Execution time summary:\n"
                + " ".join(f"{h:^12}" for h in heads) + "\n"
                + " ".join(f"{v * 1000:^12.4f}" for v in values) + "\n")

    def __repr__(self) -> str:
        return (f"BenchmarkResult(min={self.min}, mean={self.mean}, median={self.median}, "
                f"max={self.max}, std={self.std}, results={self.results})")


def _timed_repeat(func, args: tuple, number: int, min_repeat_ms: float,
                  limit_zero_time_iterations: int) -> tuple[int, float]:
    """Run ``func(*args)`` ``number`` times, growing ``number`` until ``min_repeat_ms`` is met.

    Returns the (possibly grown) number and the seconds the last batch took.
    """
    zero_times = 0
    while True:
        start = time.perf_counter()
        for _ in range(number):
            func(*args)
        seconds = time.perf_counter() - start
        # A clock too coarse to see the batch: give up after enough zero readings.
        zero_times += seconds == 0.0
        if seconds * 1e3 >= min_repeat_ms or zero_times >= limit_zero_time_iterations:
            return number, seconds
        # A zero reading must not divide by zero.
        per_call_ms = max(seconds, 1e-9) * 1e3 / number
        number = int(max(min_repeat_ms / per_call_ms + 1, number * _GOLDEN_RATIO))


def measure(func, args: tuple = (), number: int = 10, repeat: int = 1, min_repeat_ms: float = 0,
            limit_zero_time_iterations: int = 100, cooldown_interval_ms: float = 0,
            repeats_to_cooldown: int = 1, preproc=None, warmup: bool = True) -> BenchmarkResult:
    """Time ``func(*args)`` with ``time_evaluator`` semantics (see the module docstring).

    ``preproc()``, when given, runs before every repeat, outside the timed window (e.g. a
    cache flush). Pass the cheapest callable you have: the loop adds only Python's own
    call overhead, so with a raw ctypes function that is about a microsecond per call.
    """
    if number < 1 or repeat < 1:
        raise ArgumentValueError(
            f"number and repeat must be >= 1, found number={number}, repeat={repeat}")
    if warmup:
        func(*args)
    results = []
    for index in range(repeat):
        if preproc is not None:
            preproc()
        number, seconds = _timed_repeat(func, args, number, min_repeat_ms,
                                        limit_zero_time_iterations)
        results.append(seconds / number)
        if cooldown_interval_ms > 0 and (index + 1) % max(repeats_to_cooldown, 1) == 0:
            time.sleep(cooldown_interval_ms / 1e3)
    return BenchmarkResult(tuple(results))


_FLUSH_BYTES = 64 << 20
_flush_buffer: list = []


@register_func("cache_flush_cpu_non_first_arg", override=True)
def cache_flush_cpu_non_first_arg(*args) -> None:
    """Evict the CPU caches before a repeat (the ``f_preproc`` TVM's tuners use).

    Writes a buffer larger than the last-level cache, so arguments are read cold from
    memory by the next timed call.
    """
    if not _flush_buffer:
        # Kept between calls: allocating 64 MB per repeat would cost more than the flush.
        _flush_buffer.append(np.empty(_FLUSH_BYTES, dtype=np.uint8))
    # Writing every byte pulls the whole buffer through the caches, evicting the arguments.
    _flush_buffer[0].fill(len(args) & 0xFF)
