"""Search strategies: which schedules to measure next.

A strategy is driven by the task scheduler round by round::

    strategy.pre_tuning(max_trials, num_trials_per_iter, design_spaces, database, cost_model)
    while (candidates := strategy.generate_measure_candidates()) is not None:
        results = ...build and run candidates...
        strategy.notify_runner_results(candidates, results)
    strategy.post_tuning()

* :class:`ReplayFunc` runs the space generator again (a schedule function with new random
  decisions) for every candidate;
* :class:`ReplayTrace` replays the design spaces' traces with every sampling decision
  drawn again;
* :class:`EvolutionarySearch` mutates the best measured schedules and lets the cost
  model pick which to measure.

None of them measures the same program twice: a candidate whose scheduled module is
structurally equal to one measured before (in this run or in the database) is skipped.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace

from ..ir.errors import MLCBenchError, TuningError
from ..ir.structural import structural_hash
from ..tir.schedule import Schedule, Trace
from .arg_info import ArgInfo
from .postproc import apply_postprocs

__all__ = ["MeasureCandidate", "SearchStrategy", "ReplayFunc", "ReplayTrace",
           "EvolutionarySearch"]


@dataclass
class MeasureCandidate:
    """A schedule to measure and the arguments its kernel takes.

    ``predicted`` is the cost model's score when a strategy asked for one (larger is
    better), so callbacks can compare it with the measurement.
    """

    sch: Schedule
    args_info: list
    predicted: float | None = None


class SearchStrategy:
    """Base of search strategies; see the module docstring for the protocol.

    Subclasses implement :meth:`_next_candidates`; the base class keeps the trial budget
    and the set of programs already measured.
    """

    def __init__(self):
        self._context = None
        self._rng = random.Random(0)
        self._state = None

    def _initialize_with_tune_context(self, context) -> None:
        self._context = context
        # A context without a seed gets a fresh one: runs differ unless a seed is given.
        self._rng = random.Random(context.rand_state if context.rand_state is not None
                                  else random.randrange(2 ** 31))

    # -- the protocol ---------------------------------------------------------------------
    def pre_tuning(self, max_trials: int, num_trials_per_iter: int, design_spaces,
                   database=None, cost_model=None) -> None:
        if self._context is None:
            raise TuningError(f"{type(self).__name__}.pre_tuning: the strategy has no tune "
                              "context; create it through TuneContext(search_strategy=...)")
        if max_trials < 1 or num_trials_per_iter < 1:
            raise TuningError(f"pre_tuning: max_trials and num_trials_per_iter must be >= 1, "
                              f"found {max_trials} and {num_trials_per_iter}")
        spaces = list(design_spaces or ())
        self._state = _State(max_trials, num_trials_per_iter, spaces, database, cost_model,
                             ArgInfo.from_entry_func(self._context.mod))
        if database is not None:
            self._state.seen.update(measured_keys(database, self._context.mod))
        self._state.baseline = self._baseline_candidates()

    def generate_measure_candidates(self) -> list[MeasureCandidate] | None:
        """The next round's candidates, or None when the budget or the space is spent."""
        state = self._require_state("generate_measure_candidates")
        # The last round may be short: the task's budget is a hard limit.
        count = min(state.num_trials_per_iter, state.max_trials - state.trials)
        if count <= 0:
            return None
        # The baseline (the default schedule and seed points) goes first, then sampled ones.
        candidates, state.baseline = state.baseline[:count], state.baseline[count:]
        if len(candidates) < count:
            candidates += self._next_candidates(count - len(candidates))
        if not candidates:
            return None
        state.trials += len(candidates)
        return candidates

    def notify_runner_results(self, measure_candidates, results) -> None:
        self._require_state("notify_runner_results")

    def post_tuning(self) -> None:
        self._state = None

    def clone(self) -> "SearchStrategy":
        raise NotImplementedError

    @staticmethod
    def create(kind: str = "evolutionary", *args, **kwargs) -> "SearchStrategy":
        """``"replay-func"``, ``"replay-trace"`` or ``"evolutionary"`` (TVM's names)."""
        from .evolutionary_search import EvolutionarySearch
        kinds = {"replay-func": ReplayFunc, "replay-trace": ReplayTrace,
                 "replay_func": ReplayFunc, "replay_trace": ReplayTrace,
                 "evolutionary": EvolutionarySearch}
        if kind not in kinds:
            raise TuningError(f"SearchStrategy.create: unknown kind {kind!r}, expected one of "
                              "'replay-func', 'replay-trace', 'evolutionary'")
        return kinds[kind](*args, **kwargs)

    # -- for subclasses -----------------------------------------------------------------
    def _next_candidates(self, count: int) -> list[MeasureCandidate]:
        raise NotImplementedError

    def _require_state(self, method: str):
        if self._state is None:
            raise TuningError(f"{type(self).__name__}.{method}: call pre_tuning first")
        return self._state

    def _fork_seed(self) -> int:
        return self._rng.randrange(1, 2 ** 31 - 1)

    def _baseline_candidates(self) -> list[MeasureCandidate]:
        """What the space generator wants measured first, if not measured yet: its
        finished schedules (the default schedule of the template-free space), then its
        seed points of the design spaces, postprocessed."""
        state, found = self._state, []
        generator = self._context.space_generator
        if generator is None:
            return found
        mod = self._context.mod
        seeds = (self._postprocess(sch)
                 for sch in generator.seed_schedules(mod, state.design_spaces))
        for sch in [*generator.baseline_schedules(mod, self._context.constant_params),
                    *seeds]:
            key = None if sch is None else structural_hash(sch.mod)
            # Keyed by the scheduled module, not the trace: two traces may make one program.
            if key is not None and key not in state.seen:
                state.seen.add(key)
                found.append(MeasureCandidate(sch, state.args_info))
        return found

    def _collect_unseen(self, count: int, sample, max_fail_count: int):
        """Call ``sample()`` (a Schedule or None) until ``count`` new programs are found or
        ``max_fail_count`` calls in a row give nothing new."""
        state, found, fails = self._state, [], 0
        while len(found) < count and fails < max_fail_count:
            sch = sample()
            key = None if sch is None else structural_hash(sch.mod)
            if key is None or key in state.seen:
                fails += 1
                continue
            # Only consecutive failures count: a space with a few duplicates is not exhausted.
            fails = 0
            state.seen.add(key)
            found.append(MeasureCandidate(sch, state.args_info))
        return found

    def _postprocess(self, sch: Schedule) -> Schedule | None:
        """Apply the space generator's postprocessors; None if one refuses."""
        postprocs = getattr(self._context.space_generator, "postprocs", None)
        if not isinstance(postprocs, (list, tuple)) or not postprocs:
            return sch
        return sch if apply_postprocs(sch, postprocs) else None


