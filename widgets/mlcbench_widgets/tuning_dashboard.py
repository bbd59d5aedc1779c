"""TuningDashboard: watch a tuning run round by round, then read its records and open the
best schedule in the ScheduleExplorer.

The dashboard is a tuning callback: tuning hands it every ``TuningRound`` and it redraws.
Given the database (or the ``work_dir`` that holds it), it also knows which module each
trace schedules, so it can show the best IR and replay it in the explorer::

    dashboard = TuningDashboard("./tune_tmp")           # or a Database, or nothing
    ms.tune_tir(mod, "llvm", "./tune_tmp", max_trials_global=16, callbacks=[dashboard])
    dashboard.tasks                                     # [TaskProgress('main', ...)]
    dashboard.best().gflops                             # the fastest record
    print(dashboard.best_trace())                       # as replayable Python
    dashboard.select_round(0)                           # the cost model in round 0
    dashboard.workers                                   # [WorkerProgress('local', 16, 0)]
    explorer = dashboard.open_in_explorer()             # best schedule, step by step
    dashboard                                           # in Jupyter: the widget

Plots come from the rounds when tuning reported any (this session's run); a database
alone gives records, best-so-far curves by record order, and no wall time or cost model.
"""
from __future__ import annotations

import os

from mlcbench import meta_schedule as ms
from mlcbench.ir import MLCBenchError

from . import tuning_model as model
from .tuning_plots import correlation_title, plot_cost_model, plot_progress
from .widget_model import WidgetModel

__all__ = ["TuningDashboard"]


