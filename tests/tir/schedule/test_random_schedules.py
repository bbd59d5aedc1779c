"""Random sequences of legal loop primitives on a matmul stay correct (vs numpy)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from mlcbench.tir import ForKind, IterType, Schedule, ScheduleError
from helpers.schedule_testing import (check_numeric, check_trace_roundtrip, make_matmul,
                                      make_mm_relu)


matmul = make_matmul(12, 6, 8)


def apply_step(sch, step, draw_index):
    """One primitive on loops chosen by ``draw_index``; illegal choices must raise
    ScheduleError and leave the schedule as it was."""
    loops = sch.get_loops("C")
    pick = loops[draw_index % len(loops)]
    before = sch.mod
    try:
        if step == "split":
            sch.split(pick, factors=[None, 1 + draw_index % 5])
        elif step == "fuse" and len(loops) > 1:
            n = draw_index % (len(loops) - 1)
            sch.fuse(loops[n], loops[n + 1])
        elif step == "reorder" and len(loops) > 1:
            a, b = loops[draw_index % len(loops)], loops[(draw_index + 1) % len(loops)]
            if a is not b:
                sch.reorder(b, a) if draw_index % 2 else sch.reorder(a, b)
        elif step in ("parallel", "vectorize", "unroll"):
            getattr(sch, step)(pick)
    except ScheduleError:
        assert sch.mod is before


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["split", "fuse", "reorder", "parallel",
                                           "vectorize", "unroll"]),
                          st.integers(0, 20)), min_size=1, max_size=5))
def test_random_loop_schedules_match_numpy(steps):
    sch = Schedule(matmul)
    for step, index in steps:
        apply_step(sch, step, index)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)
    check_trace_roundtrip(matmul, sch)


mm_relu = make_mm_relu(8, 16, 12)


def try_step(sch, action):
    before, trace = sch.mod, str(sch.trace)
    try:
        action()
    except ScheduleError:
        assert sch.mod is before and str(sch.trace) == trace


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["split", "reorder", "fuse", "parallel"]),
                          st.integers(0, 20)), max_size=3),
       st.booleans(), st.integers(0, 5), st.booleans(), st.integers(0, 5))
def test_random_mm_relu_schedules_match_numpy(steps, cache, at_loop, decompose, red_loop):
    sch = Schedule(mm_relu)
    block_y, block_c = sch.get_block("Y"), sch.get_block("C")
    for step, index in steps:
        loops_before = sch.get_loops(block_y)
        try_step(sch, lambda: apply_step_on(sch, loops_before, step, index))
    if cache:
        try_step(sch, lambda: sch.cache_write(block_y, 0, "local"))
    loops = sch.get_loops(block_y)
    try_step(sch, lambda: sch.reverse_compute_at(block_c, loops[at_loop % len(loops)]))
    if decompose:
        loops = sch.get_loops(block_y)
        try_step(sch, lambda: sch.decompose_reduction(block_y, loops[red_loop % len(loops)]))
    check_numeric(sch.mod["main"], lambda a, b, c: np.maximum(a @ b, 0))
    check_trace_roundtrip(mm_relu, sch)


def apply_step_on(sch, loops, step, index):
    """Like ``apply_step`` for ``loops`` fetched beforehand (so a refusal records nothing)."""
    pick = loops[index % len(loops)]
    if step == "split":
        sch.split(pick, factors=[None, 1 + index % 4])
    elif step == "fuse" and len(loops) > 1:
        n = index % (len(loops) - 1)
        sch.fuse(loops[n], loops[n + 1])
    elif step == "reorder":
        other = loops[(index + 1) % len(loops)]
        if other is not pick:
            sch.reorder(other, pick)
    elif step == "parallel":
        sch.parallel(pick)
