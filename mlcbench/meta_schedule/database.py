"""Tuning records: which schedule (a trace) ran how fast on which workload.

Two files of JSON lines, as in TVM's ``JSONDatabase``::

    database_workload.json        [structural hash, TVMScript of the module]      one per line
    database_tuning_record.json   [workload index, [trace, run_secs, target, args_info]]

Every line is appended with one ``os.write`` of the complete line followed by ``fsync``,
so a crash or Ctrl-C leaves whole lines behind (at worst one partial last line, which
loading reports and drops). A new ``JSONDatabase`` on the same files sees every record:
that is how a killed tuning run resumes::

    db = JSONDatabase(work_dir="./tune_tmp")
    best = db.query_tuning_record(MyModule, target="llvm")     # fastest record, or None
    sch = db.query_schedule(MyModule, target="llvm")           # its trace replayed
"""
from __future__ import annotations

import functools
import json
import os
import warnings

from ..ir.errors import TuningError
from ..ir.module import IRModule
from ..ir.structural import structural_hash
from ..target import Target
from ..tir.function import PrimFunc
from ..tir.schedule import Schedule, Trace
from .arg_info import ArgInfo

__all__ = ["Database", "JSONDatabase", "MemoryDatabase", "TuningRecord", "Workload",
           "DatabaseWarning", "MAX_RUN_SECS"]

MAX_RUN_SECS = 1e10
"""``run_secs`` recorded for a candidate that failed to build or run (as in TVM)."""


class DatabaseWarning(UserWarning):
    """A database file needed repair on loading (a partial last line from a crash)."""


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
        from ..script import from_source
        shash, text = json_obj
        return Workload(as_ir_module(from_source(text)), int(shash))

    def __repr__(self) -> str:
        names = [gv.name_hint for gv in self.mod.get_global_vars()]
        return f"Workload({names}, shash={self.shash})"


class TuningRecord:
    """One measured candidate: ``trace`` applied to ``workload.mod`` ran in ``run_secs``.

    A candidate that failed has ``run_secs == [MAX_RUN_SECS]`` and an ``error_msg``;
    ``is_valid`` tells the two apart.
    """

    def __init__(self, trace: Trace, workload: Workload, run_secs=None, target=None,
                 args_info=None, error_msg: str | None = None):
        self.trace, self.workload = trace, workload
        self.run_secs = None if run_secs is None else [float(s) for s in run_secs]
        self.target = None if target is None else str(target)
        self.args_info = None if args_info is None else list(args_info)
        self.error_msg = error_msg

    @property
    def is_valid(self) -> bool:
        return bool(self.run_secs) and self.error_msg is None and all(
            s < MAX_RUN_SECS for s in self.run_secs)

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
        return out + [self.error_msg] if self.error_msg is not None else out

    @staticmethod
    def from_json(json_obj, workload: Workload) -> "TuningRecord":
        trace, run_secs, target, args = json_obj[:4]
        error_msg = json_obj[4] if len(json_obj) > 4 else None
        args_info = None if args is None else [ArgInfo.from_json(a) for a in args]
        return TuningRecord(Trace.from_json(trace), workload, run_secs, target, args_info,
                            error_msg)

    def as_schedule(self) -> Schedule:
        """A schedule of the workload with this record's trace replayed on it."""
        return self.trace.apply_to_schedule(Schedule(self.workload.mod), remove_postproc=False)

    def __repr__(self) -> str:
        outcome = (f"{self.mean_run_secs * 1e3:.4f} ms" if self.is_valid
                   else f"error: {(self.error_msg or 'no timing').splitlines()[0][:60]}")
        return f"TuningRecord({outcome}, {len(self.trace.insts)} instructions)"


