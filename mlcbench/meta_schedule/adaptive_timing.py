"""Measure each tuning candidate only as long as its figure needs.

Most candidates of a search are far slower than the best program found so far; timing
each of them for ``min_repeat_ms`` (and a kernel of a second for ``number`` calls) is
where a tuning trial used to spend most of its time. A candidate is therefore measured
in steps, each deciding from what it has shown (:func:`next_step`):

1. its first call, which also checks its answer, is timed. One that lasted at least
   ``probe_ms`` and is more than ``stop_factor`` times the best so far stops there;
2. otherwise a *probe*: back-to-back calls for ``probe_ms``. A candidate within
   ``contender_factor`` of the best is a contender, the others stop with the probe;
3. a contender, and the first candidate of a workload (nothing to compare with yet),
   gets the full :class:`~.runner.EvaluatorConfig` measurement.

A candidate whose first call alone lasts ``time_limit_factor`` times the best (at least
``min_time_limit_sec``) is stopped there (:func:`time_limit`) and recorded as a timeout:
waiting for it to finish would teach nothing more.

Stopping only ever cuts a candidate that measured slower than the best, and timings on a
busy machine only come out high, so the best program is measured in full. Every result
says how it was measured (:class:`Measurement`, kept in the tuning record)::

    policy = AdaptiveTiming(probe_ms=10, stop_factor=2.0, contender_factor=1.25)
    next_step(FIRST_CALL, seconds=0.030, window_ms=30, best_secs=0.010, policy=policy)
    # -> "stop": one call of 30 ms is 3x the best 10 ms
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from ..ir.errors import TuningError
from .json_lines import expect_field, is_int, is_number

__all__ = ["AdaptiveTiming", "Measurement", "FIRST_CALL", "PROBE", "FULL", "STOP",
           "next_step", "measure_candidate", "time_limit"]

FIRST_CALL, PROBE, FULL, STOP = "first call", "probe", "full", "stop"


@dataclass(frozen=True)
class AdaptiveTiming:
    """When a candidate's measurement may stop early (see the module docstring).

    probe_ms
        Length of the short measurement every candidate but the first gets.
    stop_factor
        A first call of at least ``probe_ms`` this many times slower than the best so
        far ends the measurement.
    contender_factor
        A probe within this factor of the best so far earns the full measurement.
    time_limit_factor, min_time_limit_sec
        A candidate still running after this many times the best so far (and at least
        ``min_time_limit_sec``: loading, the first call and the answer check) is stopped.
    """

    probe_ms: float = 10.0
    stop_factor: float = 2.0
    contender_factor: float = 1.25
    time_limit_factor: float = 20.0
    min_time_limit_sec: float = 2.0

    def __post_init__(self):
        if not self.probe_ms > 0:
            raise TuningError(f"AdaptiveTiming: probe_ms must be > 0, found {self.probe_ms}")
        if not self.stop_factor >= self.contender_factor >= 1.0:
            raise TuningError(
                f"AdaptiveTiming: expected stop_factor >= contender_factor >= 1, found "
                f"stop_factor={self.stop_factor}, contender_factor={self.contender_factor}")
        if not (self.time_limit_factor >= self.stop_factor and self.min_time_limit_sec > 0):
            raise TuningError(
                f"AdaptiveTiming: expected time_limit_factor >= stop_factor and "
                f"min_time_limit_sec > 0, found time_limit_factor={self.time_limit_factor}, "
                f"min_time_limit_sec={self.min_time_limit_sec}")


@dataclass(frozen=True)
class Measurement:
    """How a candidate's time was taken: ``method`` is ``"full"`` (the evaluator
    configuration), ``"probe"`` (back-to-back calls for ``probe_ms``) or ``"first
    call"`` (its one checked call); ``calls`` timed calls in all; ``best_secs`` the best
    time of the workload it was compared with (None: nothing to compare with)."""

    method: str
    calls: int
    best_secs: float | None = None

    def as_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(obj) -> "Measurement":
        """The measurement :meth:`as_json` wrote; TuningError naming what is wrong."""
        best = obj.get("best_secs") if isinstance(obj, dict) else None
        expect_field(isinstance(obj, dict) and obj.get("method") in (FULL, PROBE, FIRST_CALL)
                     and is_int(obj.get("calls")) and obj["calls"] >= 0
                     and (best is None or is_number(best)), "measurement",
                     '{"method": "full" | "probe" | "first call", "calls": int >= 0, '
                     '"best_secs": number or null}', obj)
        return Measurement(obj["method"], obj["calls"], None if best is None else float(best))


def next_step(stage: str, seconds: float, window_ms: float, best_secs: float | None,
              policy: AdaptiveTiming) -> str:
    """What follows a measurement of ``seconds`` per call over ``window_ms``, taken at
    ``stage`` (``FIRST_CALL`` or ``PROBE``): ``STOP`` (its figure stands), ``PROBE`` or
    ``FULL``."""
    if best_secs is None:
        # The first candidate of a workload has nothing to compare with.
        return FULL
    if stage == FIRST_CALL:
        # one short call is too noisy to judge (Python's call overhead, a cold cache)
        clearly_slower = (window_ms >= policy.probe_ms
                          and seconds > policy.stop_factor * best_secs)
        return STOP if clearly_slower else PROBE
    if stage == PROBE:
        # A probe is long enough to trust: near the best earns a full measurement.
        return FULL if seconds <= policy.contender_factor * best_secs else STOP
    raise TuningError(f"next_step: stage must be {FIRST_CALL!r} or {PROBE!r}, found {stage!r}")


def time_limit(best_secs: float | None, policy: AdaptiveTiming,
               timeout_sec: float | None) -> float | None:
    """Seconds a candidate may run (load, first call, check and timing): the runner's
    ``timeout_sec``, shortened to ``time_limit_factor`` times the best known (at least
    ``min_time_limit_sec``)."""
    if best_secs is None:
        return timeout_sec
    limit = max(policy.min_time_limit_sec, policy.time_limit_factor * best_secs)
    return limit if timeout_sec is None else min(limit, timeout_sec)


def measure_candidate(call, check, timing: tuple, best_secs: float | None,
                      policy: AdaptiveTiming, measure, preproc=None, clock=time.perf_counter):
    """Time a candidate in steps: ``call()`` runs it once, ``check()`` (after the first
    call) returns an error message or None, ``measure(number, repeat, min_repeat_ms,
    preproc)`` returns the seconds per call of each repeat (no warm-up: the first call
    was one) and the number of calls it made.

    Returns ``(run_secs, Measurement)``, or ``(None, error message)``.
    """
    number, repeat, min_repeat_ms, _ = timing
    start = clock()
    call()
    first = clock() - start
    error = check()
    if error:
        return None, error
    step = next_step(FIRST_CALL, first, first * 1e3, best_secs, policy)
    if step == STOP:
        return [first], Measurement(FIRST_CALL, 1, best_secs)
    if step == PROBE:
        (probe,), calls = measure(1, 1, policy.probe_ms, None)
        if next_step(PROBE, probe, policy.probe_ms, best_secs, policy) == STOP:
            return [probe], Measurement(PROBE, calls, best_secs)
    run_secs, calls = measure(number, repeat, min_repeat_ms, preproc)
    return list(run_secs), Measurement(FULL, calls, best_secs)
