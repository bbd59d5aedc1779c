"""Tuning records: which schedule (a trace) ran how fast on which workload.

Two files of JSON lines, as in TVM's ``JSONDatabase``::

    database_workload.json        [structural hash, TVMScript of the module]      one per line
    database_tuning_record.json   [workload index, [trace, run_secs, target, args_info]]

The files follow :mod:`.json_lines`: a read never changes them, every line is appended
with one write and an fsync under the file's lock, and a partial last line left by a
crash is set aside (``<file>.torn-<n>``) by the next append. Several processes may tune
into one ``work_dir`` at once: a new workload is numbered after reading the ones the
others added. A new ``JSONDatabase`` on the same files sees every record: that is how a
killed tuning run resumes::

    db = JSONDatabase(work_dir="./tune_tmp")
    best = db.query_tuning_record(MyModule, target="llvm")     # fastest record, or None
    sch = db.query_schedule(MyModule, target="llvm")           # its trace replayed

A line that is not a record (not UTF-8, not JSON, a field of the wrong type) raises
TuningError naming ``file:line``, the field, what was expected and what was found: the
files are written by tuning runs only, so such a line means something else changed them,
and guessing past it could file records under the wrong workload. A record whose times
are not all positive and finite is kept but never counts as a best one.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os

from ..ir.errors import MLCBenchError, TuningError
from ..ir.module import IRModule
from ..ir.structural import structural_hash
from ..target import Target
from ..tir.function import PrimFunc
from ..tir.schedule import Schedule, Trace
from .adaptive_timing import Measurement
from .arg_info import ArgInfo
from .json_lines import (DatabaseWarning, LockedJSONLines, append_json_line, expect_field,
                         is_int, is_number, read_json_lines, scan_json_lines)

__all__ = ["Database", "JSONDatabase", "MemoryDatabase", "TuningRecord", "Workload",
           "DatabaseWarning", "MAX_RUN_SECS"]

MAX_RUN_SECS = 1e10
"""``run_secs`` recorded for a candidate that failed to build or run (as in TVM)."""


def check_module_equality(module_equality, where: str) -> str:
    """``module_equality`` as TVM spells it; only ``"structural"`` is supported, because
    workloads are filed under their structural hash. TVM's ``"ignore-ndarray"`` and
    ``"anchor-block"`` would share records between modules this database keeps apart,
    so they are refused rather than treated as ``"structural"``."""
    if module_equality != "structural":
        raise TuningError(f"{where}: module_equality must be 'structural' (workloads are "
                          f"identified by their structural hash), found {module_equality!r};"
                          " 'ignore-ndarray' and 'anchor-block' are not supported")
    return module_equality


def as_ir_module(mod) -> IRModule:
    """A PrimFunc becomes ``IRModule({"main": func})``; an IRModule stays as it is."""
    if isinstance(mod, PrimFunc):
        return IRModule({"main": mod})
    if isinstance(mod, IRModule):
        return mod
    raise TuningError(f"expected an IRModule or a PrimFunc, found {type(mod).__name__}")


def target_key(target) -> tuple:
    """What makes two target spellings the same (``"llvm --num-cores=2"`` and
    ``"llvm -num-cores=2"`` are)."""
    target = Target(target) if not isinstance(target, Target) else target
    return (target.kind.name, tuple(sorted(target.attrs.items())))


class Workload:
    """A module being tuned, identified by its structural hash ``shash``."""

    def __init__(self, mod, shash: int | None = None):
        self.mod = as_ir_module(mod)
        self.shash = structural_hash(self.mod) if shash is None else int(shash)

    def as_json(self) -> list:
        return [str(self.shash), self.mod.script()]

    @staticmethod
    def from_json(json_obj) -> "Workload":
        """The workload of a line ``[structural hash, TVMScript]``; TuningError naming
        the field when the line is not one."""
        from ..script import from_source
        shash, text = _workload_fields(json_obj)
        try:
            mod = from_source(text)
        except MLCBenchError as err:
            raise TuningError(f"TVMScript of the workload: {err}") from None
        return Workload(as_ir_module(mod), shash)

    def __repr__(self) -> str:
        names = [gv.name_hint for gv in self.mod.get_global_vars()]
        return f"Workload({names}, shash={self.shash})"


class TuningRecord:
    """One measured candidate: ``trace`` applied to ``workload.mod`` ran in ``run_secs``.

    A candidate that failed has ``run_secs == [MAX_RUN_SECS]`` and an ``error_msg``;
    ``is_valid`` tells the two apart. ``measurement`` says how ``run_secs`` was taken
    (an :class:`~.adaptive_timing.Measurement`: in full, or stopped early as clearly
    slower than the best of its workload; None where the runner did not say).
    """

    def __init__(self, trace: Trace, workload: Workload, run_secs=None, target=None,
                 args_info=None, error_msg: str | None = None,
                 measurement: Measurement | None = None):
        self.trace, self.workload = trace, workload
        self.run_secs = None if run_secs is None else [float(s) for s in run_secs]
        self.target = None if target is None else str(target)
        self.args_info = None if args_info is None else list(args_info)
        self.error_msg = error_msg
        self.measurement = measurement

    @property
    def is_valid(self) -> bool:
        """Measured without error, every time positive and finite: a zero, negative or
        NaN time (a broken timer, an edited file) never makes a record the best."""
        return bool(self.run_secs) and self.error_msg is None and all(
            0.0 < s < MAX_RUN_SECS for s in self.run_secs)

    @functools.cached_property
    def trace_key(self) -> str:
        """The trace as JSON text: equal for records of the same program, also after
        the records were written to a file and read back."""
        return json.dumps(self.trace.as_json())

    @property
    def mean_run_secs(self) -> float:
        return sum(self.run_secs) / len(self.run_secs) if self.is_valid else MAX_RUN_SECS

    def as_json(self) -> list:
        args = None if self.args_info is None else [a.as_json() for a in self.args_info]
        out = [self.trace.as_json(), self.run_secs, self.target, args]
        # Optional fields trail the four fixed ones and are written only when set.
        if self.measurement is not None:
            return out + [self.error_msg, self.measurement.as_json()]
        return out + [self.error_msg] if self.error_msg is not None else out

    @staticmethod
    def from_json(json_obj, workload: Workload) -> "TuningRecord":
        """The record written by :meth:`as_json`; TuningError naming the field, what was
        expected and what was found when ``json_obj`` is not one."""
        expect_field(isinstance(json_obj, list) and len(json_obj) in (4, 5, 6), "record",
                     "[trace, run_secs, target, args_info] (and error_msg, measurement)",
                     json_obj)
        trace, run_secs, target, args = json_obj[:4]
        error_msg = json_obj[4] if len(json_obj) > 4 else None
        measurement = Measurement.from_json(json_obj[5]) if len(json_obj) > 5 else None
        seconds = isinstance(run_secs, list) and all(is_number(s) for s in run_secs)
        expect_field(run_secs is None or seconds, "run_secs", "a list of numbers or null",
                     run_secs)
        expect_field(target is None or isinstance(target, str), "target",
                     "a string or null", target)
        if target is not None:
            _check_target(target)
        expect_field(args is None or isinstance(args, list), "args_info", "a list or null",
                     args)
        expect_field(error_msg is None or isinstance(error_msg, str), "error_msg",
                     "a string", error_msg)
        args_info = None if args is None else _args_info_from_json(args)
        return TuningRecord(_trace_from_json(trace), workload, run_secs, target, args_info,
                            error_msg, measurement)

    def as_schedule(self) -> Schedule:
        """A schedule of the workload with this record's trace replayed on it."""
        return self.trace.apply_to_schedule(Schedule(self.workload.mod), remove_postproc=False)

    def _no_timing(self) -> str:
        return f"invalid times {self.run_secs}" if self.run_secs else "no timing"

    def __repr__(self) -> str:
        outcome = (f"{self.mean_run_secs * 1e3:.4f} ms" if self.is_valid
                   else f"error: {(self.error_msg or self._no_timing()).splitlines()[0][:60]}")
        return f"TuningRecord({outcome}, {len(self.trace.insts)} instructions)"


