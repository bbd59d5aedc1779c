"""The dashboard's figures, drawn without pyplot (matplotlib is imported on first use).

Each function takes the plain data of :mod:`tuning_model` and returns a Figure, so a
test reads back exactly what a learner sees: ``fig.axes[0].lines[0].get_ydata()`` is
the best-so-far curve of the first task.
"""
from __future__ import annotations

import math

__all__ = ["correlation_title", "plot_cost_model", "plot_progress"]


def _figure(width: float, height: float, columns: int = 1):
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, [fig.add_subplot(1, columns, k + 1) for k in range(columns)]


def plot_progress(curves: dict):
    """Best GFLOPS so far against trials (with every measured candidate as a dot) and
    against wall time, one colour per task.

    ``curves`` maps a task name to ``{"trials": (xs, ys), "points": (xs, ys),
    "time": (xs, ys)}``. Axes 0 holds one line per task (in order), then its dots;
    axes 1 one line per task that has a time curve.
    """
    fig, (by_trials, by_time) = _figure(9.0, 3.4, columns=2)
    for k, (task, curve) in enumerate(curves.items()):
        colour = f"C{k % 10}"
        by_trials.plot(*curve["trials"], color=colour, marker="o", markersize=3,
                       drawstyle="steps-post", label=f"{task}: best")
        xs, ys = curve["points"]
        by_trials.scatter(xs, ys, color=colour, alpha=0.35, s=12, label=f"{task}: candidates")
        if curve["time"][0]:
            by_time.plot(*curve["time"], color=colour, marker="o", markersize=3,
                         drawstyle="steps-post", label=task)
    by_trials.set(xlabel="trials", ylabel="GFLOPS", title="best so far, and every candidate")
    by_time.set(xlabel="wall time (s)", ylabel="best GFLOPS", title="best so far vs time")
    for ax in (by_trials, by_time):
        ax.set_ylim(bottom=0)
        if ax.lines or ax.collections:
            ax.legend(fontsize=7, loc="lower right")
    if not by_time.lines:
        by_time.text(0.5, 0.5, "no tuning rounds seen\n(records from a database)",
                     ha="center", va="center", transform=by_time.transAxes, color="grey")
    return fig


def plot_cost_model(predicted, measured, title: str):
    """The cost model's score of each candidate against its measured speed: a good
    model puts the dots on a rising line (rank correlation near +1)."""
    fig, (ax,) = _figure(4.6, 3.4)
    ax.scatter(predicted, measured, color="C0", s=18)
    ax.set(xlabel="cost model score (higher: predicted faster)",
           ylabel="measured speed (runs / s)", title=title)
    if not predicted:
        ax.text(0.5, 0.5, "no scored candidates in this round", ha="center", va="center",
                transform=ax.transAxes, color="grey")
    return fig


def correlation_title(tuning_round) -> str:
    rho = tuning_round.rank_correlation
    corr = ("rank correlation n/a (fewer than two scored candidates)" if math.isnan(rho)
            else f"rank correlation {rho:+.2f}")
    if getattr(tuning_round, "model_trained", None) is False:
        corr += "\n(cost model not trained yet: its scores are random)"
    return f"{tuning_round.task_name} round {tuning_round.round_index}: {corr}"
