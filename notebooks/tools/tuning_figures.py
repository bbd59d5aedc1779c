"""The pictures of notebooks/05_tuning.ipynb: the programs a stochastic schedule
stands for, and the loop that searches them."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 -- after choosing the backend
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # noqa: E402

STEP, SAMPLE, PROGRAM, STORE = "#dde7f5", "#fbe3c4", "#c9e8c4", "#f4f4f4"


def _canvas(width, height, xmax, ymax):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, ymax)
    ax.axis("off")
    return fig, ax


def _box(ax, x, y, w, h, label, color=STEP, fontsize=9, family=None):
    ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.08",
                                facecolor=color, edgecolor="black"))
    ax.text(x + w / 2, y + h / 2, label, ha="center", va="center", fontsize=fontsize,
            family=family)


def _arrow(ax, start, end, label="", fontsize=8, rad=0.0):
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="->", mutation_scale=12,
                                 connectionstyle=f"arc3,rad={rad}"))
    if label:
        ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.25, label,
                fontsize=fontsize, ha="center")


def search_space_figure():
    """One stochastic schedule, five decisions of sample_perfect_tile, five programs."""
    fig, ax = _canvas(10, 3.6, 22, 8.4)
    _box(ax, 0.2, 3.4, 4.6, 1.6, "stochastic_schedule_mm\nget_block, get_loops", STEP)
    _box(ax, 5.6, 3.4, 5.0, 1.6, "sample_perfect_tile(j, n=2)\nj: 64 = j0 * j1", SAMPLE,
         fontsize=8.5)
    _arrow(ax, (4.9, 4.2), (5.5, 4.2))
    factors = [(64, 1), (32, 2), (16, 4), (8, 8), (4, 16)]
    for row, (outer, inner) in enumerate(factors):
        y = 7.2 - row * 1.55
        _box(ax, 12.4, y, 3.0, 1.0, f"decision\n[{outer}, {inner}]", SAMPLE, fontsize=8.5)
        _box(ax, 16.6, y, 5.2, 1.0, f"for i, j0 in grid(64, {outer}):\n  for k, j1 in grid(64, "
             f"{inner}): ...", PROGRAM, fontsize=7.5, family="monospace")
        _arrow(ax, (10.7, 4.2), (12.3, y + 0.5))
        _arrow(ax, (15.5, y + 0.5), (16.5, y + 0.5))
    ax.text(5.6, 1.6, "split, reorder, decompose_reduction\nthen act on the sampled values",
            fontsize=8.5)
    ax.text(12.4, 0.2, "inner factor at most 16 (max_innermost_factor): five programs",
            fontsize=8.5)
    return fig


def tuning_loop_figure():
    """Design space -> strategy -> cost model -> builder -> runner -> database, and the
    measurements teaching the cost model."""
    fig, ax = _canvas(10, 3.6, 22, 8)
    _box(ax, 0.2, 5.6, 4.2, 1.6, "design space\n(stochastic schedules)", SAMPLE)
    _box(ax, 5.6, 5.6, 4.4, 1.6, "search strategy\n(evolutionary: sample,\nmutate, keep best)")
    _box(ax, 11.2, 5.6, 4.0, 1.6, "cost model\n(XGBoost): score\ncandidates")
    _box(ax, 16.6, 5.6, 5.2, 1.6, "builder\ncompile the best-scored\ncandidates", PROGRAM)
    _box(ax, 16.6, 1.4, 5.2, 1.6, "runner\ntime each on the device", PROGRAM)
    _box(ax, 8.0, 1.4, 5.6, 1.6, "database\n(trace, seconds) records", STORE)
    _arrow(ax, (4.5, 6.4), (5.5, 6.4))
    _arrow(ax, (10.1, 6.4), (11.1, 6.4))
    _arrow(ax, (15.3, 6.4), (16.5, 6.4))
    _arrow(ax, (19.2, 5.5), (19.2, 3.1))
    _arrow(ax, (16.5, 2.2), (13.7, 2.2))
    _arrow(ax, (10.8, 3.1), (13.0, 5.5), "train", rad=-0.2)
    _arrow(ax, (8.0, 2.6), (7.8, 5.5), "seed the next round", rad=0.2)
    ax.text(11.0, 0.3, "one round = num_trials_per_iter candidates; stop at "
            "max_trials_global or when the space is exhausted", ha="center", fontsize=8.5)
    return fig
