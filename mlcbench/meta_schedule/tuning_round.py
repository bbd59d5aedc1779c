"""What tuning reports as it goes: one :class:`TuningRound` per round, and a summary table.

A callback is any function of a TuningRound; a dashboard subscribes the same way::

    def log_round(r):
        print(f"{r.task_name} round {r.round_index}: {r.trials} trials, "
              f"best {r.best_gflops:.1f} GFLOPS, rank correlation {r.rank_correlation:.2f}")

    ms.tune_tir(mod, target, work_dir, max_trials_global=64, callbacks=[log_round])
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["MeasuredCandidate", "TuningRound", "summary_table"]


@dataclass(frozen=True)
class MeasuredCandidate:
    """One measured schedule: its trace and seconds per call (one per repeat), or the
    error that stopped it; the cost model's score, GFLOPS when it ran, and the worker
    that measured it (None when it was not run, or the runner does not say)."""

    trace: object = field(repr=False)
    run_secs: list | None
    error_msg: str | None
    predicted: float | None = None
    gflops: float | None = None
    worker: str | None = None


@dataclass(frozen=True)
class TuningRound:
    """The results of one round of one task.

    ``trials`` counts this task's trials so far, ``total_trials`` every task's.
    ``predicted`` and ``measured`` pair the cost model's scores with the measured
    throughputs (1 / seconds) of the round's valid candidates; ``rank_correlation`` is
    their Spearman correlation (nan with fewer than two pairs or no cost model).
    ``seconds`` is the round's wall time, ``phase_seconds`` its split into "search"
    (strategy and cost model choosing candidates), "build", "run" and "update"
    (database, cost-model training). ``model_trained`` is False for rounds whose
    candidates the cost model scored at random (not trained yet), None without a model.
    """

    task_name: str
    task_id: int
    round_index: int
    trials: int
    total_trials: int
    candidates: tuple
    best_run_secs: float | None
    best_gflops: float | None
    predicted: tuple
    measured: tuple
    rank_correlation: float
    seconds: float
    phase_seconds: dict = field(default_factory=dict)
    model_trained: bool | None = None

    def __repr__(self) -> str:
        best = f"{self.best_gflops:.2f} GFLOPS" if self.best_gflops else "none valid"
        return (f"TuningRound({self.task_name!r}, round {self.round_index}, "
                f"{len(self.candidates)} candidates ({self.errors} errors), "
                f"{self.trials} trials, best {best}, rank correlation "
                f"{self.rank_correlation:.2f}, {self.seconds:.2f} s)")

    @property
    def errors(self) -> int:
        return sum(c.error_msg is not None for c in self.candidates)

    @property
    def seconds_per_trial(self) -> float:
        return self.seconds / max(len(self.candidates), 1)


def summary_table(tasks) -> str:
    """A text table of tasks (objects with context, weight, flops, trials, errors,
    best_secs, seconds): one row each, then the weighted total latency."""
    header = ("ID", "Name", "FLOP", "Weight", "Trials", "Errors", "Best (us)", "GFLOPS",
              "Weighted (us)", "s/trial")
    rows, total = [], 0.0
    for index, task in enumerate(tasks):
        valid = task.best_secs < 1e10
        best_us = task.best_secs * 1e6 if valid else math.nan
        total += task.weight * best_us if valid else 0.0
        gflops = task.flops / task.best_secs / 1e9 if valid and task.flops else math.nan
        rows.append((str(index), task.context.task_name, str(task.flops), f"{task.weight:g}",
                     str(task.trials), str(task.errors), _num(best_us), _num(gflops),
                     _num(task.weight * best_us), _num(task.seconds / max(task.trials, 1), 3)))
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    line = "-" * (sum(widths) + 3 * (len(widths) - 1))
    fmt = " | ".join(f"{{:>{w}}}" for w in widths)
    lines = [fmt.format(*header), line] + [fmt.format(*r) for r in rows] + [line]
    lines.append(f"Total weighted latency: {total:.4f} us; trials: "
                 f"{sum(t.trials for t in tasks)}; errors: {sum(t.errors for t in tasks)}")
    phases: dict = {}
    for task in tasks:
        for phase, secs in getattr(task, "phase_seconds", {}).items():
            phases[phase] = phases.get(phase, 0.0) + secs
    trials = max(sum(t.trials for t in tasks), 1)
    if phases:
        lines.append("Seconds per trial: " + ", ".join(
            f"{phase} {secs / trials:.3f}" for phase, secs in phases.items()))
    return "\n".join(lines)


def _num(value: float, digits: int = 4) -> str:
    return "N/A" if value != value else f"{value:.{digits}f}"
