"""A trace read from JSON is data: its instructions name schedule primitives and its
index maps are parsed as TVMScript, never run."""
import pytest

from mlcbench import tir
from mlcbench.ir import MLCBenchError, ScheduleError
from mlcbench.tir.schedule.trace import Trace
from helpers.schedule_testing import make_matmul


matmul = make_matmul(16, 64, 8)


def _layout_trace(index_map: str) -> dict:
    return {"insts": [["get_block", [], [["name", "C"], ["func_name", "main"]], ["$b0"]],
                      ["transform_layout", [["block", "$b0"]],
                       [["buffer", ["read", 0]], ["index_map", {"index_map": index_map}]], []]],
            "decisions": []}


def test_index_map_of_a_trace_round_trips_through_json():
    sch = tir.Schedule(matmul)
    sch.transform_layout(sch.get_block("C"), ("read", 0), lambda i, k: (k, i))
    again = tir.Schedule(matmul)
    Trace.from_json(sch.trace.as_json()).apply_to_schedule(again)
    assert again.mod.script() == sch.mod.script()


@pytest.mark.parametrize("index_map, word", [
    ('lambda i, k: (__import__("os").system("touch {marker}"), k)', "__import__"),
    ('lambda i, k: (R.sys.modules["os"].system("touch {marker}"), k)', "'sys'"),
    ("lambda i, k: (i.__class__, k)", "'__class__'"),
    ('open("{marker}", "w")', "expected a lambda"),
])
def test_index_map_payloads_are_refused(tmp_path, index_map, word):
    marker = tmp_path / "ran"
    with pytest.raises(MLCBenchError, match=word):
        Trace.from_json(_layout_trace(index_map.format(marker=marker)))
    assert not marker.exists()


@pytest.mark.parametrize("kind", ["__class__", "_commit", "__init__", "not a name", 7])
def test_instruction_kinds_name_public_primitives_only(kind):
    with pytest.raises(ScheduleError, match="expected the name of a schedule primitive"):
        Trace.from_json({"insts": [[kind, [], [], []]], "decisions": []})


def test_replay_refuses_an_attribute_that_is_not_a_primitive():
    trace = Trace.from_json({"insts": [["nothing_here", [], [], []]], "decisions": []})
    with pytest.raises(ScheduleError, match="'nothing_here'"):
        trace.apply_to_schedule(tir.Schedule(matmul))
