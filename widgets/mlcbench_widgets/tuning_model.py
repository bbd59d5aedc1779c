"""A tuning run as plain data: records, per-task progress, the curves the dashboard draws.

Two sources describe a run. The ``TuningRound`` objects that tuning hands its
callbacks say which task a candidate belonged to, what the cost model predicted and how
long the round took; the database says which module each trace schedules. The
functions here join the two, so the dashboard (and its tests) read the same rows::

    rows = records_from_database(database, rounds)   # or records_from_rounds(rounds)
    [t.name for t in task_progress(rounds, rows)]    # ['main']
    best_curve(rounds, rows, "main")                 # ([1, 2, 3], [1.9, 1.9, 4.2])
"""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field

from mlcbench import meta_schedule as ms
from mlcbench.ir import MLCBenchError
from mlcbench.tir import PrimFunc, Schedule

__all__ = ["DashboardRecord", "TaskProgress", "WorkerProgress", "best_curve", "best_vs_time", "candidate_points",
           "cost_model_points", "records_from_database", "records_from_rounds",
           "round_label", "task_progress", "worker_progress"]


@dataclass(frozen=True)
class DashboardRecord:
    """One measured candidate of one task.

    ``workload`` is the module the trace schedules; it is None when only tuning rounds
    are known (they carry traces, not modules), and then :meth:`schedule` cannot replay.
    ``round_index`` and ``predicted`` are None for records that no round reported (read
    from a database of an earlier run).
    """
    task: str
    trace: object = field(repr=False)
    run_secs: tuple | None
    gflops: float | None
    error_msg: str | None = None
    round_index: int | None = None
    predicted: float | None = None
    workload: object = field(default=None, repr=False)

    @property
    def is_valid(self) -> bool:
        return (self.error_msg is None and bool(self.run_secs)
                and all(0.0 < s < ms.database.MAX_RUN_SECS for s in self.run_secs))

    @property
    def seconds(self) -> float | None:
        """Mean seconds per call, None when the candidate failed."""
        return sum(self.run_secs) / len(self.run_secs) if self.is_valid else None

    def schedule(self) -> Schedule:
        """The workload with this record's trace replayed (postprocessing included)."""
        if self.workload is None:
            raise MLCBenchError(
                f"the record of task {self.task!r} came from a tuning round, which does not "
                "carry the tuned module; give the dashboard the database "
                "(TuningDashboard(database or work_dir), or dashboard.load(database))")
        return self.trace.apply_to_schedule(Schedule(self.workload), remove_postproc=False)


@dataclass(frozen=True)
class TaskProgress:
    """How far one task got: rounds, trials, failed trials, best time and speed."""
    name: str
    rounds: int
    trials: int
    errors: int
    best_seconds: float | None
    best_gflops: float | None
    seconds: float


def _mean(values) -> float:
    return sum(values) / len(values)


def trace_key(trace) -> str:
    """Traces from a round and from the database compare equal through their JSON."""
    return json.dumps(trace.as_json(), sort_keys=True)


def records_from_rounds(rounds) -> list[DashboardRecord]:
    """Every candidate of every round, in measuring order (no workloads)."""
    return [DashboardRecord(r.task_name, c.trace, _tuple(c.run_secs), c.gflops, c.error_msg,
                            r.round_index, c.predicted)
            for r in rounds for c in r.candidates]


def _tuple(values):
    return None if values is None else tuple(values)


def records_from_database(database, rounds=()) -> list[DashboardRecord]:
    """Every record of ``database`` (oldest first), named and annotated from ``rounds``.

    A workload takes the task name that the rounds give most of its traces (tune_relax
    names tasks after fused kernels), else the name of its PrimFunc.
    """
    reported = {}
    for r in rounds:
        for c in r.candidates:
            reported[trace_key(c.trace)] = (r, c)
    raw = [(rec, reported.get(trace_key(rec.trace))) for rec in
           database.get_all_tuning_records()]
    names, flops = {}, {}
    for shash in {rec.workload.shash for rec, _ in raw}:
        votes = Counter(hit[0].task_name for rec, hit in raw
                        if hit and rec.workload.shash == shash)
        workload = next(rec.workload for rec, _ in raw if rec.workload.shash == shash)
        names[shash] = votes.most_common(1)[0][0] if votes else workload_name(workload.mod)
        flops[shash] = ms.utils.estimate_flops(workload.mod)
    rows = []
    for rec, hit in raw:
        secs = rec.mean_run_secs if rec.is_valid else None
        work = flops[rec.workload.shash]
        rows.append(DashboardRecord(
            names[rec.workload.shash], rec.trace, _tuple(rec.run_secs),
            work / secs / 1e9 if secs and work else None, rec.error_msg,
            hit[0].round_index if hit else None, hit[1].predicted if hit else None,
            rec.workload.mod))
    return rows


