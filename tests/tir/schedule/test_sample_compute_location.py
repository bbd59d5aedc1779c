import pytest
from hypothesis import given, settings, strategies as st

from mlcbench.script import tir as T
from mlcbench.tir import Schedule, ScheduleError
from helpers.schedule_testing import (check_numeric, check_refused, check_trace_roundtrip,
                                      make_row_sum_then_scale, make_scale_add)


two_steps = make_scale_add(32, 16)


@T.prim_func
def two_steps_at_i(A: T.Buffer((32, 16), "float32"), C: T.Buffer((32, 16), "float32")):
    B = T.alloc_buffer((32, 16))
    for i in range(32):
        for ax0 in range(16):
            with T.block("B"):
                vi = T.axis.spatial(32, i)
                vj = T.axis.spatial(16, ax0)
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)


def _reference(a, c):
    return a * 2 + 1


@pytest.mark.parametrize("decision", [0, 1, -1, -2])
def test_every_decision_builds_and_replays(decision):
    sch = Schedule(two_steps)
    block = sch.get_block("B")
    loc = sch.sample_compute_location(block, decision=decision)
    sch.compute_at(block, loc)
    assert f"decision={decision}" in str(sch.trace)
    check_trace_roundtrip(two_steps, sch)
    check_numeric(sch.mod["main"], _reference)


def test_decision_zero_is_the_outer_consumer_loop():
    sch = Schedule(two_steps)
    block = sch.get_block("B")
    sch.compute_at(block, sch.sample_compute_location(block, decision=0))
    from mlcbench.ir import assert_structural_equal
    assert_structural_equal(sch.mod["main"], two_steps_at_i)


def test_root_decision_leaves_the_function_unchanged():
    sch = Schedule(two_steps)
    block = sch.get_block("B")
    sch.compute_at(block, sch.sample_compute_location(block, decision=-1))
    assert sch.mod.script() == Schedule(two_steps).mod.script()


def test_random_decisions_are_recorded_and_change_on_replay():
    sch = Schedule(two_steps, seed=3)
    block = sch.get_block("B")
    sch.compute_at(block, sch.sample_compute_location(block))
    check_trace_roundtrip(two_steps, sch)
    inst = next(i for i in sch.trace.insts if i.kind == "sample_compute_location")
    replayed = sch.trace.with_decision(inst, -2).apply_to_schedule(Schedule(two_steps))
    assert "B = T.alloc_buffer" not in replayed.mod.script()


def test_refuses_decision_out_of_choices():
    sch = Schedule(two_steps)
    block = sch.get_block("C")
    check_refused(sch, lambda s: s.sample_compute_location(block, decision=0),
                  r"decision 0 is not a location of block 'C'; the choices are \[-1\]")


def test_candidates_are_the_loops_around_the_consumers():
    from mlcbench.tir.schedule.facade_location import location_loops
    assert [v.name for v in location_loops(two_steps, "B")] == ["i", "j"]
    assert location_loops(two_steps, "C") == []          # no consumer


row_sums_doubled = make_row_sum_then_scale(8, 16)


def test_a_decision_outside_the_candidates_is_refused_with_the_legal_choices():
    from mlcbench.tir.schedule.facade_location import location_candidates, location_loops
    loops = location_loops(two_steps, "B")
    legal, can_inline = location_candidates(two_steps, "B")
    assert legal == loops and can_inline
    sch = Schedule(two_steps)
    block = sch.get_block("B")
    check_refused(sch, lambda s: s.sample_compute_location(block, decision=2),
                  r"decision 2 is not a location of block 'B'; the choices are \[0, 1, -1, -2\]")


def test_an_illegal_inline_is_refused():
    sch = Schedule(row_sums_doubled)
    block = sch.get_block("B")          # a reduction: compute_inline refuses it
    check_refused(sch, lambda s: s.sample_compute_location(block, decision=-2),
                  r"decision -2 is not a location of block 'B'; the choices are \[0, -1\]")


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1))
def test_a_draw_is_always_a_legal_location(seed):
    # of the candidates 0 (loop i), -1 and -2, inlining the reduction is illegal
    sch = Schedule(row_sums_doubled, seed=seed)
    block = sch.get_block("B")
    loc = sch.sample_compute_location(block)
    assert sch.trace.insts[-1].decision in (0, -1)
    sch.compute_at(block, loc)
    check_numeric(sch.mod["main"], lambda a, c: 2 * a.sum(axis=1))
