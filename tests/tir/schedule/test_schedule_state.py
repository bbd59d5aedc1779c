"""Copy, seeding, printing and replay of the Schedule itself."""
import json

import pytest

from mlcbench.script import tir as T
from mlcbench.ir import assert_structural_equal
from mlcbench.tir import Schedule, ScheduleError, Trace
from helpers.schedule_testing import make_add_one_2d


add_one = make_add_one_2d(64, 32)


def test_copy_is_independent_and_shares_handles():
    sch = Schedule(add_one)
    i, j = sch.get_loops("B")
    other = sch.copy()
    other.split(j, factors=[None, 8])
    assert len(sch.get_loops("B")) == 2 and len(other.get_loops("B")) == 3
    other.parallel(i)
    assert sch.get(i).kind.value == "serial"


def test_seed_makes_sampling_reproducible():
    def sample(seed):
        sch = Schedule(add_one, seed=seed)
        i, _ = sch.get_loops("B")
        return [sch.get(v) for v in sch.sample_perfect_tile(i, n=3)]
    assert sample(7) == sample(7)
    sch = Schedule(add_one)
    sch.seed(5)
    a = sch.fork_seed()
    sch.seed(5)
    assert sch.fork_seed() == a


def test_trace_prints_as_runnable_python():
    sch = Schedule(add_one)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.fuse(i, j)
    namespace = {}
    exec(str(sch.trace), namespace)
    fresh = Schedule(add_one)
    namespace["apply_trace"](fresh)
    assert_structural_equal(fresh.mod["main"], sch.mod["main"])
    assert str(fresh.trace) == str(sch.trace)


def test_json_is_plain_data():
    sch = Schedule(add_one)
    _, j = sch.get_loops("B")
    sch.split(j, factors=[4, 8])
    text = json.dumps(sch.trace.as_json())
    assert str(Trace.from_json(text)) == str(sch.trace)


def _refused_split_message(**kwargs) -> str:
    sch = Schedule(add_one, **kwargs)
    _, j = sch.get_loops("B")
    with pytest.raises(ScheduleError) as info:
        sch.split(j, factors=[3, 5])
    return str(info.value)


def test_error_render_level_detail_marks_the_loop_in_the_function():
    text = _refused_split_message(error_render_level="detail")
    assert text.startswith("split: argument 'factors': the factors [3, 5] multiply to 15")
    assert "for i, j in T.grid(64, 32):  # <-- here" in text


def test_error_render_level_fast_gives_the_rule_without_the_function():
    text = _refused_split_message(error_render_level="fast")
    assert text.startswith("split: argument 'factors': the factors [3, 5] multiply to 15")
    assert "in the function" not in text and "T.grid" not in text


def test_error_render_level_none_gives_no_message_and_copies_keep_the_level():
    assert "split" not in _refused_split_message(error_render_level="none")
    sch = Schedule(add_one, error_render_level="none").copy()
    with pytest.raises(ScheduleError, match="not rendered") as info:
        sch.get_block("missing")
    assert "missing" not in str(info.value)


def test_unknown_render_level_and_disabled_checks_are_refused():
    with pytest.raises(ScheduleError, match=r"error_render_level must be one of "
                       r"\['detail', 'fast', 'none'\], found 'verbose'"):
        Schedule(add_one, error_render_level="verbose")
    with pytest.raises(ScheduleError, match="enable_check=False is not supported"):
        Schedule(add_one, enable_check=False)
