import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import tir
from mlcbench.ir import TuningError, assert_structural_equal, structural_hash
from mlcbench.meta_schedule import (JSONDatabase, MemoryDatabase, TensorInfo, TuningRecord,
                                    Workload)
from mlcbench.meta_schedule.database import MAX_RUN_SECS, DatabaseWarning
from helpers.tuning_testing import matmul_module, stochastic_schedule_mm

TARGET = "llvm --num-cores=2"
ARGS = [TensorInfo("float32", [32, 32])] * 3


def _scheduled(mod, seed):
    return stochastic_schedule_mm(tir.Schedule(mod, seed=seed))


def _record(workload, seed, seconds, error=None):
    trace = _scheduled(workload.mod, seed).trace
    run_secs = [MAX_RUN_SECS] if error else [seconds, seconds * 1.1]
    return TuningRecord(trace, workload, run_secs, TARGET, ARGS, error_msg=error)


def test_workload_json_roundtrip_keeps_the_hash():
    workload = Workload(matmul_module(32))
    again = Workload.from_json(json.loads(json.dumps(workload.as_json())))
    assert again.shash == workload.shash == structural_hash(matmul_module(32))
    assert_structural_equal(again.mod, workload.mod)


def test_record_json_roundtrip_replays_to_the_same_module():
    workload = Workload(matmul_module(32))
    record = _record(workload, seed=3, seconds=1e-3)
    again = TuningRecord.from_json(json.loads(json.dumps(record.as_json())), workload)
    assert again.run_secs == record.run_secs and again.target == TARGET
    assert again.args_info == ARGS
    assert_structural_equal(again.as_schedule().mod, _scheduled(workload.mod, 3).mod)


def test_json_database_reopened_sees_every_record(tmp_path):
    db = JSONDatabase(work_dir=tmp_path)
    workload = db.commit_workload(matmul_module(32))
    assert db.commit_workload(matmul_module(32)) is workload      # committed once
    for seed, seconds in enumerate([3e-3, 1e-3, 2e-3]):
        db.commit_tuning_record(_record(workload, seed, seconds))
    db.commit_tuning_record(_record(workload, 7, None, error="segfault"))
    again = JSONDatabase(work_dir=tmp_path)
    assert len(again) == 4 and again.has_workload(matmul_module(32))
    assert not again.has_workload(matmul_module(16))
    top = again.get_top_k(again.commit_workload(matmul_module(32)), 2)
    assert [r.run_secs[0] for r in top] == [1e-3, 2e-3]
    assert [r.error_msg for r in again.get_all_tuning_records()][-1] == "segfault"
    with open(tmp_path / "database_workload.json") as handle:
        assert len(handle.readlines()) == 1


def test_query_returns_the_fastest_schedule(tmp_path):
    db = JSONDatabase(work_dir=tmp_path)
    workload = db.commit_workload(matmul_module(32))
    for seed, seconds in [(1, 5e-3), (2, 1e-3), (3, 9e-3)]:
        db.commit_tuning_record(_record(workload, seed, seconds))
    db = JSONDatabase(work_dir=tmp_path)
    best = db.query_tuning_record(matmul_module(32), target="llvm -num-cores=2")
    assert best.run_secs[0] == 1e-3
    assert_structural_equal(db.query_schedule(matmul_module(32), TARGET).mod,
                            _scheduled(matmul_module(32), 2).mod)
    assert_structural_equal(db.query(matmul_module(32), TARGET, kind="ir_module"),
                            _scheduled(matmul_module(32), 2).mod)
    assert db.query_tuning_record(matmul_module(32), target="llvm --num-cores=1") is None
    assert db.query_schedule(matmul_module(16), TARGET) is None


def test_failed_records_are_kept_but_never_best():
    db = MemoryDatabase()
    workload = db.commit_workload(matmul_module(32))
    db.commit_tuning_record(_record(workload, 1, None, error="timeout"))
    assert len(db) == 1 and not db.get_all_tuning_records()[0].is_valid
    assert db.get_top_k(workload, 5) == [] and db.query_schedule(workload.mod) is None


def test_record_of_an_uncommitted_workload_is_refused():
    db = MemoryDatabase()
    with pytest.raises(TuningError, match="commit_workload first"):
        db.commit_tuning_record(_record(Workload(matmul_module(32)), 1, 1e-3))


