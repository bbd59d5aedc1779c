"""The ipywidgets face of :class:`TuningDashboard`: a thin layer over its Python API.

Top: one line of totals (with a link to the Dask dashboard when tuning runs on Dask),
a table of tasks and, when candidates were measured on workers other than "local", a
table of what each worker measured. Tabs: "progress" (best GFLOPS against
trials and wall time), "cost model" (a round chooser and the predicted-vs-measured
scatter), "records" (every measured candidate), "best" (a task chooser, the best trace
and IR, and "Open in ScheduleExplorer", which shows the explorer below).

The dashboard tells the UI after each round, so the plots grow while tuning runs. Tests
drive it with ``button.click()`` and by setting dropdown values.
"""
from __future__ import annotations

import html

import ipywidgets as W

from .render import guarded, highlight_python
from .roofline import figure_png
from .tuning_model import round_label

__all__ = ["TuningDashboardUI"]

MAX_RECORD_ROWS = 300


class TuningDashboardUI:
    """Widgets of one dashboard; ``container`` is what Jupyter displays."""

    TABS = ("progress", "cost model", "records", "best")

    def __init__(self, dashboard):
        self.dashboard = dashboard
        self.explorer = None                 # the last one "Open in ScheduleExplorer" made
        self.progress_figure = self.cost_model_figure = None
        self._quiet = False
        self.summary, self.task_table, self.message = W.HTML(), W.HTML(), W.HTML()
        self.worker_table = W.HTML()
        self.progress_image = W.Image(format="png")
        self.round_dropdown = W.Dropdown(description="round", layout=W.Layout(width="95%"))
        self.round_dropdown.observe(self._on_round, names="value")
        self.cost_model_image = W.Image(format="png", layout=W.Layout(align_self="flex-start"))
        self.records_view = W.HTML()
        self._build_best_tab()
        self.tabs = W.Tab(children=[
            self.progress_image, W.VBox([self.round_dropdown, self.cost_model_image]),
            self.records_view, self.best_tab])
        for k, title in enumerate(self.TABS):
            self.tabs.set_title(k, title)
        self.container = W.VBox([self.summary, self.task_table, self.worker_table, self.tabs,
                                 self.message])
        dashboard.on_change(self.refresh)
        self.refresh("records")

    def _build_best_tab(self) -> None:
        self.task_dropdown = W.Dropdown(description="task")
        self.task_dropdown.observe(lambda _: self._guard(self._refresh_best), names="value")
        self.open_button = W.Button(description="Open in ScheduleExplorer", icon="external-link",
                                    button_style="info", layout=W.Layout(width="auto"))
        self.open_button.on_click(lambda _: self.click_open())
        self.best_info, self.trace_view, self.script_view = W.HTML(), W.HTML(), W.HTML()
        self.explorer_box = W.VBox()
        code = W.HBox([W.VBox([W.HTML("<b>best trace</b>"), self.trace_view],
                              layout=W.Layout(width="50%")),
                       W.VBox([W.HTML("<b>best IR</b>"), self.script_view],
                              layout=W.Layout(width="50%"))])
        self.best_tab = W.VBox([W.HBox([self.task_dropdown, self.open_button]),
                                self.best_info, code, self.explorer_box])

    # -- actions ------------------------------------------------------------------------
    def _guard(self, action) -> bool:
        return guarded(self.message, action)

    def click_open(self) -> bool:
        """What "Open in ScheduleExplorer" does: the explorer appears under the button."""
        def act():
            self.explorer = self.dashboard.open_in_explorer(self.task_dropdown.value)
            self.explorer_box.children = [self.explorer.widget.container]
        return self._guard(act)

    def _on_round(self, change) -> None:
        if not self._quiet and change["new"] is not None:
            self._guard(lambda: self.dashboard.select_round(change["new"]))

    # -- reacting -------------------------------------------------------------------------
    def refresh(self, event: str = "round") -> None:
        """Redraw what ``event`` ("round", "records" or "select") changed."""
        if event == "select":
            self._refresh_cost_model()
            return
        self._refresh_summary()
        self.progress_figure = self.dashboard.progress_figure()
        self.progress_image.value = figure_png(self.progress_figure)
        self._refresh_rounds()
        self._refresh_cost_model()
        self.records_view.value = _records_html(self.dashboard.records)
        self._refresh_tasks()

    def _refresh_summary(self) -> None:
        tasks = self.dashboard.tasks
        trials = sum(t.trials for t in tasks)
        link = self.dashboard.dask_link
        self.summary.value = (f"<b>tuning</b>: {len(self.dashboard.rounds)} rounds, "
                              f"{trials} trials, {len(tasks)} task(s)" + (
                                  f" &middot; <a href='{html.escape(link)}' target='_blank'>"
                                  "Dask dashboard</a>" if link else ""))
        self.task_table.value = _tasks_html(tasks)
        workers = self.dashboard.workers
        remote = any(w.worker != "local" for w in workers)
        self.worker_table.value = _workers_html(workers) if remote else ""

    def _refresh_rounds(self) -> None:
        rounds = self.dashboard.rounds
        self._quiet = True
        try:
            self.round_dropdown.options = [(round_label(k, r), k) for k, r in enumerate(rounds)]
            self.round_dropdown.value = self.dashboard.selected_round_index
        finally:
            self._quiet = False

    def _refresh_cost_model(self) -> None:
        self._quiet = True
        try:
            self.round_dropdown.value = self.dashboard.selected_round_index
        finally:
            self._quiet = False
        self.cost_model_figure = self.dashboard.cost_model_figure()
        self.cost_model_image.value = figure_png(self.cost_model_figure)

    def _refresh_tasks(self) -> None:
        names = self.dashboard.task_names
        keep = self.task_dropdown.value
        self._quiet = True
        try:
            self.task_dropdown.options = names
            self.task_dropdown.value = keep if keep in names else (names[0] if names else None)
        finally:
            self._quiet = False
        self._guard(self._refresh_best)

    def _refresh_best(self) -> None:
        if self._quiet:
            return
        task = self.task_dropdown.value
        self.open_button.disabled = True
        self.trace_view.value = self.script_view.value = self.best_info.value = ""
        if task is None:
            return
        best = self.dashboard.best(task)
        self.best_info.value = (f"task <b>{html.escape(task)}</b>: "
                                f"{_us(best.seconds)} per call, {_num(best.gflops)} GFLOPS")
        self.trace_view.value = highlight_python(str(best.trace), height="360px")
        if best.workload is None:
            self.script_view.value = ("<i>Only rounds seen: give the dashboard the database "
                                      "(or work_dir) to see the IR and open it.</i>")
            return
        self.script_view.value = highlight_python(best.schedule().mod.script(), height="360px")
        self.open_button.disabled = False


