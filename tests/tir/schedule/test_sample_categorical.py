from collections import Counter

from mlcbench.tir import Schedule
from helpers.schedule_testing import check_refused, check_trace_roundtrip, make_add_one


add_one = make_add_one(64)


def test_categorical_follows_probabilities_and_replays():
    sch = Schedule(add_one, seed=3)
    counts = Counter(sch.get(sch.sample_categorical([2, 4, 8], [0.0, 0.25, 0.75]))
                     for _ in range(200))
    assert counts[2] == 0 and counts[8] > counts[4] > 0
    (i,) = sch.get_loops("B")
    factor = sch.sample_categorical([2, 4, 8], [0.5, 0.25, 0.25], decision=2)
    sch.split(i, factors=[None, factor])
    assert sch.get(sch.get_loops("B")[1]).extent.value == 8
    assert "decision=2" in str(sch.trace)
    check_trace_roundtrip(add_one, sch)


def test_categorical_refusals():
    sch = Schedule(add_one)
    check_refused(sch, lambda s: s.sample_categorical([1, 2], [1.0]), "2 candidates but 1")
    check_refused(sch, lambda s: s.sample_categorical([1, 2], [0.5, 0.5], decision=5),
                  "not an index")
