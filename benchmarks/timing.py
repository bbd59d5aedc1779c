"""One timing protocol for every contender in a benchmark: ours, numpy, onnxruntime.

The protocol is :mod:`mlcbench.runtime.timing`'s (the demo, the notebooks and the widgets
use it too); here ``compare`` returns each contender's best time. It runs ``rounds``
rounds. In each round every contender is timed in turn by
:func:`mlcbench.runtime.benchmark.measure`: one warm-up call, then calls back to back
until ``min_repeat_ms`` has passed; the mean seconds per call is the round's figure. A
contender's result is its best round, so all contenders are summarised the same way
(the best mean of a batch of calls, never one lucky call against a batch mean).

Before each contender's batch the benchmark waits until the process's other threads
are idle, at most ``settle_ms`` (:func:`mlcbench.runtime.timing.settle`): OpenBLAS,
onnxruntime and libgomp keep their worker threads spinning for a while after a call
(OpenBLAS about 100 ms), and on a 2-core machine those threads take a core from whoever
runs next (a 1024^3 matmul of ours measured right after numpy's ran at 97 GFLOPS, and at
130 after a pause). The wait lets every contender start on idle cores. After the wait the
contender runs untimed for ``WARM_MS`` (30 ms) before its batch: woken from that pause,
its threads may share one core for several milliseconds
(:data:`mlcbench.runtime.timing.WARM_MS`).

>>> import numpy as np
>>> a = np.ones((64, 64), "float32")
>>> best = compare({"numpy": call(lambda: a @ a)}, rounds=2, min_repeat_ms=1, settle_ms=0)
>>> sorted(best), best["numpy"] > 0
(['numpy'], True)
"""
from __future__ import annotations

import os
import time

from mlcbench.driver.machine_peaks import machine_peaks
from mlcbench.runtime import timing
from mlcbench.runtime.timing import Timer, call, kernel  # noqa: F401  (benchmarks use them)
from mlcbench.target import Target


def compare(contenders: dict[str, Timer], rounds: int = 5, min_repeat_ms: float = 50,
            settle_ms: float = 300) -> dict[str, float]:
    """Best mean seconds per call of each contender over ``rounds`` interleaved rounds."""
    result = timing.compare(contenders, rounds, min_repeat_ms, settle_ms)
    return {name: measured.best for name, measured in result.timings.items()}


def thread_cpu(fn) -> Timer:
    """A timer of the calling thread's CPU seconds per call of ``fn``: on a machine that
    other processes keep busy, time spent descheduled does not count. Only meaningful
    when every contender runs on the calling thread (one thread, ``OMP_NUM_THREADS=1``)."""
    def timer(min_repeat_ms: float) -> float:
        fn()
        calls, start, cpu = 0, time.perf_counter(), time.thread_time()
        while calls == 0 or (time.perf_counter() - start) * 1e3 < min_repeat_ms:
            fn()
            calls += 1
        return (time.thread_time() - cpu) / calls
    return timer


def host_line(threads: int | None = None, kernel_gflops: float | None = None) -> str:
    """The line a benchmark prints above its figures: the host's CPU, vector width and
    cores, the threads the figures use, the load, and the measured FMA peak and memory
    bandwidth (``mlcbench.driver.machine_peaks``: cached per CPU model, measured again
    when the cached figure looks taken under load or ``kernel_gflops`` beats it)."""
    host = Target("llvm")
    used = "" if threads is None else f", {threads} thread" + ("s" if threads != 1 else "")
    return (f"host CPU {host.mcpu}, vector width {host.vector_width_bits} bits "
            f"({host.vector_lanes(32)} float32 lanes), {host.num_cores} cores{used}, "
            f"load {os.getloadavg()[0]:.1f}; "
            f"{machine_peaks(kernel_gflops=kernel_gflops).describe()}")
