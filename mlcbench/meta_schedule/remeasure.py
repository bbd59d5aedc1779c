"""The end of a task: its fastest programs and its default schedule measured again, in
turn, and those figures decide which program the database returns.

Each program is measured once while tuning, and the machine may be busy for one and
idle for the next: a program measured during a quiet spell looks faster than it is, and
the default schedule (measured first, see ``SpaceGenerator.baseline_schedules``) looks
slower than it is when the first round met a busy spell. :func:`remeasure` builds the
``top_k`` fastest programs and the default schedule, runs them in turn for ``rounds``
rounds (a busy spell then touches all of them alike) and commits each again with the
mean of its rounds; the database counts a trace by its latest record, so the fastest
in those rounds is the one ``query_tuning_record`` (and ``compile_tir``,
``compile_relax``) returns::

    record 1  default schedule   20.8 ms   (first round: the host was busy)
    record 9  tiled, packed      17.6 ms
    ...re-measured in turn, 3 rounds...
    record 9  tiled, packed      18.9 ms
    record 1  default schedule   14.2 ms   <- the database's best now

The figures of a pass are committed only once they settle the choice. A record not
measured again can still hold a figure below the pass's winner (taken in a quieter
spell than the pass met); it then joins the programs of a further pass, so the best
record on file is always one measured beside the default in the same rounds. When
:data:`MAX_PASSES` passes do not settle it (the machine stayed busier than while
tuning), the first figures are kept, as with ``remeasure_top_k=0``: figures taken in
other conditions would rank the programs measured again below the others. A program
that fails in every round of the last pass is committed failed all the same; a default
schedule whose record failed (it did not build, or crashed) is not measured again.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings

from .adaptive_timing import FULL, Measurement
from .arg_info import ArgInfo
from .builder import BuilderInput, remove_artifact
from .database import MAX_RUN_SECS, TuningRecord, first_per_trace, latest_per_trace
from .prepacked import measured_module
from .runner import RunnerInput

__all__ = ["remeasure", "default_schedule_records", "MAX_PASSES"]

MAX_PASSES = 3
"""Passes of :func:`remeasure` at most; each adds the records that beat its winner."""


def remeasure(context, workload, builder, runner, database, top_k: int, rounds: int,
              reference_path: str | None = None, clock=None) -> None:
    """Measure the ``top_k`` fastest records of ``workload`` and its default schedule
    again, in turn, ``rounds`` times, and commit each with the mean of its rounds once
    that settles the choice (see the module docstring). ``clock`` (with
    ``lap(phase)``) is told of the build and run phases. Nothing is measured when
    fewer than two programs are there to compare."""
    programs = first_per_trace(database.get_top_k(workload, top_k)
                         + default_schedule_records(context, database, workload))
    if len(programs) < 2:
        return
    for _ in range(MAX_PASSES):
        outcomes = _measure_in_turn(context, builder, runner, programs, rounds,
                                    reference_path, clock)
        faster = _faster_elsewhere(database, workload, programs, outcomes, top_k)
        if not faster:
            break
        # Measure those beside everything measured so far: the set only grows, and the
        # default stays in every pass.
        programs = programs + faster
    else:
        warnings.warn(f"{context.task_name}: {MAX_PASSES} passes of measuring again did "
                      "not settle the fastest program (the machine was busier than while "
                      "tuning?); the first figures are kept", stacklevel=2)
        outcomes = [o for o in outcomes if o.run_secs is None]
    for outcome in outcomes:
        # One append per record: the file never holds half a re-measure of a program.
        database.commit_tuning_record(outcome.as_record(context, workload))


def default_schedule_records(context, database, workload) -> list[TuningRecord]:
    """The valid latest records of the task's default schedule (the space generator's
    ``baseline_schedules``, recognised by their trace); none when it has none or its
    record failed."""
    generator = context.space_generator
    schedules = [] if generator is None else \
        generator.baseline_schedules(context.mod, context.constant_params)
    keys = {json.dumps(sch.trace.as_json()) for sch in schedules}
    return [record for record in latest_per_trace(database.get_records(workload))
            if record.trace_key in keys and record.is_valid]


class _Outcome:
    """A program's figures in one pass: seconds per round, or the error that stopped it
    in every round."""

    def __init__(self, record, run_secs, error, calls):
        self.record, self.run_secs, self.error, self.calls = record, run_secs, error, calls

    @property
    def mean(self) -> float:
        return _mean(self.run_secs)

    def as_record(self, context, workload) -> TuningRecord:
        return TuningRecord(self.record.trace, workload,
                            self.run_secs or [MAX_RUN_SECS], context.target,
                            self.record.args_info, self.error,
                            Measurement(FULL, self.calls) if self.run_secs else None)


def _faster_elsewhere(database, workload, programs, outcomes, top_k) -> list:
    """The ``top_k`` fastest records not measured in this pass whose first figure is
    below the pass's winner."""
    winner = min((o.mean for o in outcomes), default=MAX_RUN_SECS)
    measured = {record.trace_key for record in programs}
    others = [r for r in database.get_top_k(workload, len(programs) + top_k)
              if r.trace_key not in measured]
    return [r for r in others if r.mean_run_secs < winner][:top_k]


def _measure_in_turn(context, builder, runner, records, rounds, reference_path,
                     clock) -> list[_Outcome]:
    """Build ``records`` once and run them in turn ``rounds`` times: an outcome each,
    with the mean of every round that ran; one that ran in none has an error."""
    built = builder.build([BuilderInput(measured_module(context, r.as_schedule().mod),
                                        context.target) for r in records])
    _lap(clock, "build")
    args_info = ArgInfo.from_entry_func(context.mod)
    ready = [(r, b) for r, b in zip(records, built) if b.error_msg is None]
    seconds = {id(r): [] for r, _ in ready}
    calls = {id(r): 0 for r, _ in ready}
    errors, copies = {}, []
    try:
        # Rounds run every program in turn, so a busy spell touches all of them alike.
        for _ in range(rounds):
            # A runner may delete what it ran (cleanup=True): each round runs copies.
            paths = [_copy_artifact(b.artifact_path) for _, b in ready]
            copies += paths
            inputs = [RunnerInput(path, context.target.kind.name, r.args_info or args_info,
                                  reference_path)
                      for (r, _), path in zip(ready, paths)]
            for (record, _), future in zip(ready, runner.run(inputs) if inputs else []):
                result = future.result()
                if result.error_msg is None:
                    seconds[id(record)].append(_mean(result.run_secs))
                    calls[id(record)] += getattr(result.measurement, "calls", 0)
                else:
                    errors[id(record)] = result.error_msg
    finally:
        for path in copies + [b.artifact_path for _, b in ready]:
            remove_artifact(path)
    _lap(clock, "run")
    outcomes = []
    for record, b in zip(records, built):
        run_secs = seconds.get(id(record)) or None
        error = None if run_secs else (b.error_msg or errors.get(id(record)) or "no timing")
        outcomes.append(_Outcome(record, run_secs, error, calls.get(id(record), 0)))
    return outcomes


def _copy_artifact(path: str) -> str:
    """A copy of the built library at ``path`` in a folder of its own (removed whole by
    ``remove_artifact``); ``path`` itself when it names no file (a builder's key)."""
    if not os.path.isfile(path):
        return path
    folder = tempfile.mkdtemp(prefix="mlcbench-build-")
    return shutil.copy(path, os.path.join(folder, os.path.basename(path)))


def _mean(values) -> float:
    return sum(values) / len(values) if values else MAX_RUN_SECS


def _lap(clock, phase: str) -> None:
    if clock is not None:
        clock.lap(phase)
