"""Tuning logs: one JSON line per measured config, in TVM's record format::

    {"input": ["llvm", "tutorial/matmul", [512, 512, 512, "float32"], {}],
     "config": {"index": 9, "code_hash": null, "entity": [["tile_y", "sp", [-1, 8]], ...]},
     "result": [[0.0012, 0.0011], 0, 0.9, 1764028800.1], "version": 0.2, "tvm_version": "mlcbench"}

Lines are appended with one write and an fsync each (the tuning database's
``append_json_line``), so a crash leaves whole lines; a partial last line is dropped
on loading with a warning::

    for inp, res in autotvm.record.load_from_file("matmul.log"):
        print(inp.config, res.costs)
    autotvm.record.pick_best("matmul.log", "matmul.best.log")
"""
from __future__ import annotations

import json

from ..ir.errors import TuningError
from ..meta_schedule.database import append_json_line, read_json_lines
from .measure import MeasureInput, MeasureResult
from .task.space import ConfigEntity
from .task.task import Task, as_workload

__all__ = ["encode", "decode", "load_from_file", "save_to_file", "pick_best"]

VERSION = 0.2


def as_json(inp: MeasureInput, result: MeasureResult) -> dict:
    task = inp.task
    costs = [c if isinstance(c, (int, float)) else str(c) for c in result.costs]
    return {"input": [str(inp.target), task.name, list(task.args), {}],
            "config": inp.config.to_json_dict(),
            "result": [costs, int(result.error_no), float(result.all_cost),
                       float(result.timestamp)],
            "version": VERSION, "tvm_version": "mlcbench"}


def encode(inp: MeasureInput, result: MeasureResult, protocol: str = "json") -> str:
    """One record as a JSON line (without the newline)."""
    if protocol != "json":
        raise TuningError(f"record.encode: only protocol 'json' exists, found {protocol!r}")
    return json.dumps(as_json(inp, result), separators=(",", ":"))


def from_json(row: dict) -> tuple:
    target, name, args, _ = row["input"]
    task = Task(name, as_workload(args), target)
    config = ConfigEntity.from_json_dict(row["config"])
    costs, error_no, all_cost, timestamp = row["result"]
    return (MeasureInput(target, task, config),
            MeasureResult(tuple(costs), error_no, all_cost, timestamp))


def decode(row, protocol: str = "json") -> tuple:
    """``(MeasureInput, MeasureResult)`` of a line written by :func:`encode`."""
    try:
        return from_json(json.loads(row) if isinstance(row, str) else row)
    except (KeyError, ValueError, TypeError) as err:
        raise TuningError(f"record.decode: not an autotvm record ({err}): {str(row)[:120]}") \
            from None


def load_from_file(filename: str):
    """Every ``(MeasureInput, MeasureResult)`` of a log (a partial last line is dropped)."""
    rows = []
    for number, row in read_json_lines(filename):
        try:
            rows.append(from_json(row))
        except (KeyError, ValueError, TypeError) as err:
            raise TuningError(f"{filename}:{number}: not an autotvm record ({err})") from None
    return iter(rows)


def append(filename: str, inp: MeasureInput, result: MeasureResult) -> None:
    """Append one record as one atomic line."""
    append_json_line(filename, as_json(inp, result))


def save_to_file(filename: str, records) -> None:
    for inp, result in records:
        append(filename, inp, result)


def pick_best(in_file: str, out_file: str) -> None:
    """Write the fastest valid record of each (target, workload) of ``in_file``."""
    best: dict = {}
    for inp, result in load_from_file(in_file):
        if result.error_no != 0:
            continue
        key = (str(inp.target), inp.workload)
        cost = sum(result.costs) / len(result.costs)
        if key not in best or cost < best[key][0]:
            best[key] = (cost, inp, result)
    with open(out_file, "w", encoding="utf-8"):
        pass
    for _, inp, result in best.values():
        append(out_file, inp, result)