def _workload_fields(json_obj) -> tuple[int, str]:
    expect_field(isinstance(json_obj, list) and len(json_obj) == 2, "workload",
                 "[structural hash, TVMScript text]", json_obj)
    shash, text = json_obj
    expect_field(is_int(shash) or isinstance(shash, str) and shash.lstrip("-").isdigit(),
                 "structural hash", "an integer", shash)
    expect_field(isinstance(text, str), "TVMScript", "a string", text)
    return int(shash), text


# A file repeats a few targets over thousands of records: parse each text once.
@functools.lru_cache(maxsize=64)
def _check_target(text: str) -> None:
    try:
        Target(text)
    except MLCBenchError as err:
        raise TuningError(f"target: {err}") from None


def _args_info_from_json(args) -> list:
    for arg in args:
        expect_field(isinstance(arg, list) and len(arg) == 3 and arg[0] == "TENSOR"
                     and isinstance(arg[1], str) and isinstance(arg[2], list)
                     and all(is_int(d) and d >= 0 for d in arg[2]), "args_info",
                     '["TENSOR", dtype, [sizes]] per argument', args)
    return [ArgInfo.from_json(a) for a in args]


def _is_primitive(kind) -> bool:
    """A trace names schedule primitives only: a file cannot reach another attribute."""
    return isinstance(kind, str) and not kind.startswith("_") and callable(
        getattr(Schedule, kind, None))


