import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import tir
from mlcbench.ir import TuningError, assert_structural_equal, structural_hash
from mlcbench.meta_schedule import MemoryDatabase, TuningRecord
from mlcbench.meta_schedule.search_strategy import (ReplayFunc, ReplayTrace, SearchStrategy,
                                                    without_decisions)
from mlcbench.meta_schedule.tune_context import TuneContext
from helpers.tuning_testing import matmul_module, stochastic_schedule_mm

TARGET = "llvm --num-cores=2"


def _context(strategy, n=32, seed=0):
    return TuneContext(matmul_module(n), target=TARGET, space_generator=stochastic_schedule_mm,
                       search_strategy=strategy, rand_state=seed)


def _drain(context, max_trials, per_iter, database=None):
    context.pre_tuning(max_trials, per_iter, context.generate_design_space(), database)
    rounds = []
    while (candidates := context.generate_measure_candidates()) is not None:
        rounds.append(candidates)
        context.notify_runner_results(candidates, [None] * len(candidates))
    context.post_tuning()
    return rounds


def _hashes(rounds):
    return [structural_hash(c.sch.mod) for r in rounds for c in r]


def _decisions(sch):
    return [inst.decision for inst in sch.trace.insts if inst.decision is not None]


@pytest.mark.parametrize("kind", ["replay-trace", "replay-func"])
def test_rounds_fill_the_budget_with_distinct_programs(kind):
    rounds = _drain(_context(kind), max_trials=20, per_iter=8)
    assert [len(r) for r in rounds] == [8, 8, 4]
    hashes = _hashes(rounds)
    assert len(set(hashes)) == 20
    for candidate in rounds[0]:
        assert [a.shape for a in candidate.args_info] == [(32, 32)] * 3
        assert len(_decisions(candidate.sch)) == 3          # the three sampled tilings
        replayed = candidate.sch.trace.apply_to_schedule(tir.Schedule(matmul_module(32)))
        assert_structural_equal(replayed.mod, candidate.sch.mod)


def test_a_small_space_ends_the_search_without_repeats():
    # 4 = 1*4 = 2*2 = 4*1 per loop: 3 ** 3 = 27 programs in all
    rounds = _drain(_context(ReplayTrace(max_fail_count=30), n=4), max_trials=100, per_iter=10)
    hashes = _hashes(rounds)
    assert 20 <= len(hashes) == len(set(hashes)) <= 27


def test_programs_in_the_database_are_not_proposed_again():
    database = MemoryDatabase()
    workload = database.commit_workload(matmul_module(4))
    measured = set()
    for seed in range(10):
        sch = stochastic_schedule_mm(tir.Schedule(matmul_module(4), seed=seed))
        database.commit_tuning_record(TuningRecord(sch.trace, workload, [1e-3], TARGET))
        measured.add(structural_hash(sch.mod))
    rounds = _drain(_context(ReplayTrace(max_fail_count=30), n=4), 100, 10, database)
    hashes = _hashes(rounds)
    assert not measured & set(hashes)
    assert 10 <= len(hashes) == len(set(hashes)) <= 27 - len(measured)


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 2 ** 20), st.sampled_from(["replay-trace", "replay-func"]))
def test_the_same_seed_gives_the_same_candidates(seed, kind):
    first = _hashes(_drain(_context(kind, seed=seed), 6, 3))
    assert first == _hashes(_drain(_context(kind, seed=seed), 6, 3))


def test_without_decisions_clears_every_sampling_decision():
    sch = stochastic_schedule_mm(tir.Schedule(matmul_module(32), seed=1))
    cleared = without_decisions(sch.trace)
    assert all(inst.decision is None for inst in cleared.insts)
    assert [i.kind for i in cleared.insts] == [i.kind for i in sch.trace.insts]


def test_protocol_misuse_is_explained():
    with pytest.raises(TuningError, match="has no tune context"):
        ReplayTrace().pre_tuning(8, 4, [])
    context = _context(ReplayFunc())
    with pytest.raises(TuningError, match="call pre_tuning first"):
        context.generate_measure_candidates()
    with pytest.raises(TuningError, match="unknown kind 'annealing'"):
        SearchStrategy.create("annealing")
    with pytest.raises(TuningError, match="max_trials and num_trials_per_iter must be >= 1"):
        context.pre_tuning(0, 4, [])
