"""Random sequences of primitives on matmul, mm_relu, conv2d and softmax stay correct.

The generator is the one ``benchmarks/fuzz_schedules.py`` runs at scale: every step
picks a primitive (split, reorder, fuse, parallel, vectorize, unroll, compute_at,
reverse_compute_at, cache_write, cache_read, decompose_reduction, compute_inline, and
compute_at-then-cache / cache-then-compute_at pairs) and random blocks/loops. A refused step must raise ScheduleError and leave ``sch.mod`` and
``sch.trace`` unchanged (asserted inside ``random_step``); the final schedule must build,
match numpy and replay from its JSON trace. Identical scripts share one build.
"""
import importlib.util
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mlcbench.tir import ScheduleError

_PATH = pathlib.Path(__file__).resolve().parents[3] / "benchmarks" / "fuzz_schedules.py"
_SPEC = importlib.util.spec_from_file_location("fuzz_schedules", _PATH)
fuzz = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fuzz)


def _drawer(data):
    return lambda n: data.draw(st.integers(0, n - 1))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_schedules_build_and_match_numpy(data):
    name, sch, _ = fuzz.random_schedule(_drawer(data))
    fuzz.check_schedule(name, sch)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_refusals_leave_schedule_unchanged(data):
    """Steps on one workload until several refusals were seen; each is checked in place."""
    draw = _drawer(data)
    sch = fuzz.Schedule(fuzz.workload(fuzz._pick(draw, sorted(fuzz.WORKLOAD_MAKERS)))[0])
    outcomes = [fuzz.random_step(sch, draw) for _ in range(8)]
    assert set(outcomes) <= {"applied", "refused", "skipped"}


def test_fuzz_cases_are_reproducible_and_clean():
    results = [fuzz.run_case(seed) for seed in (70, 102, 137, 349, 5)]
    assert [r["outcome"] for r in results] == ["ok"] * 5, [r["detail"] for r in results]
    assert fuzz.run_case(102) == results[1]


def test_known_refusals():
    """The rules the fuzzer found: each used to give wrong numbers."""
    sch = fuzz.Schedule(fuzz.workload("conv2d")[0])
    conv, pad = sch.get_block("conv2d_nchw"), sch.get_block("pad_temp")
    loops = sch.get_loops(pad)
    with pytest.raises(ScheduleError, match="outside what the producers under it write"):
        sch.reverse_compute_at(conv, loops[2])
    sch = fuzz.Schedule(fuzz.workload("matmul")[0])
    block = sch.get_block("C")
    sch.decompose_reduction(block, sch.get_loops(block)[0])
    with pytest.raises(ScheduleError, match="has no init"):
        sch.cache_write(sch.get_block("C_update"), 0, "global")
    sch = fuzz.Schedule(fuzz.workload("softmax")[0])
    row, col = sch.get_loops("T_softmax_norm")
    sch.compute_at(sch.get_block("T_softmax_expsum"), col)
    loops = sch.get_loops("T_softmax_expsum")
    with pytest.raises(ScheduleError, match="drives no axis"):
        sch.decompose_reduction(sch.get_block("T_softmax_expsum"), loops[1])
