import pytest

from mlcbench.tir import Schedule, ScheduleError
from helpers.schedule_testing import (check_numeric, check_refused, check_trace_roundtrip,
                                      make_add_one_2d)


add_one = make_add_one_2d(64, 48)


@pytest.mark.parametrize("seed", range(5))
def test_sampled_tiles_multiply_to_extent_and_split(seed):
    sch = Schedule(add_one, seed=seed)
    _, j = sch.get_loops("B")
    factors = sch.sample_perfect_tile(j, n=3, max_innermost_factor=4)
    values = [sch.get(f) for f in factors]
    assert values[0] * values[1] * values[2] == 48 and values[2] <= 4
    sch.split(j, factors=factors)
    check_trace_roundtrip(add_one, sch)
    if seed == 0:
        check_numeric(sch.mod["main"], lambda a, b: a + 1)


def test_decision_is_printed_and_can_be_changed():
    sch = Schedule(add_one, seed=1)
    i, _ = sch.get_loops("B")
    outer, inner = sch.sample_perfect_tile(i, n=2, decision=[16, 4])
    sch.split(i, factors=[outer, inner])
    text = str(sch.trace)
    assert "v3, v4 = sch.sample_perfect_tile(loop=l1, n=2, max_innermost_factor=16, " \
           "decision=[16, 4])" in text
    assert "l5, l6 = sch.split(loop=l1, factors=[v3, v4]" in text
    inst = next(i for i in sch.trace.insts if i.kind == "sample_perfect_tile")
    changed = sch.trace.with_decision(inst, [8, 8])
    other = Schedule(add_one)
    changed.apply_to_schedule(other)
    loops = [other.get(lp).extent.value for lp in other.get_loops("B")]
    assert loops == [8, 8, 48]


def test_bad_decision_is_refused():
    sch = Schedule(add_one)
    i, _ = sch.get_loops("B")
    check_refused(sch, lambda s: s.sample_perfect_tile(i, n=2, decision=[3, 4]),
                  "multiplying to the loop extent 64")
    check_refused(sch, lambda s: s.sample_perfect_tile(i, n=2, max_innermost_factor=4,
                                                       decision=[8, 8]),
                  "exceeds max_innermost_factor=4")


def test_a_decision_provider_chooses_decisions_on_replay():
    sch = Schedule(add_one, seed=1)
    i, j = sch.get_loops("B")
    sch.split(i, factors=sch.sample_perfect_tile(i, n=2, decision=[16, 4]))
    sch.split(j, factors=sch.sample_perfect_tile(j, n=2, decision=[12, 4]))
    other = Schedule(add_one)
    asked = []

    def provide(inst, kwargs, decision):
        extent = other.get(kwargs["loop"]).extent.value     # a handle of the replay
        asked.append((extent, decision))
        return [extent // 8, 8] if extent == 64 else decision

    sch.trace.apply_to_schedule(other, decision_provider=provide)
    assert asked == [(64, [16, 4]), (48, [12, 4])]
    assert [other.get(lp).extent.value for lp in other.get_loops("B")] == [8, 8, 12, 4]
    assert "decision=[8, 8]" in str(other.trace)
    # a refused decision is refused as if given directly
    with pytest.raises(ScheduleError, match="multiplying to the loop extent 64"):
        sch.trace.apply_to_schedule(Schedule(add_one),
                                    decision_provider=lambda inst, kw, d: [3, 4])