def test_partial_last_line_is_skipped_on_open_and_set_aside_on_append(tmp_path):
    db = JSONDatabase(work_dir=tmp_path)
    workload = db.commit_workload(matmul_module(32))
    db.commit_tuning_record(_record(workload, 1, 1e-3))
    path = tmp_path / "database_tuning_record.json"
    line = path.read_bytes()
    with open(path, "ab") as handle:
        handle.write(line[:len(line) // 2])          # what a crash mid-write leaves
    torn = path.read_bytes()
    with pytest.warns(DatabaseWarning, match="partial last line"):
        db = JSONDatabase(work_dir=tmp_path)
    assert len(db) == 1 and path.read_bytes() == torn           # reading changed nothing
    with pytest.warns(DatabaseWarning, match="torn-1"):
        db.commit_tuning_record(_record(db.commit_workload(matmul_module(32)), 2, 2e-3))
    assert (tmp_path / "database_tuning_record.json.torn-1").read_bytes() == torn[len(line):]
    assert path.read_bytes().startswith(line) and len(JSONDatabase(work_dir=tmp_path)) == 2


def test_last_record_without_its_newline_is_kept(tmp_path):
    db = JSONDatabase(work_dir=tmp_path)
    workload = db.commit_workload(matmul_module(32))
    for seed in (1, 2):
        db.commit_tuning_record(_record(workload, seed, seed * 1e-3))
    path = tmp_path / "database_tuning_record.json"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    cut = path.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = JSONDatabase(work_dir=tmp_path)
        assert len(again) == 2 and path.read_bytes() == cut
        again.commit_tuning_record(_record(workload, 3, 3e-3))
    assert path.read_bytes()[:len(cut) + 1] == cut + b"\n"         # the newline came first
    assert [r.run_secs[0] for r in JSONDatabase(work_dir=tmp_path).get_all_tuning_records()
            ] == [1e-3, 2e-3, 3e-3]
    assert not list(tmp_path.glob("*.torn-*"))


def test_broken_line_in_the_middle_names_file_and_line(tmp_path):
    (tmp_path / "database_workload.json").write_text("not json\n[]\n")
    with pytest.raises(TuningError, match=r"database_workload.json:1: expected a JSON value"):
        JSONDatabase(work_dir=tmp_path)


def _record_line(tmp_path, edit):
    """A database of one record whose line ``edit`` changes (a function of the row)."""
    db = JSONDatabase(work_dir=tmp_path)
    db.commit_tuning_record(_record(db.commit_workload(matmul_module(16)), 1, 1e-3))
    path = tmp_path / "database_tuning_record.json"
    row = json.loads(path.read_bytes())
    path.write_bytes(edit(row) if callable(edit) else edit)


def _set(position, value):
    def edit(row):
        row[1][position] = value
        return json.dumps(row).encode() + b"\n"
    return edit


@pytest.mark.parametrize("edit, message", [
    (b'[0,[{"insts":[]},[1e-3],"llvm",null]]\n\xff\xfe\n',
     r":2: expected UTF-8 text, found the byte 0xff at column 1"),
    (_set(1, ["0.001"]), r":1: run_secs: expected a list of numbers or null, found \["),
    (_set(1, 0.001), r":1: run_secs: expected a list of numbers or null, found 0.001"),
    (_set(1, [True]), r":1: run_secs: expected a list of numbers or null, found \[true\]"),
    (_set(2, 7), r":1: target: expected a string or null, found 7"),
    (_set(3, {"a": 1}), r":1: args_info: expected a list or null"),
    (_set(0, ["insts"]), r':1: trace: expected \{"insts".*found \["insts"\]'),
    (_set(0, {"insts": [["split", [], [], 3]]}), r":1: trace instruction: expected \[sch"),
    (_set(0, {"insts": [["__class__", [], [], []]]}), r":1: trace instruction: expected"),
    (_set(0, {"insts": [["_commit", [], [], []]]}), r":1: trace instruction: expected"),
    (_set(0, {"insts": [], "decisions": [[0, 1]]}), r":1: trace decision: expected"),
    (_set(0, {"insts": [["get_block", [], [], ["$"]]]}), r':1: trace: expected \{"insts"'),
    (_set(2, "notatarget -x"), r":1: target: unknown target kind 'notatarget'"),
    (_set(3, [["TENSOR", "float32", "ab"]]), r":1: args_info: expected \[\"TENSOR\""),
    (_set(3, [["TENSOR", 5, [16, 16]]]), r":1: args_info: expected \[\"TENSOR\""),
    (_set(3, [["TENSOR", "float32", [-1]]]), r":1: args_info: expected \[\"TENSOR\""),
    (lambda row: json.dumps(row[1]).encode() + b"\n", r":1: line: expected \[workload index"),
    (lambda row: json.dumps([row[0]]).encode() + b"\n", r":1: line: expected \[workload index"),
    (lambda row: json.dumps(["0", row[1]]).encode() + b"\n", r":1: line: expected"),
    (lambda row: json.dumps([0, row[1][:2]]).encode() + b"\n", r":1: record: expected"),
    (lambda row: json.dumps([3, row[1]]).encode() + b"\n", r":1: record names workload 3"),
])
def test_malformed_record_line_names_file_line_and_field(tmp_path, edit, message):
    _record_line(tmp_path, edit)
    with pytest.raises(TuningError, match=r"database_tuning_record.json" + message):
        JSONDatabase(work_dir=tmp_path)


@pytest.mark.parametrize("line, message", [
    (b'["12", 5]', "TVMScript: expected a string, found 5"),
    (b'["twelve", ""]', 'structural hash: expected an integer, found "twelve"'),
    (b'{"12": ""}', "workload: expected \\[structural hash, TVMScript text\\]"),
])
def test_malformed_workload_line_names_file_line_and_field(tmp_path, line, message):
    (tmp_path / "database_workload.json").write_bytes(line + b"\n")
    with pytest.raises(TuningError, match=r"database_workload.json:1: " + message):
        JSONDatabase(work_dir=tmp_path)


@pytest.mark.parametrize("bad", [0.0, -1e-3, float("nan"), float("inf")])
def test_zero_negative_or_nan_time_is_never_the_best(tmp_path, bad):
    db = JSONDatabase(work_dir=tmp_path)
    workload = db.commit_workload(matmul_module(32))
    db.commit_tuning_record(_record(workload, 1, 5e-3))
    db.commit_tuning_record(TuningRecord(_scheduled(workload.mod, 2).trace, workload,
                                         [bad, 1e-3], TARGET, ARGS))
    for database in (db, JSONDatabase(work_dir=tmp_path)):        # also read back from file
        workload = database.commit_workload(matmul_module(32))
        assert [r.run_secs[0] for r in database.get_top_k(workload, 5)] == [5e-3]
        assert database.query_tuning_record(matmul_module(32), TARGET).run_secs[0] == 5e-3
        assert_structural_equal(database.query(matmul_module(32), TARGET, kind="ir_module"),
                                _scheduled(matmul_module(32), 1).mod)
        assert len(database) == 2


def test_missing_files_refused_when_asked(tmp_path):
    with pytest.raises(TuningError, match="does not exist"):
        JSONDatabase(work_dir=tmp_path, allow_missing=False)
    with pytest.raises(TuningError, match="give work_dir"):
        JSONDatabase(path_workload=str(tmp_path / "w.json"))


def test_module_equality_is_structural_or_refused(tmp_path):
    assert JSONDatabase(work_dir=tmp_path / "a").module_equality == "structural"
    with pytest.raises(TuningError, match="JSONDatabase: module_equality must be 'structural'"
                                          ".*found 'anchor-block'"):
        JSONDatabase(work_dir=tmp_path / "b", module_equality="anchor-block")
    assert not (tmp_path / "b").exists()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(1e-6, 1.0)), min_size=1, max_size=12),
       st.integers(0, 14))
