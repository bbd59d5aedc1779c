"""Timings a reader can trust: interleaved rounds, the best round, a flag when unsteady.

On a shared machine one measurement can be off by 100x (another process holds a core;
OpenBLAS, onnxruntime or libgomp threads still spin after the previous call). Every
figure that mlcbench prints next to a reference goes through :func:`compare`:

- ``rounds`` rounds; in each, every contender is timed in turn (interleaved, so a busy
  spell hurts all of them alike) after a pause that lets the previous contender's worker
  threads go to sleep (:func:`settle`: until the process's other threads are idle, at
  most ``settle_ms``), then runs untimed for ``warm_ms`` (:data:`WARM_MS`), which the
  first calls after such a pause need;
- each round's figure is the mean seconds per call of a batch of at least
  ``min_repeat_ms`` (:func:`mlcbench.runtime.benchmark.measure`);
- a contender's time is its best round; it is flagged *unsteady* when its two best
  rounds differ by more than ``margin`` (20% by default): then even the best round may
  be disturbed, and the printed ratio says so.

Ratios follow one convention everywhere: speed, "N.NNx faster than numpy" (the
reference's time over ours), or "N.NNx slower than numpy" when ours takes longer.

>>> import numpy as np
>>> a = np.ones((32, 32), "float32")
>>> result = compare({"ours": call(lambda: a + a), "numpy": call(lambda: a @ a)},
...                  rounds=2, min_repeat_ms=1, settle_ms=0)
>>> sorted(result.timings), result["ours"].best > 0
(['numpy', 'ours'], True)
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from ..ir.errors import RuntimeError_
from .benchmark import measure
from .device import cpu

Timer = Callable[[float], float]
"""Given ``min_repeat_ms``, time one batch of calls; return the mean seconds per call."""

MARGIN = 0.2


def call(fn: Callable[[], object]) -> Timer:
    """A timer for a Python callable (numpy, an onnxruntime session, a VM function)."""
    # number=1 to start: measure grows it until one batch lasts min_repeat_ms.
    return lambda min_repeat_ms: measure(fn, (), number=1, min_repeat_ms=min_repeat_ms).mean


def kernel(lib, name: str, *args) -> Timer:
    """A timer for compiled function ``name`` of ``lib`` (or a VM), through its
    ``time_evaluator``: arguments converted once, the function called directly."""
    def timer(min_repeat_ms: float) -> float:
        evaluator = lib.time_evaluator(name, cpu(), number=1, min_repeat_ms=min_repeat_ms)
        return evaluator(*args).mean
    return timer


@dataclass(frozen=True)
class Timing:
    """One contender's rounds (mean seconds per call each) and what they say."""

    name: str
    rounds: tuple
    margin: float = MARGIN

    @property
    def best(self) -> float:
        return min(self.rounds)

    @property
    def disagreement(self) -> float:
        """How much slower the second-best round was than the best (0.1: 10%)."""
        ordered = sorted(self.rounds)
        # The best two rounds, not best and worst: one disturbed round says little, two say more.
        return ordered[1] / ordered[0] - 1 if len(ordered) > 1 and ordered[0] > 0 else 0.0

    @property
    def steady(self) -> bool:
        return self.disagreement <= self.margin

    def __str__(self) -> str:
        flag = "" if self.steady else f" (unsteady: best rounds {self.disagreement:.0%} apart)"
        return f"{self.name} {format_seconds(self.best)}{flag}"


@dataclass(frozen=True)
class Comparison:
    """The timings of one :func:`compare` run, by contender name."""

    timings: dict

    def __getitem__(self, name: str) -> Timing:
        return self.timings[name]

    def speedup(self, ours: str, reference: str) -> float:
        """How many times faster ``ours`` ran than ``reference`` (< 1: slower)."""
        return self[reference].best / self[ours].best

    def describe(self, ours: str, reference: str) -> str:
        """'ours 0.061 ms, numpy 0.210 ms: 3.44x faster than numpy', flagged when unsteady."""
        text = (f"{ours} {format_seconds(self[ours].best)}, {reference} "
                f"{format_seconds(self[reference].best)}: "
                f"{speed_ratio(self.speedup(ours, reference), reference)}")
        unsteady = [t.name for t in (self[ours], self[reference]) if not t.steady]
        if unsteady:
            text += (f" [unsteady: {' and '.join(unsteady)} varied by more than "
                     f"{self[ours].margin:.0%} between rounds; the machine was busy, rerun]")
        return text


