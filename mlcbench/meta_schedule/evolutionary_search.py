"""EvolutionarySearch: mutate good schedules, let the cost model choose what to measure.

Each round, as in TVM (and Ansor):

1. **initial population**: the best measured schedules of the database
   (``init_measured_ratio`` of ``population_size``) plus fresh random samples of the
   design spaces (at least ``init_min_unmeasured``);
2. **evolution**, ``genetic_num_iters`` times: the cost model scores the population; the
   best-scored programs never measured go to a pool; the next population is drawn with
   probability growing with the score, each child mutated (with probability
   ``genetic_mutate_prob``) by a mutator of the space generator, one decision changed;
3. **selection, epsilon-greedy**: the best-scored programs of the pool, except for a
   share ``eps_greedy`` of random samples, so a misled model cannot starve the search.

A program (structural hash of the post-processed module) measured before, in this run
or in the database, is never picked again; nor is one whose unrolled body exceeds the
target's statement limit (:mod:`.code_size`), which the builder would refuse.

>>> strategy = EvolutionarySearch(population_size=64, genetic_num_iters=2)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.errors import MLCBenchError, TuningError
from ..ir.structural import structural_hash
from ..tir.schedule import Schedule, Trace
from .code_size import statement_limit, unrolled_statements
from .search_strategy import MeasureCandidate, SearchStrategy, replay_with_new_decisions

__all__ = ["EvolutionarySearch"]


@dataclass
class _Individual:
    """A program of the population: its post-processed schedule, the trace before
    post-processing (what mutators change) and its structural hash."""

    sch: Schedule
    trace: Trace
    key: int
    score: float = 0.0


class EvolutionarySearch(SearchStrategy):
    """See the module docstring. Defaults are smaller than TVM's (a population of 512,
    4 iterations) because replaying a trace costs milliseconds in Python."""

    def __init__(self, *, population_size: int = 128, init_measured_ratio: float = 0.2,
                 init_min_unmeasured: int = 32, max_fail_count: int = 20,
                 genetic_num_iters: int = 3, genetic_mutate_prob: float = 0.85,
                 genetic_max_fail_count: int = 10, eps_greedy: float = 0.05):
        super().__init__()
        if population_size < 1 or not 0 <= eps_greedy <= 1 or not 0 <= init_measured_ratio <= 1:
            raise TuningError(f"EvolutionarySearch: population_size must be >= 1 and "
                              f"eps_greedy, init_measured_ratio in [0, 1], found "
                              f"{population_size}, {eps_greedy}, {init_measured_ratio}")
        self.population_size = population_size
        self.init_measured_ratio = init_measured_ratio
        self.init_min_unmeasured = init_min_unmeasured
        self.max_fail_count = max_fail_count
        self.genetic_num_iters, self.genetic_mutate_prob = genetic_num_iters, genetic_mutate_prob
        self.genetic_max_fail_count, self.eps_greedy = genetic_max_fail_count, eps_greedy

    def pre_tuning(self, max_trials, num_trials_per_iter, design_spaces, database=None,
                   cost_model=None) -> None:
        super().pre_tuning(max_trials, num_trials_per_iter, design_spaces, database, cost_model)
        # decisions -> program (None: it did not replay): mutations often come back to a
        # program already made, and replaying a trace is the dominant cost of a round
        self._programs: dict[str, _Individual | None] = {}

    def clone(self) -> "EvolutionarySearch":
        return EvolutionarySearch(
            population_size=self.population_size, init_measured_ratio=self.init_measured_ratio,
            init_min_unmeasured=self.init_min_unmeasured, max_fail_count=self.max_fail_count,
            genetic_num_iters=self.genetic_num_iters,
            genetic_mutate_prob=self.genetic_mutate_prob,
            genetic_max_fail_count=self.genetic_max_fail_count, eps_greedy=self.eps_greedy)

    # -- one round ----------------------------------------------------------------------
    def _next_candidates(self, count: int) -> list[MeasureCandidate]:
        if not self._state.design_spaces:
            raise TuningError("EvolutionarySearch: no design space to sample; the space "
                              "generator returned none")
        measured = self._best_measured()
        # Random samples fill the population, but never fewer than init_min_unmeasured.
        randoms = self._random_samples(max(self.population_size - len(measured),
                                           self.init_min_unmeasured))
        population = measured + randoms
        if not population:
            return []
        pool = self._evolve(population, count)
        chosen = self._pick(pool, randoms, count)
        self._state.seen.update(ind.key for ind in chosen)
        return [MeasureCandidate(ind.sch, self._state.args_info, predicted=ind.score)
                for ind in chosen]

    def _best_measured(self) -> list[_Individual]:
        """The database's fastest records of this workload, replayed without their
        post-processing (so mutators see the decisions) and post-processed again."""
        database, mod = self._state.database, self._context.mod
        workload = None if database is None else database.lookup_workload(mod)
        if workload is None:
            return []
        top = database.get_top_k(workload, int(self.population_size * self.init_measured_ratio))
        individuals = []
        for record in top:
            sch = Schedule(mod, seed=self._fork_seed())
            try:
                # Without postprocessing, so the mutators see the sampling decisions.
                record.trace.apply_to_schedule(sch, remove_postproc=True)
            except MLCBenchError:
                continue
            individual = self._known_or_finished(sch)
            if individual is not None:
                individuals.append(individual)
        return individuals

    def _random_samples(self, count: int) -> list[_Individual]:
        """Up to ``count`` distinct programs with freshly sampled decisions, at least
        ``init_min_unmeasured`` of them never measured when the space allows."""
        found: dict[int, _Individual] = {}
        unmeasured = fails = 0
        want_unmeasured = min(self.init_min_unmeasured, count)
        # The allowance grows with count: many draws of a small space repeat.
        while (len(found) < count or unmeasured < want_unmeasured) and \
                fails < self.max_fail_count + count:
            space = self._rng.choice(self._state.design_spaces)
            trace = space.trace if isinstance(space, Schedule) else space
            sch = replay_with_new_decisions(self._context.mod, trace, self._fork_seed(),
                                            self._context.space_generator)
            individual = None if sch is None else self._known_or_finished(sch)
            if individual is None or individual.key in found:
                fails += 1
                continue
            found[individual.key] = individual
            unmeasured += individual.key not in self._state.seen
        return list(found.values())

    def _known_or_finished(self, sch: Schedule) -> _Individual | None:
        """The program of ``sch`` made before with the same decisions, else ``sch``
        post-processed (and remembered)."""
        key = _decisions_key(sch.trace)
        if key not in self._programs:
            self._programs[key] = self._finish(sch)
        return self._programs[key]

    def _finish(self, sch: Schedule) -> _Individual | None:
        """Post-process ``sch`` (whose trace has no post-processing yet)."""
        trace = sch.trace
        if self._postprocess(sch) is None or self._too_large(sch.mod):
            return None
        return _Individual(sch, trace, structural_hash(sch.mod))

    def _too_large(self, mod) -> bool:
        """Over the builder's statement limit: a wasted trial, so never a candidate."""
        target = self._context.target
        return target is not None and unrolled_statements(mod) > statement_limit(target)

    # -- evolution ----------------------------------------------------------------------
    def _evolve(self, population: list[_Individual], count: int) -> list[_Individual]:
        """The best-scored never-measured programs seen over all generations, best first."""
        pool: dict[int, _Individual] = {}
        for generation in range(self.genetic_num_iters + 1):
            self._score(population)
            for individual in population:
                if individual.key not in self._state.seen:
                    pool[individual.key] = individual
            if generation < self.genetic_num_iters:
                population = self._next_generation(population)
        ranked = sorted(pool.values(), key=lambda ind: ind.score, reverse=True)
        return ranked[:max(count, 1) * 2]

    def _score(self, population: list[_Individual]) -> None:
        model = self._state.cost_model
        if model is None:
            # No model yet: random scores make the evolution a random walk.
            scores = [self._rng.random() for _ in population]
        else:
            candidates = [MeasureCandidate(ind.sch, self._state.args_info) for ind in population]
            scores = np.asarray(model.predict(self._context, candidates), dtype="float64")
        for individual, score in zip(population, scores):
            individual.score = float(score)

    def _next_generation(self, population: list[_Individual]) -> list[_Individual]:
        scores = np.array([ind.score for ind in population], dtype="float64")
        # Shifted to be positive; the epsilon keeps the worst individual selectable.
        weights = scores - scores.min() + 1e-6 if len(scores) else scores
        mutators = self._mutators()
        children, keys = [], set()
        for _ in range(len(population)):
            child = None
            for _ in range(self.genetic_max_fail_count):
                parent = self._rng.choices(population, weights=weights.tolist())[0]
                if mutators and self._rng.random() < self.genetic_mutate_prob:
                    child = self._mutate(parent, mutators)
                else:
                    child = parent
                # A generation holds distinct programs: duplicates waste the model's scoring.
                if child is not None and child.key not in keys:
                    break
                child = None
            if child is not None:
                keys.add(child.key)
                children.append(child)
        # A generation that produced nothing keeps the previous one.
        return children or population

    def _mutators(self) -> list[tuple]:
        probs = getattr(self._context.space_generator, "mutator_probs", None)
        if not isinstance(probs, dict):
            return []
        return [(m, float(p)) for m, p in probs.items() if p > 0 and hasattr(m, "apply")]

    def _mutate(self, parent: _Individual, mutators) -> _Individual | None:
        mutator = self._rng.choices([m for m, _ in mutators], weights=[p for _, p in mutators])[0]
        try:
            trace = mutator.apply(parent.trace, self._fork_seed())
        except (MLCBenchError, ValueError):
            return None
        # A mutator with nothing to change (no decision of its kind) returns None.
        if trace is None:
            return None
        key = _decisions_key(trace)
        if key not in self._programs:
            # Replaying costs most: a mutation landing on known decisions reuses the program.
            sch = Schedule(self._context.mod, seed=self._fork_seed())
            try:
                trace.apply_to_schedule(sch, remove_postproc=True)
            except (MLCBenchError, ValueError):
                sch = None
            self._programs[key] = None if sch is None else self._finish(sch)
        return self._programs[key]

    # -- selection ----------------------------------------------------------------------
    def _pick(self, pool: list[_Individual], randoms: list[_Individual],
              count: int) -> list[_Individual]:
        """``count`` never-measured programs: mostly the best of ``pool``, a share
        ``eps_greedy`` of ``randoms``."""
        seen = self._state.seen
        # The random share, so a misled model cannot keep the search in one corner.
        n_random = int(round(count * self.eps_greedy))
        chosen = {ind.key: ind for ind in pool[:count - n_random]}
        spare = [ind for ind in randoms if ind.key not in seen and ind.key not in chosen]
        # Shuffled, so the random share is not biased toward the first samples drawn.
        self._rng.shuffle(spare)
        for individual in spare + pool[count - n_random:]:
            if len(chosen) >= count:
                break
            if individual.key not in seen:
                chosen.setdefault(individual.key, individual)
        return list(chosen.values())


def _decisions_key(trace: Trace) -> str:
    """What a replay of ``trace`` depends on: its instruction kinds and decisions."""
    return repr([(inst.kind, inst.attrs, inst.decision) for inst in trace.insts
                 if inst.kind != "enter_postproc"])
