"""Task schedulers: share a trial budget among tuning tasks, round by round.

Each round takes one task's next candidates from its search strategy, builds and runs
them, writes every result to the database (failures included, so they are never
measured again), updates the cost model, and reports a :class:`TuningRound` to the
callbacks. With ``remeasure_top_k``, the fastest few programs of each task and its
default schedule are measured again at the end, in turn for several rounds, and those
figures replace the first ones (a program measured once while the machine was busy
elsewhere can look faster or slower than it is; see :mod:`.remeasure`).
``RoundRobin`` visits the tasks in turn; ``GradientBased`` (Ansor's scheduler) gives the
next round to the task whose weighted latency is expected to drop most::

    TaskScheduler.create("gradient").tune(tasks, task_weights, max_trials_global=256, ...)
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from ..ir.errors import MLCBenchError, TuningError
from .arg_info import ArgInfo
from .background import BackgroundCall
from .builder import BuilderInput, remove_artifact
from .database import MAX_RUN_SECS, TuningRecord
from .prepacked import measured_module
from .remeasure import remeasure
from .runner import RunnerInput, RunnerResult
from .tuning_round import MeasuredCandidate, TuningRound, summary_table
from .metrics import spearman
from .utils import estimate_flops

__all__ = ["TaskScheduler", "RoundRobin", "GradientBased"]


class _Task:
    """A task's progress: rounds, trials, best time after each round, errors."""

    def __init__(self, context, weight: float):
        self.context, self.weight = context, float(weight)
        self.flops = estimate_flops(context.mod)
        self.workload = None
        self.reference_path = None
        self.rounds = self.trials = self.errors = 0
        self.best_history: list[float] = []
        self.best_secs = MAX_RUN_SECS
        self.started = self.finished = False
        self.max_trials = 0
        self.seconds = 0.0
        self.phase_seconds: dict[str, float] = {}

    def charge(self, clock) -> None:
        """Add the wall time of a round (a ``_PhaseClock``) to the task's totals."""
        self.seconds += clock.total
        for phase, secs in clock.phases.items():
            self.phase_seconds[phase] = self.phase_seconds.get(phase, 0.0) + secs

    def gflops(self, secs: float) -> float | None:
        return self.flops / secs / 1e9 if secs < MAX_RUN_SECS and self.flops else None


@dataclass
class _Budget:
    max_trials_global: int
    total_trials: int = 0