def _trace_from_json(json_obj) -> Trace:
    expected = ('{"insts": [[kind, inputs, attrs, outputs], ...], '
                '"decisions": [[instruction index, decision], ...]}')
    expect_field(isinstance(json_obj, dict) and isinstance(json_obj.get("insts"), list)
                 and isinstance(json_obj.get("decisions", []), list), "trace", expected,
                 json_obj)
    for inst in json_obj["insts"]:
        expect_field(isinstance(inst, list) and len(inst) == 4 and _is_primitive(inst[0])
                     and all(isinstance(part, list) for part in inst[1:]),
                     "trace instruction", "[schedule primitive, inputs, attrs, outputs]", inst)
    for decision in json_obj.get("decisions", []):
        expect_field(isinstance(decision, list) and len(decision) == 2 and is_int(decision[0])
                     and 0 <= decision[0] < len(json_obj["insts"]), "trace decision",
                     "[instruction index, decision]", decision)
    try:
        return Trace.from_json(json_obj)
    except MLCBenchError as err:
        raise TuningError(f"trace: {err}") from None
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
        raise TuningError(f"trace: expected {expected}, found a malformed one "
                          f"({type(err).__name__}: {err})") from None


def latest_per_trace(records) -> list[TuningRecord]:
    """``records`` with only the last of those that share a trace: tuning measures a
    program once, and measures its best few again at the end (``remeasure_top_k``); the
    later figure replaces the earlier."""
    last = {}
    for n, record in enumerate(records):
        # Later lines overwrite earlier ones: the last record of a trace wins.
        last[record.trace_key] = n
    keep = set(last.values())
    return [r for n, r in enumerate(records) if n in keep]


def first_per_trace(records) -> list[TuningRecord]:
    """``records`` with only the first of those that share a trace, in order: the trials
    as they were measured, without the figures ``remeasure_top_k`` appended later."""
    seen, kept = set(), []
    for record in records:
        if record.trace_key not in seen:
            seen.add(record.trace_key)
            kept.append(record)
    return kept