class TuningDashboard(WidgetModel):
    """Tuning progress, records and best schedules of one tuning run.

    Parameters
    ----------
    source : Database, str or os.PathLike, optional
        The records: a ``meta_schedule`` Database, or a work_dir whose JSON database is
        read again whenever its files grow. None: only what the rounds report.
    client : distributed.Client, optional
        The Dask client that tuning builds and measures on: the dashboard links to its
        dashboard (``dask_link``).

    Examples
    --------
    >>> dashboard = TuningDashboard()                          # doctest: +SKIP
    >>> db = ms.tune_tir(mod, "llvm", "tmp", 8, callbacks=[dashboard])  # doctest: +SKIP
    >>> dashboard.load(db).best().is_valid                     # doctest: +SKIP
    True
    """

    def __init__(self, source=None, client=None):
        self.dask_link = getattr(client, "dashboard_link", None) if client else None
        self._rounds: list = []
        self._database: ms.Database | None = None
        self._work_dir: str | None = None
        self._stamp = None                       # sizes of the work_dir files last read
        self._cache_key = None
        self._records: list = []
        self._selected: int | None = None        # None: follow the latest round
        super().__init__()
        if source is not None:
            self.load(source)

    # -- feeding it -------------------------------------------------------------------------
    def __call__(self, tuning_round) -> None:
        """The tuning callback: keep the round and redraw."""
        self._rounds.append(tuning_round)
        self._changed("round")

    def load(self, source) -> "TuningDashboard":
        """Read records from a Database or a work_dir (replacing an earlier source)."""
        if isinstance(source, ms.Database):
            self._database, self._work_dir = source, None
        elif isinstance(source, (str, os.PathLike)):
            self._database, self._work_dir = None, os.fspath(source)
        else:
            raise MLCBenchError(f"TuningDashboard: expected a meta_schedule Database or a "
                                f"work_dir path, found {type(source).__name__}")
        self._cache_key = None
        self._changed("records")
        return self

    # -- what it knows ----------------------------------------------------------------------
    @property
    def rounds(self) -> list:
        """The ``TuningRound`` objects received, in order (all tasks interleaved)."""
        return list(self._rounds)

    @property
    def records(self) -> list:
        """Every measured candidate as a :class:`~.tuning_model.DashboardRecord`, oldest
        first: from the database when there is one, else from the rounds."""
        database = self._current_database()
        key = (len(self._rounds), id(database), len(database) if database else 0)
        if key != self._cache_key:
            self._records = (model.records_from_database(database, self._rounds)
                             if database is not None else
                             model.records_from_rounds(self._rounds))
            self._cache_key = key
        return list(self._records)

    def _current_database(self) -> ms.Database | None:
        if self._work_dir is None:
            return self._database
        files = [os.path.join(self._work_dir, name) for name in
                 ("database_workload.json", "database_tuning_record.json")]
        stamp = tuple(os.path.getsize(f) if os.path.exists(f) else -1 for f in files)
        if self._database is None or stamp != self._stamp:
            self._database = ms.JSONDatabase(work_dir=self._work_dir)
            self._stamp = stamp
        return self._database

    @property
    def workers(self) -> list:
        """Candidates measured per worker (rows of ``WorkerProgress``)."""
        return model.worker_progress(self._rounds)

    @property
    def tasks(self) -> list:
        """One :class:`~.tuning_model.TaskProgress` per task, in tuning order."""
        return model.task_progress(self._rounds, self.records)

    @property
    def task_names(self) -> list[str]:
        return model.task_names(self._rounds, self.records)

    def _task(self, task: str | None) -> str:
        names = self.task_names
        if task is None and len(names) == 1:
            return names[0]
        if task not in names:
            hint = "no task yet: tune, or load a database" if not names else f"tasks: {names}"
            raise MLCBenchError(f"TuningDashboard: no task {task!r}; {hint}")
        return task

    def best(self, task: str | None = None):
        """The fastest valid record of ``task`` (None: the only task)."""
        task = self._task(task)
        valid = [r for r in self.records if r.task == task and r.is_valid]
        if not valid:
            raise MLCBenchError(f"TuningDashboard: task {task!r} has no valid record yet")
        return min(valid, key=lambda r: r.seconds)

    def best_trace(self, task: str | None = None) -> str:
        """The best record's trace as ``def apply_trace(sch): ...`` code."""
        return str(self.best(task).trace)

    def best_script(self, task: str | None = None) -> str:
        """TVMScript of the best schedule's module (needs the database)."""
        return self.best(task).schedule().mod.script()

    # -- the plots ------------------------------------------------------------------------------
    def curves(self) -> dict:
        """Per task: best so far after each trial (``trials``), every valid candidate
        (``points``) and best so far after each round against wall time (``time``)."""
        records = self.records
        return {task: {"trials": model.best_curve(self._rounds, records, task),
                       "points": model.candidate_points(self._rounds, records, task),
                       "time": model.best_vs_time(self._rounds, task)}
                for task in self.task_names}

    def progress_figure(self):
        """Best GFLOPS against trials (every candidate a dot) and against wall time."""
        return plot_progress(self.curves())

    def select_round(self, index: int):
        """Show the cost model's predictions of round ``index`` of :attr:`rounds`."""
        if not -len(self._rounds) <= index < len(self._rounds):
            raise MLCBenchError(f"TuningDashboard: no round {index}; there are "
                                f"{len(self._rounds)}")
        self._selected = index % len(self._rounds)
        self._changed("select")
        return self._rounds[self._selected]

    @property
    def selected_round_index(self) -> int | None:
        """The selected round, or the latest while none was selected."""
        if self._selected is not None:
            return self._selected
        return len(self._rounds) - 1 if self._rounds else None

    @property
    def selected_round(self):
        index = self.selected_round_index
        return None if index is None else self._rounds[index]

    def cost_model_figure(self):
        """Predicted score against measured speed of the selected round's candidates."""
        chosen = self.selected_round
        if chosen is None:
            return plot_cost_model([], [], "no tuning round yet")
        return plot_cost_model(*model.cost_model_points(chosen), correlation_title(chosen))

    # -- onward to the explorer -------------------------------------------------------------
    def open_in_explorer(self, task: str | None = None, **kwargs):
        """A ScheduleExplorer on the task's module whose history replays the best trace,
        one step per schedule-changing instruction (``kwargs`` go to the explorer)."""
        from .schedule_explorer import ScheduleExplorer
        record = self.best(task)
        record.schedule()                        # a clear error when no module is known
        return ScheduleExplorer.from_trace(record.workload, record.trace, **kwargs)

    # -- the widget ---------------------------------------------------------------------------
    def _make_ui(self):
        from .tuning_dashboard_ui import TuningDashboardUI
        return TuningDashboardUI(self)

    def __repr__(self):
        tasks = ", ".join(f"{t.name}: {t.trials} trials" for t in self.tasks) or "no tasks"
        return f"TuningDashboard({len(self._rounds)} rounds; {tasks})"