class TaskScheduler:
    """Base of task schedulers; subclasses choose :meth:`next_task_id`."""

    def __init__(self):
        self.tasks: list[_Task] = []

    @staticmethod
    def create(kind: str = "gradient", *args, **kwargs) -> "TaskScheduler":
        """``"round-robin"`` or ``"gradient"``."""
        kinds = {"round-robin": RoundRobin, "round_robin": RoundRobin,
                 "gradient": GradientBased, "gradient-based": GradientBased}
        if kind not in kinds:
            raise TuningError(f"TaskScheduler.create: unknown kind {kind!r}, expected "
                              "'round-robin' or 'gradient'")
        return kinds[kind](*args, **kwargs)

    def next_task_id(self) -> int:
        raise NotImplementedError

    def _alive(self) -> list[int]:
        return [i for i, task in enumerate(self.tasks) if not task.finished]

    # -- the loop -------------------------------------------------------------------------
    def tune(self, tasks, task_weights, max_trials_global: int, max_trials_per_task: int,
             num_trials_per_iter: int, builder, runner, measure_callbacks, database,
             cost_model, callbacks=(), progress_bar: bool = True, remeasure_top_k: int = 0,
             remeasure_rounds: int = 3) -> None:
        """Tune ``tasks`` (TuneContexts) until the budgets are spent or every space is;
        then measure the ``remeasure_top_k`` fastest programs of each task and its
        default schedule again, ``remeasure_rounds`` times in turn (0: not at all)."""
        if remeasure_top_k < 0 or remeasure_rounds < 1:
            raise TuningError(f"tune: remeasure_top_k must be >= 0 and remeasure_rounds "
                              f">= 1, found {remeasure_top_k} and {remeasure_rounds}")
        if len(task_weights) != len(tasks):
            raise TuningError(f"tune: {len(tasks)} tasks but {len(task_weights)} weights")
        self.tasks = [_Task(ctx, w) for ctx, w in zip(tasks, task_weights)]
        budget = _Budget(max_trials_global)
        bar = _progress_bar(max_trials_global, progress_bar)
        started = time.perf_counter()
        try:
            for task in self.tasks:
                # Every task starts before the first round: a bad task fails before any tuning.
                self._start_task(task, builder, runner, database, cost_model,
                                 max_trials_per_task, num_trials_per_iter)
            while budget.total_trials < max_trials_global and self._alive():
                task_id = self.next_task_id()
                record = self._run_round(task_id, budget, builder, runner, database,
                                         cost_model, measure_callbacks)
                if record is None:
                    continue
                bar.update(len(record.candidates))
                bar.set_postfix_str(_postfix(record))
                for callback in callbacks:
                    callback(record)
            for task in self.tasks:
                if task.started and remeasure_top_k > 0:
                    self._remeasure(task, builder, runner, database, remeasure_top_k,
                                    remeasure_rounds)
        finally:
            bar.close()
            for task in self.tasks:
                if task.started:
                    task.context.post_tuning()
                remove_artifact(task.reference_path)
        self.wall_seconds = time.perf_counter() - started
        print(self.summary())

    def summary(self) -> str:
        """The text table printed at the end of :meth:`tune`."""
        return summary_table(self.tasks)

    def _start_task(self, task, builder, runner, database, cost_model, max_trials,
                    num_trials_per_iter) -> None:
        context = task.context
        task.workload = database.commit_workload(context.mod)
        task.max_trials = max_trials
        spaces = context.generate_design_space()
        context.pre_tuning(max_trials, num_trials_per_iter, spaces, database, cost_model)
        task.started = True
        if getattr(runner, "check_correctness", False):
            (built,) = builder.build([BuilderInput(context.mod, context.target)])
            task.reference_path = built.artifact_path
            # the unscheduled module runs for seconds: let it run while the search works
            prefetch = getattr(runner, "prefetch_reference", None)
            if prefetch is not None and built.artifact_path is not None:
                prefetch(RunnerInput(None, context.target.kind.name,
                                     ArgInfo.from_entry_func(context.mod), built.artifact_path))

    def _run_round(self, task_id, budget, builder, runner, database, cost_model,
                   measure_callbacks):
        task = self.tasks[task_id]
        clock = _PhaseClock()
        candidates = task.context.generate_measure_candidates()
        if candidates:
            # The global budget is a hard limit: the last round may be short.
            candidates = candidates[:budget.max_trials_global - budget.total_trials]
        if not candidates:
            task.finished = True
            _say_exhausted(task, budget)
            return None
        # Noted before this round's update: it says whether the model guided these picks.
        model_trained = None if cost_model is None else not cost_model.scores_are_random
        if cost_model is not None:
            _predict(task.context, cost_model, candidates)
        clock.lap("search")
        builder_results, results = self._measure(task, candidates, builder, runner, clock,
                                                 cost_model)
        for candidate, result in zip(candidates, results):
            database.commit_tuning_record(_record_of(task, candidate, result))
        if cost_model is not None:
            cost_model.update(task.context, candidates, results)
        for callback in measure_callbacks or ():
            callback.apply(self, task_id, candidates, builder_results, results)
        task.context.notify_runner_results(candidates, results)
        clock.lap("update")
        budget.total_trials += len(candidates)
        return self._account(task, task_id, candidates, results, budget, clock, model_trained)

    def _remeasure(self, task, builder, runner, database, top_k: int, rounds: int) -> None:
        """The task's ``top_k`` fastest programs and its default schedule measured again,
        in turn (see :mod:`.remeasure`); the task's best is then the database's."""
        clock = _PhaseClock()
        remeasure(task.context, task.workload, builder, runner, database, top_k, rounds,
                  task.reference_path, clock)
        best = database.get_top_k(task.workload, 1)
        task.best_secs = best[0].mean_run_secs if best else MAX_RUN_SECS
        task.charge(clock)

    def _measure(self, task, candidates, builder, runner, clock, cost_model=None):
        """Build every candidate, run those that built; a failure becomes its result.
        While they build, the cost model prepares its update (:func:`build_while`)."""
        context = task.context
        prepare = getattr(cost_model, "prepare", None)     # a model may not define it
        built = build_while(builder, [BuilderInput(measured_module(context, c.sch.mod),
                                                   context.target)
                                      for c in candidates],
                            None if prepare is None else lambda: prepare(context, candidates))
        clock.lap("build")
        # The runner may stop timing a candidate early once it is clearly slower than this.
        best = task.best_secs if task.best_secs < MAX_RUN_SECS else None
        inputs = [RunnerInput(b.artifact_path, context.target.kind.name, c.args_info,
                              task.reference_path, str(task.workload.shash), best)
                  for c, b in zip(candidates, built) if b.error_msg is None]
        futures = iter(runner.run(inputs) if inputs else [])
        results = []
        for b in built:
            if b.error_msg is not None:
                results.append(RunnerResult(None, b.error_msg))
            else:
                results.append(next(futures).result())
                remove_artifact(b.artifact_path)
        clock.lap("run")
        return built, results

    def _account(self, task, task_id, candidates, results, budget, clock,
                 model_trained) -> TuningRound:
        measured = []
        for candidate, result in zip(candidates, results):
            secs = _mean(result.run_secs) if result.error_msg is None else None
            task.errors += secs is None
            if secs is not None:
                task.best_secs = min(task.best_secs, secs)
            measured.append(MeasuredCandidate(candidate.sch.trace, result.run_secs,
                                              result.error_msg, candidate.predicted,
                                              None if secs is None else task.gflops(secs),
                                              getattr(result, "worker", None)))
        task.rounds += 1
        task.trials += len(candidates)
        task.charge(clock)
        task.best_history.append(task.best_secs)
        pairs = [(m.predicted, 1.0 / _mean(m.run_secs)) for m in measured
                 if m.predicted is not None and m.error_msg is None]
        return TuningRound(
            task_name=task.context.task_name, task_id=task_id, round_index=task.rounds - 1,
            trials=task.trials, total_trials=budget.total_trials, candidates=tuple(measured),
            best_run_secs=task.best_secs if task.best_secs < MAX_RUN_SECS else None,
            best_gflops=task.gflops(task.best_secs),
            predicted=tuple(p for p, _ in pairs), measured=tuple(m for _, m in pairs),
            rank_correlation=spearman(*zip(*pairs)) if len(pairs) > 1 else float("nan"),
            seconds=clock.total, phase_seconds=dict(clock.phases), model_trained=model_trained)


