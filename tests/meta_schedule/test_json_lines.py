"""JSON-lines record files: reads never change them, appends repair a torn tail and keep
the cut bytes beside the file."""
import json
import os
import warnings

import pytest
from hypothesis import given, settings, strategies as st

from mlcbench.ir import TuningError
from mlcbench.meta_schedule import json_lines
from mlcbench.meta_schedule.json_lines import (DatabaseWarning, append_json_line,
                                               read_json_lines, scan_json_lines)

rows = st.lists(st.lists(st.one_of(st.integers(), st.text(max_size=8), st.floats(0, 1)),
                         min_size=1, max_size=6), min_size=1, max_size=6)


def _encoded(values):
    return [json.dumps(v, separators=(",", ":")).encode() for v in values]


@settings(max_examples=60, deadline=None)
@given(rows, st.data())
def test_reads_keep_the_file_and_appends_set_the_torn_tail_aside(tmp_path_factory, values,
                                                                 data):
    path = tmp_path_factory.mktemp("log") / "records.json"
    lines = _encoded(values)
    cut = data.draw(st.integers(1, len(lines[-1])), label="bytes of the last line kept")
    path.write_bytes(b"".join(line + b"\n" for line in lines[:-1]) + lines[-1][:cut])
    before = path.read_bytes()
    whole = cut == len(lines[-1])                 # a record lacking only its newline
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [v for _, v in read_json_lines(str(path))] == values[:len(values) - 1 + whole]
    assert path.read_bytes() == before
    assert bool(caught) != whole
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        append_json_line(str(path), ["new"])
    assert [v for _, v in read_json_lines(str(path))] == \
        values[:len(values) - 1 + whole] + [["new"]]
    torn = path.with_name("records.json.torn-1")
    assert torn.exists() != whole
    assert whole or torn.read_bytes() == lines[-1][:cut]


def test_a_torn_tail_longer_than_a_read_chunk_is_set_aside_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(json_lines, "_TAIL_CHUNK", 7)
    path = tmp_path / "records.json"
    path.write_bytes(b'[1,2]\n["' + b"x" * 50)
    with pytest.warns(DatabaseWarning, match=r"records.json.torn-1"):
        append_json_line(str(path), [3])
    assert path.read_bytes() == b"[1,2]\n[3]\n"
    assert (tmp_path / "records.json.torn-1").read_bytes() == b'["' + b"x" * 50
    path.write_bytes(path.read_bytes() + b"[4")
    with pytest.warns(DatabaseWarning, match=r"records.json.torn-2"):
        append_json_line(str(path), [5])
    assert [v for _, v in read_json_lines(str(path))] == [[1, 2], [3], [5]]


def test_a_torn_tail_without_any_newline_is_set_aside(tmp_path):
    path = tmp_path / "records.json"
    path.write_bytes(b'[1,"unfinished')
    with pytest.warns(DatabaseWarning, match="partial last line"):
        assert read_json_lines(str(path)) == []
    with pytest.warns(DatabaseWarning, match="torn-1"):
        append_json_line(str(path), [1])
    assert path.read_bytes() == b"[1]\n"


def test_a_non_utf8_tail_is_torn_and_a_non_utf8_line_is_an_error(tmp_path):
    path = tmp_path / "records.json"
    path.write_bytes(b'[1]\n["\xff')
    with pytest.warns(DatabaseWarning, match=r"records.json:2: skipped a partial last line"):
        assert read_json_lines(str(path)) == [(1, [1])]
    path.write_bytes(b'[1]\n["\xff"]\n[2]\n')
    with pytest.raises(TuningError, match=r"records.json:2: expected UTF-8 text, found the "
                                          r"byte 0xff at column 3"):
        read_json_lines(str(path))


def test_scanning_again_reads_only_what_was_appended(tmp_path):
    path = str(tmp_path / "records.json")
    append_json_line(path, [1])
    rows, offset, next_line = scan_json_lines(path)
    assert rows == [(1, [1])]
    with open(path, "ab") as handle:
        handle.write(b"\n[2]")                    # a blank line, then a record still unended
    rows, offset, next_line = scan_json_lines(path, offset, next_line)
    assert rows == [(3, [2])] and offset == os.path.getsize(path)
    append_json_line(path, [3])                   # completes [2] with its newline first
    assert scan_json_lines(path, offset, next_line)[0] == [(4, [3])]
    assert scan_json_lines(path, offset=os.path.getsize(path)) == (
        [], os.path.getsize(path), 1)


def test_a_missing_file_reads_as_empty(tmp_path):
    assert read_json_lines(str(tmp_path / "absent.json")) == []