def latest_per_trace(records) -> list[TuningRecord]:
    """``records`` with only the last of those that share a trace: tuning measures a
    program once, and measures its best few again at the end (``remeasure_top_k``); the
    later figure replaces the earlier."""
    last = {}
    for n, record in enumerate(records):
        last[record.trace_key] = n
    keep = set(last.values())
    return [r for n, r in enumerate(records) if n in keep]


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
    ``database_tuning_record.json`` inside it) or the two paths. One process should
    write a pair of files at a time.

    >>> db = JSONDatabase(work_dir=tmp_path)                 # doctest: +SKIP
    >>> db.path_tuning_record.endswith("database_tuning_record.json")   # doctest: +SKIP
    True
    """

    def __init__(self, path_workload: str | None = None, path_tuning_record: str | None = None,
                 work_dir: str | None = None, allow_missing: bool = True,
                 module_equality: str = "structural"):
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
        self._index: dict[int, int] = {}      # shash -> line index in the workload file
        self._workload_lines = 0
        self._load(allow_missing)

    def _load(self, allow_missing: bool) -> None:
        for path in (self.path_workload, self.path_tuning_record):
            if not os.path.exists(path) and not allow_missing:
                raise TuningError(f"JSONDatabase: {path} does not exist (allow_missing=False)")
        by_index = []
        for _, row in read_json_lines(self.path_workload):
            workload = Workload.from_json(row)
            by_index.append(workload)
            self._index.setdefault(workload.shash, len(by_index) - 1)
            self._workload_lines += 1
            super()._add_workload(workload)
        for line_no, row in read_json_lines(self.path_tuning_record):
            index, record = row
            if not 0 <= index < len(by_index):
                raise TuningError(f"{self.path_tuning_record}:{line_no}: record names workload "
                                  f"{index}, but {self.path_workload} has {len(by_index)}")
            self._records.append(TuningRecord.from_json(record, by_index[index]))

    def _add_workload(self, workload: Workload) -> None:
        append_json_line(self.path_workload, workload.as_json())
        self._index[workload.shash] = self._workload_lines
        self._workload_lines += 1
        super()._add_workload(workload)

    def commit_tuning_record(self, record: TuningRecord) -> None:
        if record.workload.shash not in self._index:
            raise TuningError(f"commit_tuning_record: workload {record.workload} was not "
                              "committed to this database; call commit_workload first")
        append_json_line(self.path_tuning_record,
                         [self._index[record.workload.shash], record.as_json()])
        self._records.append(record)


def append_json_line(path: str, value) -> None:
    """Append ``value`` as one JSON line with a single write, then fsync.

    A regular-file ``write`` in append mode is not interleaved with other appends and
    is not cut by a signal halfway in practice; should the kernel still write less
    (disk full), the rest follows and a crash in between leaves a partial last line,
    which :func:`read_json_lines` repairs.
    """
    data = (json.dumps(value, separators=(",", ":")) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, data)
        while written < len(data):
            written += os.write(fd, data[written:])
        os.fsync(fd)
    finally:
        os.close(fd)


def read_json_lines(path: str) -> list[tuple[int, object]]:
    """``(line number, value)`` of every line of ``path`` ([] when it does not exist).

    A last line without its newline is what a crash mid-append leaves: it is reported
    with a DatabaseWarning and cut from the file, so the next append starts a clean
    line. A broken line elsewhere raises TuningError naming ``path:line``.
    """
    if not os.path.exists(path):
        return []
    with open(path, "rb") as handle:
        data = handle.read()
    lines = data.split(b"\n")
    tail = lines.pop()           # b"" when the file ends with a newline
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except json.JSONDecodeError as err:
            raise TuningError(f"{path}:{number}: not a JSON line ({err.msg}); the file was "
                              "changed by something other than a tuning database") from None
    if tail.strip():
        warnings.warn(f"{path}: dropped a partial last line of {len(tail)} bytes (a write cut "
                      f"off by a crash); {len(rows)} complete lines kept", DatabaseWarning,
                      stacklevel=3)
        with open(path, "r+b") as handle:
            handle.truncate(len(data) - len(tail))
    return rows