class _PhaseClock:
    """Wall time of a round, split by phase: search, build, run, update."""

    def __init__(self):
        self.phases: dict[str, float] = {}
        self.total = 0.0
        self._last = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - self._last
        self.total += now - self._last
        self._last = now


def _mean(values) -> float:
    return sum(values) / len(values) if values else MAX_RUN_SECS


def build_while(builder, build_inputs, work=None) -> list:
    """``builder.build(build_inputs)``, with ``work()`` run meanwhile in a thread.

    The builder's workers compile in other processes and the slowest candidates of a
    round leave cores idle, so work for later (a cost model's feature extraction) is
    done meanwhile. The builder stays in this thread: Linux stops a worker process when
    the thread that started it ends. ``work`` is only an early start: its error is
    dropped here and comes again where its result is needed.
    """
    if work is None:
        return builder.build(build_inputs)
    call = BackgroundCall(work, "mlcbench-prepare")
    try:
        return builder.build(build_inputs)
    finally:
        try:
            call.result()
        except MLCBenchError:
            pass


def _say_exhausted(task, budget) -> None:
    """Tell why a task stopped short of the budget: its space has no new candidate."""
    if budget.total_trials < budget.max_trials_global and task.trials < task.max_trials:
        print(f"{task.context.task_name}: space exhausted after {task.trials} candidate"
              f"{'s' * (task.trials != 1)} (no untried schedule is left; the budget was "
              f"{budget.max_trials_global})")


