import pytest

from mlcbench.script import tir as T
from mlcbench.tir import Schedule, ScheduleError
from schedule_testing import check_numeric, check_refused, check_trace_roundtrip


@T.prim_func
def two_steps(A: T.Buffer((32, 16), "float32"), C: T.Buffer((32, 16), "float32")):
    B = T.alloc_buffer((32, 16))
    for i, j in T.grid(32, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(32, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


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