def workload_name(mod) -> str:
    """The PrimFunc names of a workload module, joined by '+'."""
    return "+".join(gv.name_hint for gv, f in mod.functions.items() if isinstance(f, PrimFunc))


def task_names(rounds, records) -> list[str]:
    """Tasks in the order they first appear: in the rounds, then in the records."""
    seen = dict.fromkeys(r.task_name for r in rounds)
    seen.update(dict.fromkeys(rec.task for rec in records))
    return list(seen)


def task_progress(rounds, records) -> list[TaskProgress]:
    """One row per task: from its rounds when tuning reported any, else its records."""
    progress = []
    for name in task_names(rounds, records):
        own = [r for r in rounds if r.task_name == name]
        if own:
            progress.append(TaskProgress(
                name, len(own), own[-1].trials, sum(r.errors for r in own),
                own[-1].best_run_secs, own[-1].best_gflops, sum(r.seconds for r in own)))
            continue
        rows = [rec for rec in records if rec.task == name]
        valid = [rec for rec in rows if rec.is_valid]
        best = min(valid, key=lambda rec: rec.seconds, default=None)
        progress.append(TaskProgress(name, 0, len(rows), len(rows) - len(valid),
                                     best.seconds if best else None,
                                     best.gflops if best else None, 0.0))
    return progress


@dataclass(frozen=True)
class WorkerProgress:
    """How many candidates one ``worker`` (a Dask address, or "local") measured, and how
    many of those failed."""
    worker: str
    trials: int
    errors: int


def worker_progress(rounds) -> list[WorkerProgress]:
    """One row per worker that measured a candidate of ``rounds``, in order of first
    appearance (candidates that never ran, failed builds, name no worker)."""
    counts: dict = {}
    for r in rounds:
        for c in r.candidates:
            worker = getattr(c, "worker", None)
            if worker is not None:
                trials, errors = counts.get(worker, (0, 0))
                counts[worker] = (trials + 1, errors + (c.error_msg is not None))
    return [WorkerProgress(w, t, e) for w, (t, e) in counts.items()]


def best_curve(rounds, records, task: str) -> tuple[list, list]:
    """``(trial number, best GFLOPS so far)`` after every candidate of ``task``, from its
    rounds when tuning reported any, else from its records. NaN until one is valid."""
    own = [r for r in rounds if r.task_name == task]
    speeds = ([c.gflops for r in own for c in r.candidates] if own else
              [rec.gflops for rec in records if rec.task == task])
    best, ys = math.nan, []
    for gflops in speeds:
        if gflops is not None and not best >= gflops:
            best = gflops
        ys.append(best)
    return list(range(1, len(ys) + 1)), ys


def best_vs_time(rounds, task: str) -> tuple[list, list]:
    """``(wall seconds since tuning started, best GFLOPS)`` after each round of ``task``;
    the clock runs through every task's rounds, as tuning spends it."""
    clock, xs, ys = 0.0, [], []
    for r in rounds:
        clock += r.seconds
        if r.task_name == task:
            xs.append(clock)
            ys.append(_nan(r.best_gflops))
    return xs, ys


def candidate_points(rounds, records, task: str) -> tuple[list, list]:
    """``(trial number, GFLOPS)`` of every valid candidate of ``task``."""
    own = [r for r in rounds if r.task_name == task]
    if own:
        pairs = [(r.trials - len(r.candidates) + k + 1, c.gflops) for r in own
                 for k, c in enumerate(r.candidates) if c.gflops is not None]
    else:
        pairs = [(k, rec.gflops) for k, rec in
                 enumerate([rec for rec in records if rec.task == task], start=1)
                 if rec.gflops is not None]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def cost_model_points(tuning_round) -> tuple[list, list]:
    """The cost model's scores and the measured speeds (runs per second) of a round's
    valid candidates: what its rank correlation is computed from."""
    return list(tuning_round.predicted), list(tuning_round.measured)


def round_label(index: int, tuning_round) -> str:
    rho = tuning_round.rank_correlation
    corr = "n/a" if rho != rho else f"{rho:+.2f}"
    return (f"{index}: {tuning_round.task_name} round {tuning_round.round_index} "
            f"({len(tuning_round.candidates)} candidates, rank corr. {corr})"
            + UNTRAINED_MARK * untrained(tuning_round))


UNTRAINED_MARK = " [model not trained: random scores]"


def untrained(tuning_round) -> bool:
    """The round's candidates were scored by a cost model with nothing learned yet."""
    return getattr(tuning_round, "model_trained", None) is False


def _nan(value) -> float:
    return math.nan if value is None else float(value)
