"""Records: encode/decode round trip, atomic appends, a partial last line skipped by
readers and set aside by the next append, malformed lines named by file:line."""
import json
import warnings

import pytest

from mlcbench import autotvm
from mlcbench.autotvm import record
from mlcbench.autotvm.measure import MeasureInput, MeasureResult
from mlcbench.ir import TuningError
from mlcbench.meta_schedule.json_lines import DatabaseWarning


def measured(task, index, cost, error_no=0):
    return (MeasureInput("llvm", task, task.config_space.get(index)),
            MeasureResult((cost,), error_no, 0.5, 1.0))


def test_encode_decode_round_trip(task):
    inp, res = measured(task, 9, 1e-3)
    line = record.encode(inp, res)
    assert '"tile_y","sp",[-1,' in line and '"version":0.2' in line
    inp2, res2 = record.decode(line)
    assert inp2.workload == task.workload and inp2.config == inp.config
    assert res2 == res


def test_log_to_file_pick_best_and_partial_line(task, tmp_path):
    log, best = str(tmp_path / "mm.log"), str(tmp_path / "best.log")
    callback = autotvm.callback.log_to_file(log)
    pairs = [measured(task, 1, 3e-3), measured(task, 2, 1e-3), measured(task, 3, 0.0, 4)]
    callback(None, [p[0] for p in pairs], [p[1] for p in pairs])
    with open(log, "a") as f:
        f.write('{"input": ["llvm", "test/ma')        # a crash in the middle of a write
    before = open(log, "rb").read()
    with pytest.warns(DatabaseWarning, match="partial last line"):
        assert len(list(record.load_from_file(log))) == 3
    with pytest.warns(DatabaseWarning, match="partial last line"):
        record.pick_best(log, best)
    (only,) = list(record.load_from_file(best))
    assert only[0].config.index == 2
    assert open(log, "rb").read() == before                      # reading changed nothing
    with pytest.warns(DatabaseWarning, match=r"mm.log.torn-1"):
        record.append(log, *measured(task, 4, 2e-3))
    assert (tmp_path / "mm.log.torn-1").read_text() == '{"input": ["llvm", "test/ma'
    assert [inp.config.index for inp, _ in record.load_from_file(log)] == [1, 2, 3, 4]


def test_last_record_without_newline_is_kept_by_apply_history_best(task, tmp_path):
    log = tmp_path / "mm.log"
    record.save_to_file(str(log), [measured(task, 5, 3e-3), measured(task, 6, 1e-3)])
    log.write_bytes(log.read_bytes().rstrip(b"\n"))  # the fastest record lost its newline
    before = log.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        context = autotvm.apply_history_best(str(log))
    assert context.query("llvm", task.workload).index == 6
    assert log.read_bytes() == before


def _log_line(task, tmp_path, change):
    """A log of one record, ``change``d (a function of the decoded row) and written back."""
    row = json.loads(record.encode(*measured(task, 9, 1e-3)))
    change(row)
    log = tmp_path / "odd.log"
    log.write_text(json.dumps(row) + "\n")
    return str(log)


def _set(*path_and_value):
    *path, value = path_and_value

    def change(row):
        for key in path[:-1]:
            row = row[key]
        row[path[-1]] = value
    return change


@pytest.mark.parametrize("change, message", [
    (_set("result", 0, ["0.001"]), r"result costs: expected a non-empty list of seconds"),
    (_set("result", 0, []), r"result costs: expected a non-empty list of seconds"),
    (_set("result", 0, 0.001), r"result costs: expected .*found 0.001"),
    (_set("result", 1, "0"), r"result: expected \[\[costs\], error_no"),
    (_set("result", 3, None), r"result: expected \[\[costs\], error_no"),
    (_set("config", "index", "9"), r"config: expected \{\"index\": integer"),
    (_set("config", "entity", 0, 2, ["-1", "8"]),
     r"config knob 'tile_y' \(sp\): expected a list of integers, found \[\"-1\""),
    (_set("config", "entity", 0, ["tile_y", "sp"]), r"config entity: expected \[knob name"),
    (_set("input", "llvm"), r"input: expected \[target, task name"),
    (_set("input", 0, "notatarget"), r"input target: unknown target kind 'notatarget'"),
    (_set("input", 2, "32,32,32"), r"input: expected \[target, task name"),
    (lambda row: row.pop("result"), r"record: expected an object with"),
])
def test_odd_log_fields_name_file_line_and_field(task, tmp_path, change, message):
    log = _log_line(task, tmp_path, change)
    with pytest.raises(TuningError, match=r"odd.log:1: " + message):
        autotvm.apply_history_best(log)
    with pytest.raises(TuningError, match=r"record.decode: " + message):
        record.decode(open(log).read())


def test_a_log_line_that_is_not_utf8_names_file_and_line(task, tmp_path):
    log = tmp_path / "odd.log"
    record.append(str(log), *measured(task, 9, 1e-3))
    log.write_bytes(log.read_bytes() + b'{"input": "\xe9t\xe9"}\n')
    with pytest.raises(TuningError, match=r"odd.log:2: expected UTF-8 text, found the byte "
                                          r"0xe9 at column 12"):
        list(record.load_from_file(str(log)))


@pytest.mark.parametrize("bad", [0.0, -1e-3, float("nan"), float("inf")])
def test_zero_negative_or_nan_cost_is_never_the_best(task, tmp_path, bad):
    log, best = str(tmp_path / "mm.log"), str(tmp_path / "best.log")
    record.save_to_file(log, [measured(task, 3, 2e-3), measured(task, 4, bad)])
    assert autotvm.apply_history_best(log).query("llvm", task.workload).index == 3
    record.pick_best(log, best)
    assert [inp.config.index for inp, _ in record.load_from_file(best)] == [3]


def test_log_fields_are_data_never_run(task, tmp_path):
    """Python in a log's task name, arguments or knob values stays an inert string; in a
    target it is refused as an unknown target kind."""
    marker = tmp_path / "ran"
    payload = f'__import__("os").system("touch {marker}")'
    inp, res = measured(task, 9, 1e-3)
    row = json.loads(record.encode(inp, res))
    row["input"][1], row["input"][2] = payload, [payload, 32]
    log = tmp_path / "mm.log"
    log.write_text(json.dumps(row) + "\n")
    (loaded, _), = record.load_from_file(str(log))
    assert loaded.task.name == payload and loaded.task.args == (payload, 32)
    with autotvm.apply_history_best(str(log)):
        pass
    row["input"][0] = payload
    log.write_text(json.dumps(row) + "\n")
    with pytest.raises(TuningError, match=r"mm.log:1: input target: unknown target kind"):
        list(record.load_from_file(str(log)))
    assert not marker.exists()
