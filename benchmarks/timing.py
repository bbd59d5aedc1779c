"""One timing protocol for every contender in a benchmark: ours, numpy, onnxruntime.

``compare`` runs ``rounds`` rounds. In each round every contender is timed in turn by
:func:`mlcbench.runtime.benchmark.measure`: one warm-up call, then calls back to back
until ``min_repeat_ms`` has passed; the mean seconds per call is the round's figure. A
contender's result is its best round, so all contenders are summarised the same way
(the best mean of a batch of calls, never one lucky call against a batch mean).

Before each contender's batch the benchmark pauses for ``settle_ms``: OpenBLAS,
onnxruntime and libgomp keep their worker threads spinning for a while after a call,
and on a 2-core machine those threads take a core from whoever runs next (a 1024^3
matmul of ours measured right after numpy's ran at 97 GFLOPS, and at 130 after a
pause). The pause lets every contender start on idle cores.

>>> import numpy as np
>>> a = np.ones((64, 64), "float32")
>>> best = compare({"numpy": call(lambda: a @ a)}, rounds=2, min_repeat_ms=1, settle_ms=0)
>>> sorted(best), best["numpy"] > 0
(['numpy'], True)
"""
from __future__ import annotations

import time
from typing import Callable

from mlcbench.runtime import cpu
from mlcbench.runtime.benchmark import measure

Timer = Callable[[float], float]
"""Given ``min_repeat_ms``, time one batch of calls and return the mean seconds per call."""


def call(fn: Callable[[], object]) -> Timer:
    """A timer for a Python callable (numpy, an onnxruntime session, a VM function)."""
    return lambda min_repeat_ms: measure(fn, (), number=1, min_repeat_ms=min_repeat_ms).mean


def kernel(lib, name: str, *args) -> Timer:
    """A timer for compiled function ``name`` of ``lib``, through its ``time_evaluator``
    (arguments converted once, the machine code called directly)."""
    def timer(min_repeat_ms: float) -> float:
        evaluator = lib.time_evaluator(name, cpu(), number=1, min_repeat_ms=min_repeat_ms)
        return evaluator(*args).mean
    return timer


def compare(contenders: dict[str, Timer], rounds: int = 5, min_repeat_ms: float = 50,
            settle_ms: float = 100) -> dict[str, float]:
    """Best mean seconds per call of each contender over ``rounds`` interleaved rounds."""
    best = {name: float("inf") for name in contenders}
    for _ in range(rounds):
        for name, timer in contenders.items():
            time.sleep(settle_ms / 1e3)
            best[name] = min(best[name], timer(min_repeat_ms))
    return best