class _State:
    """What a strategy tracks between pre_tuning and post_tuning."""

    def __init__(self, max_trials, num_trials_per_iter, design_spaces, database, cost_model,
                 args_info):
        self.max_trials, self.num_trials_per_iter = max_trials, num_trials_per_iter
        self.design_spaces, self.database, self.cost_model = design_spaces, database, cost_model
        self.args_info = args_info
        self.trials = 0
        self.seen: set[int] = set()       # structural hashes of programs measured or queued
        self.baseline: list = []          # finished schedules still to measure, first


def measured_keys(database, mod) -> set[int]:
    """Structural hashes of the programs the database holds for ``mod`` (their traces
    replayed); records whose trace no longer replays are skipped."""
    workload = database.lookup_workload(mod)
    if workload is None:
        return set()
    keys = set()
    for record in database.get_records(workload):
        try:
            keys.add(structural_hash(record.as_schedule().mod))
        except MLCBenchError:
            continue
    return keys


def without_decisions(trace: Trace) -> Trace:
    """``trace`` with every sampling decision cleared, so replaying it samples anew."""
    # Without decisions, each sampling instruction draws anew when replayed.
    return Trace([replace(inst, decision=None) for inst in trace.insts])


def replay_with_new_decisions(mod, trace: Trace, seed: int,
                              space_generator=None) -> Schedule | None:
    """A schedule of ``mod``: ``trace`` up to its postprocessing, decisions drawn again
    with ``seed`` (by the space generator's ``decision_provider`` where it has one);
    None when a primitive refuses the new decisions."""
    sch = Schedule(mod, seed=seed)
    provider = None if space_generator is None or not hasattr(
        space_generator, "decision_provider") else space_generator.decision_provider(sch, seed)
    try:
        # Postprocessing is left out: it is applied again, after sampling, by the caller.
        without_decisions(trace).apply_to_schedule(sch, remove_postproc=True,
                                                   decision_provider=provider)
    except MLCBenchError:
        return None
    return sch


class ReplayFunc(SearchStrategy):
    """Run the space generator again for every candidate (new random decisions each time).

    Suited to a schedule function (``ScheduleFn``) whose decisions depend on each other.

    >>> strategy = ReplayFunc()
    """

    def __init__(self, max_fail_count: int = 100):
        super().__init__()
        self.max_fail_count = max_fail_count

    def clone(self) -> "ReplayFunc":
        return ReplayFunc(self.max_fail_count)

    def _next_candidates(self, count: int) -> list[MeasureCandidate]:
        return self._collect_unseen(count, self._sample, self.max_fail_count)

    def _sample(self) -> Schedule | None:
        context = self._context
        try:
            spaces = context.generate_design_space(seed=self._fork_seed())
        except MLCBenchError:
            return None
        if not spaces:
            return None
        return self._postprocess(self._rng.choice(spaces))


class ReplayTrace(SearchStrategy):
    """Replay a random design space's trace with all its sampling decisions drawn again.

    >>> strategy = ReplayTrace(max_fail_count=100)
    """

    def __init__(self, max_fail_count: int = 100):
        super().__init__()
        self.max_fail_count = max_fail_count

    def clone(self) -> "ReplayTrace":
        return ReplayTrace(self.max_fail_count)

    def _next_candidates(self, count: int) -> list[MeasureCandidate]:
        if not self._state.design_spaces:
            raise TuningError("ReplayTrace: no design space to replay; the space generator "
                              "returned none")
        return self._collect_unseen(count, self._sample, self.max_fail_count)

    def _sample(self) -> Schedule | None:
        space = self._rng.choice(self._state.design_spaces)
        trace = space.trace if isinstance(space, Schedule) else space
        sch = replay_with_new_decisions(self._context.mod, trace, self._fork_seed(),
                                        self._context.space_generator)
        return None if sch is None else self._postprocess(sch)


def __getattr__(name):
    # EvolutionarySearch lives in its own module, which builds on this one
    if name == "EvolutionarySearch":
        from .evolutionary_search import EvolutionarySearch
        return EvolutionarySearch
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