class Database:
    """Base of record stores. Subclasses implement the four storage methods; the queries
    (``get_top_k``, ``query_*``) are shared.

    ``with db:`` makes ``db`` the one :meth:`current` returns (as TVM's databases)."""

    _current: list = []

    # -- storage, implemented by subclasses ------------------------------------------
    def lookup_workload(self, mod) -> Workload | None:
        raise NotImplementedError

    def commit_workload(self, mod) -> Workload:
        raise NotImplementedError

    def commit_tuning_record(self, record: TuningRecord) -> None:
        raise NotImplementedError

    def get_all_tuning_records(self) -> list[TuningRecord]:
        raise NotImplementedError

    # -- shared queries ---------------------------------------------------------------
    def has_workload(self, mod) -> bool:
        return self.lookup_workload(mod) is not None

    def get_records(self, workload: Workload) -> list[TuningRecord]:
        """Every record of ``workload`` (failed ones included), oldest first."""
        return [r for r in self.get_all_tuning_records() if r.workload.shash == workload.shash]

    def get_top_k(self, workload: Workload, top_k: int) -> list[TuningRecord]:
        """The ``top_k`` fastest valid records of ``workload``, fastest first; a trace
        measured again counts with its latest record only."""
        valid = [r for r in latest_per_trace(self.get_records(workload)) if r.is_valid]
        return sorted(valid, key=lambda r: r.mean_run_secs)[:max(top_k, 0)]

    def query_tuning_record(self, mod, target=None, workload_name: str = "main"):
        """The fastest valid record of ``mod`` (for ``target`` when given), or None."""
        workload = self.lookup_workload(mod)
        if workload is None:
            return None
        wanted = None if target is None else target_key(target)
        # A record stored without a target matches any target.
        valid = [r for r in latest_per_trace(self.get_records(workload)) if r.is_valid
                 and (wanted is None or r.target is None or target_key(r.target) == wanted)]
        return min(valid, key=lambda r: r.mean_run_secs, default=None)

    def query_schedule(self, mod, target=None, workload_name: str = "main"):
        """The schedule of the fastest record of ``mod`` (see query_tuning_record), or None."""
        record = self.query_tuning_record(mod, target, workload_name)
        return None if record is None else record.as_schedule()

    def query_ir_module(self, mod, target=None, workload_name: str = "main"):
        """The scheduled module of the fastest record of ``mod``, or None."""
        sch = self.query_schedule(mod, target, workload_name)
        return None if sch is None else sch.mod

    def query(self, mod, target=None, workload_name: str = "main", kind: str = "schedule"):
        """``kind`` is ``"record"``, ``"schedule"`` or ``"ir_module"`` (TVM's spelling)."""
        queries = {"record": self.query_tuning_record, "schedule": self.query_schedule,
                   "ir_module": self.query_ir_module}
        if kind not in queries:
            raise TuningError(f"Database.query: kind must be one of {sorted(queries)}, "
                              f"found {kind!r}")
        return queries[kind](mod, target, workload_name)

    def __len__(self) -> int:
        return len(self.get_all_tuning_records())

    # -- the current database ---------------------------------------------------------
    def __enter__(self):
        Database._current.append(self)
        return self

    def __exit__(self, *exc):
        Database._current.pop()

    @staticmethod
    def current():
        """The database of the innermost ``with db:``, or None."""
        return Database._current[-1] if Database._current else None


class MemoryDatabase(Database):
    """Records kept in memory only (lost when the process ends).

    >>> db = MemoryDatabase()
    >>> len(db)
    0
    """

    def __init__(self):
        self._workloads: dict[int, Workload] = {}
        self._records: list[TuningRecord] = []

    def lookup_workload(self, mod) -> Workload | None:
        # Keyed by structural hash: equal modules share records whatever their names.
        return self._workloads.get(structural_hash(as_ir_module(mod)))

    def commit_workload(self, mod) -> Workload:
        mod = as_ir_module(mod)
        shash = structural_hash(mod)
        if shash not in self._workloads:
            self._add_workload(Workload(mod, shash))
        return self._workloads[shash]

    def _add_workload(self, workload: Workload) -> None:
        self._workloads[workload.shash] = workload

    def commit_tuning_record(self, record: TuningRecord) -> None:
        if record.workload.shash not in self._workloads:
            raise TuningError(f"commit_tuning_record: workload {record.workload} was not "
                              "committed to this database; call commit_workload first")
        self._records.append(record)

    def get_all_tuning_records(self) -> list[TuningRecord]:
        return list(self._records)

    @property
    def workloads(self) -> list[Workload]:
        return list(self._workloads.values())