def speed_ratio(speedup: float, reference: str) -> str:
    """'3.44x faster than numpy' or '2.08x slower than numpy' (never '0.48x faster');
    'as fast as numpy' when the ratio rounds to 1.00 either way."""
    # Compared in the direction that is >= 1, so 0.998x and 1.002x both read as equal.
    if round(max(speedup, 1 / speedup), 2) == 1.0:
        return f"as fast as {reference} (1.00x)"
    if speedup >= 1:
        return f"{speedup:.2f}x faster than {reference}"
    return f"{1 / speedup:.2f}x slower than {reference}"


def format_seconds(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


QUIET_WINDOW_S = 0.005
"""How long :func:`settle` watches the other threads before it calls them idle."""

IDLE_SHARE = 0.1
"""Other threads using less than this share of one core over a window are idle."""

WARM_MS = 30
"""How long a contender runs untimed after :func:`settle`'s pause, before its batch.

After the pause every worker thread sleeps, and the first parallel call wakes them. On
the 2-core Zen 4 host, in a process that had also run onnxruntime sessions, the
scheduler sometimes woke our libgomp worker onto the core of the calling thread and left
both there for 5-15 ms: the digits CNN at batch 64 (three parallel kernels, 40 us a call
when steady) took about 1 ms a call for its first 4-12 calls, and a batch of 1 ms
(``small_models.py``) reported 1.03 ms, 25x its steady time, in some rounds of every
run. A call alone after a pause measured 130-170 us. Timing the batch after this warm
run measures calls back to back, as a loop over inputs makes them.
"""


def settle(max_ms: float) -> float:
    """Wait until the other threads of this process are idle, at most ``max_ms``
    milliseconds; return the seconds waited.

    OpenBLAS keeps its workers spinning for about 100 ms after a call (measured on this
    2-core host: half a core each, in ``sched_yield`` loops), onnxruntime's and
    libgomp's spin too. On 2 cores a spinning worker takes a core from the next
    contender: the digits MLP timed 20 to 50 ms after numpy's batch, with its parallel
    kernel on both cores, ran several times slower than after a long pause. A fixed
    pause is either too short for OpenBLAS or wasted after a contender without threads;
    the CPU time of the process minus the calling thread's says what the others do.
    """
    if max_ms <= 0:
        return 0.0
    start = time.perf_counter()
    deadline = start + max_ms / 1e3
    while True:
        wall, process, own = time.perf_counter(), time.process_time(), time.thread_time()
        time.sleep(QUIET_WINDOW_S)
        # Process CPU time less this thread's: what the other threads did while we slept.
        others = (time.process_time() - process) - (time.thread_time() - own)
        now = time.perf_counter()
        if others < IDLE_SHARE * (now - wall) or now >= deadline:
            return now - start


def compare(contenders: dict, rounds: int = 5, min_repeat_ms: float = 50,
            settle_ms: float = 300, margin: float = MARGIN,
            warm_ms: float = WARM_MS) -> Comparison:
    """Time every contender (name -> :data:`Timer`) in ``rounds`` interleaved rounds."""
    if rounds < 1 or not contenders:
        raise RuntimeError_(f"compare: needs at least one contender and one round, found "
                         f"{len(contenders)} contenders and {rounds} rounds")
    measured = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, timer in contenders.items():
            # Before every contender, so the previous one's spinning workers do not steal its core.
            if settle_ms > 0:
                settle(settle_ms)
                # Untimed: the first milliseconds after the pause (see WARM_MS).
                timer(warm_ms)
            measured[name].append(timer(min_repeat_ms))
    return Comparison({name: Timing(name, tuple(values), margin)
                       for name, values in measured.items()})
