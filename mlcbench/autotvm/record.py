"""Tuning logs: one JSON line per measured config, in TVM's record format::

    {"input": ["llvm", "tutorial/matmul", [512, 512, 512, "float32"], {}],
     "config": {"index": 9, "code_hash": null, "entity": [["tile_y", "sp", [-1, 8]], ...]},
     "result": [[0.0012, 0.0011], 0, 0.9, 1764028800.1], "version": 0.2, "tvm_version": "mlcbench"}

Logs follow :mod:`mlcbench.meta_schedule.json_lines`: each line is appended with one
write and an fsync under the file's lock, reading never changes the file (a partial last
line left by a crash is skipped with a warning, and set aside as ``<log>.torn-<n>`` by
the next append), and a line that is not a record raises TuningError naming
``log:line``, the field, what was expected and what was found. A record whose costs are
not all positive and finite is never the best one (:func:`mean_cost`)::

    for inp, res in autotvm.record.load_from_file("matmul.log"):
        print(inp.config, res.costs)
    autotvm.record.pick_best("matmul.log", "matmul.best.log")
"""
from __future__ import annotations

import functools
import json
import math

from ..ir.errors import MLCBenchError, TuningError
from ..meta_schedule.json_lines import (append_json_line, expect_field, is_int, is_number,
                                        read_json_lines)
from ..target import Target
from .measure import MeasureInput, MeasureResult
from .task.space import ConfigEntity
from .task.task import Task, as_workload

__all__ = ["encode", "decode", "load_from_file", "save_to_file", "pick_best", "mean_cost"]

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


def from_json(row) -> tuple:
    """``(MeasureInput, MeasureResult)`` of a decoded line; TuningError naming the field,
    what was expected and what was found when ``row`` is not a record."""
    expect_field(isinstance(row, dict) and {"input", "config", "result"} <= set(row),
                 "record", 'an object with "input", "config" and "result"', row)
    inp, config, result = row["input"], row["config"], row["result"]
    expect_field(isinstance(inp, list) and len(inp) == 4 and isinstance(inp[0], str)
                 and isinstance(inp[1], str) and isinstance(inp[2], list), "input",
                 "[target, task name, [arguments], {}]", inp)
    _check_target(inp[0])
    _check_config(config)
    expect_field(isinstance(result, list) and len(result) == 4 and is_int(result[1])
                 and is_number(result[2]) and is_number(result[3]), "result",
                 "[[costs], error_no, all_cost, timestamp]", result)
    costs, error_no, all_cost, timestamp = result
    expect_field(isinstance(costs, list) and costs and (
        error_no != 0 or all(is_number(c) for c in costs)), "result costs",
        "a non-empty list of seconds (numbers)", costs)
    target, name, args, _ = inp
    return (MeasureInput(target, Task(name, as_workload(args), target),
                         ConfigEntity.from_json_dict(config)),
            MeasureResult(tuple(costs), error_no, all_cost, timestamp))


_ENTITY_VALUES = {"sp": (is_int, "a list of integers"), "re": (is_int, "a list of integers"),
                  "an": (lambda v: isinstance(v, str), "a list of strings")}


# A log repeats a handful of targets over thousands of lines: parse each text once.
@functools.lru_cache(maxsize=64)
def _check_target(text: str) -> None:
    try:
        Target(text)
    except MLCBenchError as err:
        raise TuningError(f"input target: {err}") from None


def _check_config(config) -> None:
    expect_field(isinstance(config, dict) and is_int(config.get("index"))
                 and isinstance(config.get("entity"), list), "config",
                 '{"index": integer, "code_hash": ..., "entity": [...]}', config)
    for entity in config["entity"]:
        expect_field(isinstance(entity, list) and len(entity) == 3
                     and isinstance(entity[0], str) and isinstance(entity[1], str),
                     "config entity", "[knob name, kind, value]", entity)
        name, kind, value = entity
        check, expected = _ENTITY_VALUES.get(kind, (None, None))
        if check is not None:
            expect_field(isinstance(value, list) and all(check(v) for v in value),
                         f"config knob {name!r} ({kind})", expected, value)


def mean_cost(result: MeasureResult) -> float | None:
    """The mean of ``result.costs``, or None when the config failed or a cost is not a
    positive finite number (such a record is never the best)."""
    if result.error_no != 0 or not result.costs:
        return None
    if not all(is_number(c) and 0.0 < c < math.inf for c in result.costs):
        return None
    return sum(result.costs) / len(result.costs)


def decode(row, protocol: str = "json") -> tuple:
    """``(MeasureInput, MeasureResult)`` of a line written by :func:`encode`."""
    if protocol != "json":
        raise TuningError(f"record.decode: only protocol 'json' exists, found {protocol!r}")
    if isinstance(row, str):
        try:
            row = json.loads(row)
        except json.JSONDecodeError as err:
            raise TuningError(f"record.decode: expected a JSON line, found {row[:60]!r} "
                              f"({err.msg} at column {err.colno})") from None
    try:
        return from_json(row)
    except TuningError as err:
        raise TuningError(f"record.decode: {err}") from None


def load_from_file(filename: str):
    """Every ``(MeasureInput, MeasureResult)`` of a log; the file is not changed."""
    rows = []
    for number, row in read_json_lines(filename):
        try:
            rows.append(from_json(row))
        except TuningError as err:
            raise TuningError(f"{filename}:{number}: {err}") from None
    # All lines are parsed first, so a bad line raises before any record is used.
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
        cost = mean_cost(result)
        if cost is None:
            continue
        key = (str(inp.target), inp.workload)
        if key not in best or cost < best[key][0]:
            best[key] = (cost, inp, result)
    # Truncate first: append() adds lines, and the output holds only the best records.
    with open(out_file, "w", encoding="utf-8"):
        pass
    for _, inp, result in best.values():
        append(out_file, inp, result)