def _predict(context, cost_model, candidates) -> None:
    """Fill in the cost model's score of the candidates the strategy did not score."""
    missing = [c for c in candidates if c.predicted is None]
    if missing:
        for candidate, score in zip(missing, cost_model.predict(context, missing)):
            candidate.predicted = float(score)


def _record_of(task, candidate, result: RunnerResult) -> TuningRecord:
    failed = result.error_msg is not None or not result.run_secs
    return TuningRecord(candidate.sch.trace, task.workload,
                        [MAX_RUN_SECS] if failed else result.run_secs, task.context.target,
                        candidate.args_info,
                        error_msg=(result.error_msg or "no timing") if failed else None,
                        measurement=None if failed else getattr(result, "measurement", None))


def _progress_bar(total: int, enabled: bool):
    from tqdm.auto import tqdm
    return tqdm(total=total, desc="tuning", unit="trial", disable=not enabled, leave=True)


def _postfix(record: TuningRound) -> str:
    """``task: best 12.34 GFLOPS``; a kernel without floating-point work (a reshape)
    shows its time instead."""
    if record.best_gflops:
        best = f"{record.best_gflops:.2f} GFLOPS"
    elif record.best_run_secs is not None:
        best = f"{record.best_run_secs * 1e6:.2f} us"
    else:
        best = "no valid result"
    return f"{record.task_name}: best {best}"


class RoundRobin(TaskScheduler):
    """Give rounds to the unfinished tasks in turn."""

    def __init__(self):
        super().__init__()
        self._last = -1

    def next_task_id(self) -> int:
        alive = self._alive()
        later = [i for i in alive if i > self._last]
        # The next unfinished task after the last one, wrapping around.
        self._last = later[0] if later else alive[0]
        return self._last


class GradientBased(TaskScheduler):
    """Ansor's task scheduler: after one round for every task (in order of weighted
    FLOPs, heaviest first), the next round goes to the task whose weighted latency is
    expected to fall most.

    The expected fall mixes the recent gain (best time ``window_size`` rounds ago minus
    now, per round) with an optimistic guess (the current best spread over the rounds
    taken so far): ``weight * (alpha * recent + (1 - alpha) * optimistic)``.
    """

    def __init__(self, alpha: float = 0.2, window_size: int = 3, seed: int = 0):
        super().__init__()
        self.alpha, self.window_size = alpha, window_size

    def next_task_id(self) -> int:
        alive = self._alive()
        # Every task gets one round before gradients exist to compare, the heaviest
        # (weight times FLOPs) first: a budget shorter than those first rounds (a model
        # of 30 kernels at 16 trials a round) goes to the kernels that matter.
        fresh = [i for i in alive if self.tasks[i].rounds == 0]
        if fresh:
            return max(fresh, key=lambda i: self.tasks[i].weight * self.tasks[i].flops)
        return max(alive, key=self._expected_gain)

    def _expected_gain(self, task_id: int) -> float:
        task = self.tasks[task_id]
        history = [min(s, MAX_RUN_SECS) for s in task.best_history]
        if history[-1] >= MAX_RUN_SECS:
            return float("inf")        # nothing valid yet: measure it before anything else
        past = history[-1 - self.window_size] if len(history) > self.window_size else history[0]
        # A window that starts before the first valid result measures no gain.
        past = history[-1] if past >= MAX_RUN_SECS else past
        recent = (past - history[-1]) / min(self.window_size, len(history))
        optimistic = history[-1] / len(history)
        return task.weight * (self.alpha * recent + (1 - self.alpha) * optimistic)
