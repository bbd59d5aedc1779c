import numpy as np
import pytest

from mlcbench import meta_schedule as ms, tir
from mlcbench.ir import TuningError, structural_hash
from mlcbench.meta_schedule import MemoryDatabase, TuningRecord
from mlcbench.meta_schedule.search_strategy import EvolutionarySearch, ReplayTrace
from mlcbench.meta_schedule.tune_context import TuneContext
from helpers.tuning_testing import (FakeMeasurer, fake_seconds, loop_extents, matmul_module,
                            stochastic_schedule_mm)

TARGET = "llvm --num-cores=2"


class OracleModel:
    """Knows the fake run time exactly: scores are minus the seconds FakeMeasurer reports."""

    def update(self, context, candidates, results):
        pass

    def predict(self, context, candidates):
        return np.array([-fake_seconds(loop_extents(c.sch.mod)) for c in candidates])


class CountingMutator(ms.Mutator):
    """Changes one tile decision, as MutateTileSize does, and counts its calls."""

    def __init__(self):
        self.calls = 0
        self.inner = ms.mutator.MutateTileSize()

    def apply(self, trace, rand_state=None):
        self.calls += 1
        return self.inner.apply(trace, rand_state)


def _context(strategy, space=stochastic_schedule_mm, n=32, seed=0):
    return TuneContext(matmul_module(n), target=TARGET, space_generator=space,
                       search_strategy=strategy, rand_state=seed)


def _first_round(context, count=8, database=None, cost_model=None):
    context.pre_tuning(count, count, context.generate_design_space(), database, cost_model)
    return context.generate_measure_candidates()


def _seconds(candidates):
    return [fake_seconds(loop_extents(c.sch.mod)) for c in candidates]


def test_the_cost_model_guides_what_is_measured():
    evolved = _first_round(_context(EvolutionarySearch(population_size=32, genetic_num_iters=2,
                                                       eps_greedy=0.0)),
                           cost_model=OracleModel())
    replayed = _first_round(_context(ReplayTrace()))
    assert np.mean(_seconds(evolved)) < np.mean(_seconds(replayed))
    scores = [c.predicted for c in evolved]
    assert scores == pytest.approx([-s for s in _seconds(evolved)])
    assert scores == sorted(scores, reverse=True)          # the best predicted first


def test_mutators_of_the_space_make_new_programs():
    mutator = CountingMutator()
    space = ms.space_generator.ScheduleFn(stochastic_schedule_mm, mutator_probs={mutator: 1.0})
    strategy = EvolutionarySearch(population_size=16, init_min_unmeasured=4,
                                  genetic_num_iters=2, genetic_mutate_prob=1.0)
    candidates = _first_round(_context(strategy, space=space, n=64), count=12)
    assert mutator.calls >= 16
    assert len({structural_hash(c.sch.mod) for c in candidates}) == len(candidates) == 12


def test_rounds_never_repeat_a_program_of_this_run_or_of_the_database():
    database = MemoryDatabase()
    workload = database.commit_workload(matmul_module(16))
    known = set()
    for seed in range(6):
        sch = stochastic_schedule_mm(tir.Schedule(matmul_module(16), seed=seed))
        database.commit_tuning_record(TuningRecord(sch.trace, workload, [1e-3], TARGET))
        known.add(structural_hash(sch.mod))
    context = _context(EvolutionarySearch(population_size=16, init_min_unmeasured=8,
                                          genetic_num_iters=1), n=16)
    context.pre_tuning(40, 8, context.generate_design_space(), database, None)
    hashes = []
    while (candidates := context.generate_measure_candidates()) is not None:
        hashes += [structural_hash(c.sch.mod) for c in candidates]
        context.notify_runner_results(candidates, [None] * len(candidates))
    assert len(hashes) == len(set(hashes)) == 40 and not known & set(hashes)


def test_the_population_starts_from_the_best_records():
    database = MemoryDatabase()
    workload = database.commit_workload(matmul_module(32))
    for seed, seconds in [(1, 5e-3), (2, 1e-3), (3, 9e-3), (4, 2e-3)]:
        sch = stochastic_schedule_mm(tir.Schedule(matmul_module(32), seed=seed))
        database.commit_tuning_record(TuningRecord(sch.trace, workload, [seconds], TARGET))
    strategy = EvolutionarySearch(population_size=10, init_measured_ratio=0.2)
    context = _context(strategy)
    context.pre_tuning(8, 8, context.generate_design_space(), database, None)
    best = [structural_hash(r.as_schedule().mod) for r in database.get_top_k(workload, 2)]
    # the records' programs come back without and then with post-processing: same IR
    assert [ind.key for ind in strategy._best_measured()] == best


def test_eps_greedy_one_measures_random_samples_only():
    class Recording(EvolutionarySearch):
        def _random_samples(self, count):
            self.sampled = super()._random_samples(count)
            return self.sampled

    strategy = Recording(population_size=16, genetic_num_iters=1, eps_greedy=1.0)
    candidates = _first_round(_context(strategy), cost_model=OracleModel())
    assert {structural_hash(c.sch.mod) for c in candidates} <= {i.key for i in strategy.sampled}


def test_tune_tir_runs_the_evolutionary_search_by_default(tmp_path):
    measurer = FakeMeasurer()
    database = ms.tune_tir(matmul_module(32), TARGET, str(tmp_path), 12, num_trials_per_iter=6,
                           space=stochastic_schedule_mm, cost_model="random", seed=0,
                           builder=measurer.builder, runner=measurer.runner)
    assert len(database) == 12 == len(set(measurer.measured))


def test_bad_parameters_are_refused():
    with pytest.raises(TuningError, match="eps_greedy, init_measured_ratio in"):
        EvolutionarySearch(eps_greedy=1.5)


def vectorized_mm(sch):
    """The stochastic matmul schedule with its innermost loop vectorized: the sampled j
    tile decides how many statements the body holds."""
    stochastic_schedule_mm(sch)
    sch.vectorize(sch.get_loops(sch.get_block("C_update", func_name="main"))[-1])
    return sch


def test_programs_over_the_statement_limit_are_never_candidates(monkeypatch):
    from mlcbench.meta_schedule import evolutionary_search
    from mlcbench.meta_schedule.code_size import unrolled_statements

    def sizes():
        strategy = EvolutionarySearch(population_size=16, genetic_num_iters=1)
        return [unrolled_statements(c.sch.mod)
                for c in _first_round(_context(strategy, space=vectorized_mm))]
    assert max(sizes()) > 8
    monkeypatch.setattr(evolutionary_search, "statement_limit", lambda target: 8)
    limited = sizes()
    assert limited and max(limited) <= 8