def _num(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def _us(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.1f} us"


def _tasks_html(tasks) -> str:
    most = max((t.trials for t in tasks), default=0) or 1
    rows = "".join(
        f"<tr><td>{html.escape(t.name)}</td><td>{t.rounds}</td><td>{t.trials}</td>"
        f"<td><progress value='{t.trials}' max='{most}'></progress></td><td>{t.errors}</td>"
        f"<td>{_us(t.best_seconds)}</td><td>{_num(t.best_gflops)}</td>"
        f"<td>{t.seconds:.1f}</td></tr>" for t in tasks)
    return ("<table><tr><th>task</th><th>rounds</th><th>trials</th><th></th><th>errors</th>"
            f"<th>best</th><th>GFLOPS</th><th>seconds</th></tr>{rows}</table>")


def _workers_html(workers) -> str:
    most = max((w.trials for w in workers), default=0) or 1
    rows = "".join(
        f"<tr><td>{html.escape(w.worker)}</td><td>{w.trials}</td>"
        f"<td><progress value='{w.trials}' max='{most}'></progress></td><td>{w.errors}</td>"
        "</tr>" for w in workers)
    return ("<table><tr><th>worker</th><th>measured</th><th></th><th>errors</th></tr>"
            f"{rows}</table>")


def _records_html(records) -> str:
    shown = records[-MAX_RECORD_ROWS:]
    rows = "".join(
        f"<tr><td>{len(records) - len(shown) + k}</td><td>{html.escape(r.task)}</td>"
        f"<td>{'-' if r.round_index is None else r.round_index}</td>"
        f"<td>{_us(r.seconds)}</td><td>{_num(r.gflops)}</td>"
        f"<td>{'-' if r.predicted is None else f'{r.predicted:.3f}'}</td>"
        f"<td>{html.escape((r.error_msg or '').splitlines()[0][:80] if r.error_msg else '')}"
        "</td></tr>" for k, r in enumerate(shown))
    note = (f"<i>the last {MAX_RECORD_ROWS} of {len(records)} records</i>"
            if len(records) > len(shown) else f"<i>{len(records)} records</i>")
    return (f"{note}<div style='max-height: 420px; overflow: auto'><table><tr><th>#</th>"
            "<th>task</th><th>round</th><th>time</th><th>GFLOPS</th><th>predicted</th>"
            f"<th>error</th></tr>{rows}</table></div>")