def test_top_k_is_the_k_fastest_valid_records(seconds, k):
    db = MemoryDatabase()
    workload = db.commit_workload(matmul_module(16))
    for n, s in enumerate(seconds):
        db.commit_tuning_record(TuningRecord(_distinct_trace(workload.mod, n), workload,
                                             None if s is None else [s], TARGET, ARGS))
    expected = sorted(s for s in seconds if s is not None)[:k]
    assert [r.run_secs[0] for r in db.get_top_k(workload, k)] == expected


def _distinct_trace(mod, n):
    sch = tir.Schedule(mod)
    sch.annotate(sch.get_block("C"), "test.index", n)
    return sch.trace


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.one_of(st.none(), st.floats(1e-6, 1.0))),
                min_size=1, max_size=12))
def test_a_trace_measured_again_counts_with_its_latest_record(measurements):
    db = MemoryDatabase()
    workload = db.commit_workload(matmul_module(16))
    latest = {}
    for program, s in measurements:
        db.commit_tuning_record(TuningRecord(_distinct_trace(workload.mod, program), workload,
                                             None if s is None else [s], TARGET, ARGS))
        latest[program] = s
    expected = sorted(s for s in latest.values() if s is not None)
    assert [r.run_secs[0] for r in db.get_top_k(workload, 10)] == expected
    best = db.query_tuning_record(workload.mod, TARGET)
    assert (best is None) == (not expected)
    assert best is None or best.run_secs[0] == expected[0]
    assert len(db.get_records(workload)) == len(measurements)      # all kept on file


# the folder whose helpers package the script imports
_TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_WRITER = textwrap.dedent("""
    import sys
    from mlcbench import tir
    from mlcbench.meta_schedule import JSONDatabase, TuningRecord
    sys.path.insert(0, sys.argv[2])
    from helpers.tuning_testing import matmul_module, stochastic_schedule_mm
    db = JSONDatabase(work_dir=sys.argv[1])
    workload = db.commit_workload(matmul_module(32))
    trace = stochastic_schedule_mm(tir.Schedule(workload.mod, seed=0)).trace
    print("ready", flush=True)
    for n in range(100000):
        db.commit_tuning_record(TuningRecord(trace, workload, [n * 1e-6 + 1e-6], "llvm"))
""")


def test_killed_writer_leaves_only_whole_records(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path),
                             _TESTS_DIR], stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"ready"
    path = tmp_path / "database_tuning_record.json"
    while not path.exists() or path.stat().st_size < 20000:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with open(path, "rb") as handle:
        lines = handle.read().split(b"\n")
    db = JSONDatabase(work_dir=tmp_path)
    assert len(db) == len(lines) - 1 > 10       # every complete line; a partial tail dropped
    assert [r.run_secs[0] for r in db.get_all_tuning_records()] == pytest.approx(
        [n * 1e-6 + 1e-6 for n in range(len(db))])