class JSONDatabase(MemoryDatabase):
    """Records in two JSON-lines files (see the module docstring), loaded on creation.

    Give ``work_dir`` (files ``database_workload.json`` and
    ``database_tuning_record.json`` inside it) or the two paths. Several processes may
    write the same files at once; each sees the records that were on file when it
    opened them, and its own.

    >>> db = JSONDatabase(work_dir=tmp_path)                 # doctest: +SKIP
    >>> db.path_tuning_record.endswith("database_tuning_record.json")   # doctest: +SKIP
    True
    """

    def __init__(self, path_workload: str | None = None, path_tuning_record: str | None = None,
                 work_dir: str | None = None, allow_missing: bool = True,
                 module_equality: str = "structural"):
        self.module_equality = check_module_equality(module_equality, "JSONDatabase")
        super().__init__()
        if work_dir is not None:
            os.makedirs(work_dir, exist_ok=True)
            path_workload = path_workload or os.path.join(work_dir, "database_workload.json")
            path_tuning_record = path_tuning_record or os.path.join(
                work_dir, "database_tuning_record.json")
        if path_workload is None or path_tuning_record is None:
            raise TuningError("JSONDatabase: give work_dir, or both path_workload and "
                              "path_tuning_record")
        self.path_workload = os.fspath(path_workload)
        self.path_tuning_record = os.fspath(path_tuning_record)
        self._index: dict[int, int] = {}      # shash -> first line index in the workload file
        self._workloads_on_file = 0           # lines of the workload file read
        # Read incrementally: other processes may append workloads while this one tunes.
        self._workload_scan = (0, 1)          # (byte offset, line number) read up to
        self._load(allow_missing)

    def _load(self, allow_missing: bool) -> None:
        for path in (self.path_workload, self.path_tuning_record):
            if not os.path.exists(path) and not allow_missing:
                raise TuningError(f"JSONDatabase: {path} does not exist (allow_missing=False)")
        # records before workloads: a workload is on file before any record names it, so
        # the workloads read second cover every record read first, whoever appends now
        record_rows = read_json_lines(self.path_tuning_record)
        by_index = [self._workload_of_line(line, row)
                    for line, row in self._scan_workloads()]
        for workload in by_index:
            super()._add_workload(workload)
        for line, row in record_rows:
            with _blamed(self.path_tuning_record, line):
                expect_field(isinstance(row, list) and len(row) == 2 and is_int(row[0]),
                             "line", "[workload index, record]", row)
                if not 0 <= row[0] < len(by_index):
                    raise TuningError(f"record names workload {row[0]}, but "
                                      f"{self.path_workload} has {len(by_index)}")
                self._records.append(TuningRecord.from_json(row[1], by_index[row[0]]))

    def _workload_of_line(self, line: int, row) -> Workload:
        with _blamed(self.path_workload, line):
            return Workload.from_json(row)

    def _scan_workloads(self) -> list:
        """Rows of the workload file not read before, noted in the index."""
        rows, offset, next_line = scan_json_lines(self.path_workload, *self._workload_scan)
        self._workload_scan = (offset, next_line)
        for line, row in rows:
            with _blamed(self.path_workload, line):
                shash = _workload_fields(row)[0]
            # The first line of a hash is its index, should the file hold it twice.
            self._index.setdefault(shash, self._workloads_on_file)
            self._workloads_on_file += 1
        return rows

    def _add_workload(self, workload: Workload) -> None:
        # under the lock, the workloads other processes added are read first, so the
        # index this one gets is its line in the file whoever else appends
        with LockedJSONLines(self.path_workload) as log:
            self._scan_workloads()
            if workload.shash not in self._index:
                log.append(workload.as_json())
                self._scan_workloads()
        super()._add_workload(workload)

    def commit_tuning_record(self, record: TuningRecord) -> None:
        if record.workload.shash not in self._workloads:
            raise TuningError(f"commit_tuning_record: workload {record.workload} was not "
                              "committed to this database; call commit_workload first")
        append_json_line(self.path_tuning_record,
                         [self._index[record.workload.shash], record.as_json()])
        self._records.append(record)


@contextlib.contextmanager
def _blamed(path: str, line: int):
    """A TuningError raised inside names ``path:line``."""
    try:
        yield
    except TuningError as err:
        raise TuningError(f"{path}:{line}: {err}") from None
