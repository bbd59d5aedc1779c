"""TuningDashboard: rounds in, plotted data, records, best schedules, the explorer, clicks."""
import json
import math

import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import meta_schedule as ms
from mlcbench.ir import MLCBenchError, TuningError
from mlcbench.meta_schedule import MeasuredCandidate, TuningRound
from mlcbench.meta_schedule.runner import EvaluatorConfig, LocalRunner
from mlcbench_widgets import ScheduleExplorer, TuningDashboard
from helpers.tuning_testing import FakeMeasurer, matmul_module, stochastic_schedule_mm

TARGET = "llvm --num-cores=2"


def candidate(seconds, predicted=None, gflops=None):
    """A measured candidate with a trace of its own (one split, so traces differ)."""
    sch = tvm.tir.Schedule(matmul_module(8))
    sch.split(sch.get_loops(sch.get_block("C"))[0], factors=[None, 2 if seconds else 4])
    if seconds is None:
        return MeasuredCandidate(sch.trace, None, "run crash: simulated", predicted)
    return MeasuredCandidate(sch.trace, [seconds], None, predicted, gflops)


def make_round(task, task_id, index, trials, total, candidates, best, seconds, rho=math.nan):
    valid = [c for c in candidates if c.error_msg is None and c.predicted is not None]
    return TuningRound(task, task_id, index, trials, total, tuple(candidates),
                       None if best is None else 1e-3, best,
                       tuple(c.predicted for c in valid),
                       tuple(1 / c.run_secs[0] for c in valid), rho, seconds)


@pytest.fixture
def synthetic_rounds():
    """Two tasks tuned in turn: dense, relu, dense."""
    return [
        make_round("dense", 0, 0, 2, 2, [candidate(2e-3, 0.1, 1.0), candidate(1e-3, 0.9, 2.0)],
                   2.0, 1.5, rho=1.0),
        make_round("relu", 1, 0, 2, 4, [candidate(None, 0.5), candidate(4e-3, 0.2, 0.5)],
                   0.5, 0.5),
        make_round("dense", 0, 1, 4, 6, [candidate(5e-4, 0.3, 4.0), candidate(3e-3, 0.8, 0.7)],
                   4.0, 2.0, rho=-1.0),
    ]


def fed(dashboard, rounds):
    for tuning_round in rounds:
        dashboard(tuning_round)
    return dashboard


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """A real run: 64x64x64 matmul, 8 trials in two rounds, the course's stochastic
    schedule, measured in worker processes. Returns its work_dir and rounds."""
    work_dir = str(tmp_path_factory.mktemp("tune"))
    rounds = []
    runner = LocalRunner(evaluator_config=EvaluatorConfig(number=2, repeat=1, min_repeat_ms=0))
    ms.tune_tir(matmul_module(64), TARGET, work_dir, 8, num_trials_per_iter=4, runner=runner,
                space=stochastic_schedule_mm, strategy="replay-trace", cost_model="random",
                seed=0, callbacks=[rounds.append], progress_bar=False)
    runner.shutdown()
    return work_dir, rounds


# -- synthetic rounds: the data behind every plot ------------------------------------------
def test_tasks_and_curves_from_rounds(synthetic_rounds):
    dashboard = fed(TuningDashboard(), synthetic_rounds)
    assert [(t.name, t.rounds, t.trials, t.errors, t.best_gflops) for t in dashboard.tasks] == [
        ("dense", 2, 4, 0, 4.0), ("relu", 1, 2, 1, 0.5)]
    curves = dashboard.curves()
    assert curves["dense"]["trials"] == ([1, 2, 3, 4], [1.0, 2.0, 4.0, 4.0])
    xs, ys = curves["relu"]["trials"]
    assert xs == [1, 2] and math.isnan(ys[0]) and ys[1] == 0.5    # first one crashed
    assert curves["dense"]["points"] == ([1, 2, 3, 4], [1.0, 2.0, 4.0, 0.7])
    assert curves["dense"]["time"] == ([1.5, 4.0], [2.0, 4.0])   # relu's 0.5 s in between
    assert curves["relu"]["points"] == ([2], [0.5])              # the crash is no point


def test_progress_figure_plots_those_curves(synthetic_rounds):
    fig = fed(TuningDashboard(), synthetic_rounds).progress_figure()
    by_trials, by_time = fig.axes
    dense, relu = by_trials.lines
    assert list(dense.get_xdata()) == [1, 2, 3, 4]
    assert list(dense.get_ydata()) == [1.0, 2.0, 4.0, 4.0]
    assert list(relu.get_ydata())[1:] == [0.5]
    np.testing.assert_array_equal(by_trials.collections[0].get_offsets(),
                                  [[1, 1.0], [2, 2.0], [3, 4.0], [4, 0.7]])
    assert [list(line.get_xdata()) for line in by_time.lines] == [[1.5, 4.0], [2.0]]


def test_cost_model_scatter_of_the_selected_round(synthetic_rounds):
    dashboard = fed(TuningDashboard(), synthetic_rounds)
    assert dashboard.selected_round_index == 2                  # follows the latest
    ax = dashboard.cost_model_figure().axes[0]
    np.testing.assert_allclose(ax.collections[0].get_offsets(), [[0.3, 2000], [0.8, 1000 / 3]])
    assert "rank correlation -1.00" in ax.get_title()
    assert dashboard.select_round(0) is synthetic_rounds[0]
    ax = dashboard.cost_model_figure().axes[0]
    np.testing.assert_allclose(ax.collections[0].get_offsets(), [[0.1, 500], [0.9, 1000]])
    assert "dense round 0: rank correlation +1.00" == ax.get_title()
    dashboard(synthetic_rounds[1])                              # a chosen round stays chosen
    assert dashboard.selected_round_index == 0
    with pytest.raises(MLCBenchError, match="no round 7; there are 4"):
        dashboard.select_round(7)


def test_round_dropdown_selects_and_redraws(synthetic_rounds):
    dashboard = fed(TuningDashboard(), synthetic_rounds)
    ui = dashboard.widget
    assert [value for _, value in ui.round_dropdown.options] == [0, 1, 2]
    assert ui.round_dropdown.value == 2
    ui.round_dropdown.value = 1
    assert dashboard.selected_round_index == 1
    assert "relu round 0: rank correlation n/a" in ui.cost_model_figure.axes[0].get_title()
    dashboard.select_round(0)
    assert ui.round_dropdown.value == 0


def test_records_and_best_from_rounds_alone(synthetic_rounds):
    dashboard = fed(TuningDashboard(), synthetic_rounds)
    records = dashboard.records
    assert [(r.task, r.round_index, r.gflops) for r in records] == [
        ("dense", 0, 1.0), ("dense", 0, 2.0), ("relu", 0, None), ("relu", 0, 0.5),
        ("dense", 1, 4.0), ("dense", 1, 0.7)]
    assert records[2].error_msg == "run crash: simulated" and not records[2].is_valid
    assert dashboard.best("dense") is not None and dashboard.best("dense").seconds == 5e-4
    with pytest.raises(MLCBenchError, match=r"no task None; tasks: \['dense', 'relu'\]"):
        dashboard.best()
    with pytest.raises(MLCBenchError, match="give the dashboard the database"):
        dashboard.open_in_explorer("dense")


def test_ui_without_a_database_shows_the_trace_but_cannot_open(synthetic_rounds):
    ui = fed(TuningDashboard(), synthetic_rounds).widget
    assert ui.task_dropdown.options == ("dense", "relu") and ui.task_dropdown.value == "dense"
    assert "split" in ui.trace_view.value and "give the dashboard the database" in \
        ui.script_view.value
    assert ui.open_button.disabled
    ui.task_dropdown.value = "relu"
    assert "relu" in ui.best_info.value and "0.50 GFLOPS" in ui.best_info.value
    assert "6 records" in ui.records_view.value and "run crash" in ui.records_view.value


# -- a real tuning run ------------------------------------------------------------------------
def test_real_rounds_and_database_records(tuned):
    work_dir, rounds = tuned
    dashboard = fed(TuningDashboard(work_dir), rounds)
    records = dashboard.records
    assert len(records) == 8 and all(r.is_valid and r.task == "main" for r in records)
    assert [r.round_index for r in records] == [0] * 4 + [1] * 4
    assert all(r.predicted is not None for r in records)
    best = dashboard.best()
    database = ms.JSONDatabase(work_dir=work_dir)
    expected = database.query_tuning_record(matmul_module(64), TARGET)
    assert dashboard.best_trace() == str(expected.trace)
    assert best.seconds == pytest.approx(expected.mean_run_secs)
    assert dashboard.tasks[0].best_gflops == pytest.approx(best.gflops)
    assert dashboard.best_script() == expected.as_schedule().mod.script()
    by_trials = dashboard.progress_figure().axes[0]
    assert list(by_trials.lines[0].get_xdata()) == list(range(1, 9))
    assert by_trials.lines[0].get_ydata()[-1] == pytest.approx(rounds[-1].best_gflops)
    assert len(by_trials.collections[0].get_offsets()) == 8


@pytest.mark.parametrize("source", ["work_dir", "json", "memory"])
def test_from_a_database_alone(tuned, source):
    work_dir, _ = tuned
    json_db = ms.JSONDatabase(work_dir=work_dir)
    if source == "memory":
        memory = ms.MemoryDatabase()
        for record in json_db.get_all_tuning_records():
            workload = memory.commit_workload(record.workload.mod)
            memory.commit_tuning_record(ms.TuningRecord(record.trace, workload,
                                                        record.run_secs, record.target))
    db = {"work_dir": work_dir, "json": json_db, "memory": memory if source == "memory"
          else None}[source]
    dashboard = TuningDashboard(db)
    assert len(dashboard.records) == 8 and dashboard.rounds == []
    assert all(r.round_index is None and r.task == "main" for r in dashboard.records)
    task = dashboard.tasks[0]
    assert (task.name, task.rounds, task.trials) == ("main", 0, 8)
    xs, ys = dashboard.curves()["main"]["trials"]
    assert xs == list(range(1, 9)) and ys[-1] == pytest.approx(dashboard.best().gflops)
    assert len(dashboard.progress_figure().axes[1].lines) == 0   # no wall time known


def test_open_in_explorer_replays_the_best_schedule(tuned):
    dashboard = TuningDashboard(tuned[0])
    explorer = dashboard.open_in_explorer(peaks=None)
    best = dashboard.best()
    tvm.ir.assert_structural_equal(explorer.mod, best.schedule().mod)
    labels = [step.label for step in explorer.history.path()]
    assert labels[0] == "start" and all(label.startswith("tuned: ") for label in labels[1:])
    assert any("sch.reorder(" in label for label in labels)
    explorer.undo()                                   # one step back in the tuned schedule
    assert explorer.current.index == len(labels) - 2


def test_open_button_shows_the_explorer(tuned):
    ui = TuningDashboard(tuned[0]).widget
    assert not ui.open_button.disabled and "prim_func" in ui.script_view.value
    ui.open_button.click()
    assert isinstance(ui.explorer, ScheduleExplorer) and ui.message.value == ""
    assert ui.explorer_box.children == (ui.explorer.widget.container,)
    tvm.ir.assert_structural_equal(ui.explorer.mod, ui.dashboard.best().schedule().mod)


def test_redraws_after_every_round_while_tuning(tmp_path):
    dashboard = TuningDashboard(str(tmp_path))
    ui = dashboard.widget
    drawn = []
    dashboard.on_change(lambda event: drawn.append(
        (event, len(ui.progress_figure.axes[0].collections[0].get_offsets()))))
    measurer = FakeMeasurer()
    ms.tune_tir(matmul_module(32), TARGET, str(tmp_path), 12, num_trials_per_iter=4,
                builder=measurer.builder, runner=measurer.runner, space=stochastic_schedule_mm,
                strategy="replay-trace", cost_model="random", seed=0, callbacks=[dashboard],
                progress_bar=False)
    assert drawn == [("round", 4), ("round", 8), ("round", 12)]   # UI drew before each
    assert [v for _, v in ui.round_dropdown.options] == [0, 1, 2]
    assert "3 rounds, 12 trials" in ui.summary.value


def test_explorer_from_a_hand_written_trace(matmul):
    sch = tvm.tir.Schedule(matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    explorer = ScheduleExplorer.from_trace(matmul, sch.trace)
    assert [s.label for s in explorer.history.path()][1:] == [
        "tuned: l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True)"
        "  (+2 lookups)", "tuned: sch.reorder(l4, l3, l5)"]
    tvm.ir.assert_structural_equal(explorer.mod, sch.mod)
    explorer.apply("vectorize", loop="j_1")          # exploring goes on from the replay
    assert explorer.tree.loop("j_1").kind == "vectorized"


def test_rejects_what_is_not_a_source():
    with pytest.raises(MLCBenchError, match="expected a meta_schedule Database"):
        TuningDashboard(42)


def test_whole_model_tuning_has_one_row_per_kernel():
    from mlcbench.driver.models import export_digits_model
    mod = export_digits_model("mlp", 1)[0]
    kernels = {t.task_name: t.mod for t in ms.extract_tasks(mod, TARGET)}
    dashboard, measurer = TuningDashboard(), FakeMeasurer()
    database = ms.tune_relax(mod, None, TARGET, None, 12, num_trials_per_iter=2,
                             builder=measurer.builder, runner=measurer.runner,
                             database="memory", strategy="replay-trace", cost_model="random",
                             seed=1, task_scheduler="round-robin", progress_bar=False,
                             callbacks=[dashboard])
    dashboard.load(database)
    assert sorted(dashboard.task_names) == sorted(kernels) and len(kernels) > 1
    assert sum(t.trials for t in dashboard.tasks) == 12 == len(dashboard.records)
    for name in kernels:
        tvm.ir.assert_structural_equal(dashboard.best(name).workload, kernels[name])
    assert len(dashboard.progress_figure().axes[0].lines) == len(kernels)
    name = dashboard.task_names[-1]
    explorer = dashboard.open_in_explorer(name)
    tvm.ir.assert_structural_equal(explorer.mod, dashboard.best(name).schedule().mod)


def test_a_work_dir_with_a_payload_is_refused_and_never_runs(tmp_path):
    """Opening a work_dir parses its TVMScript as data (the text policy)."""
    marker = tmp_path / "ran"
    text = (f'@T.prim_func\ndef main(A: T.Buffer((__import__("os").system("touch {marker}") '
            '* 0 + 4,), "float32")):\n    T.evaluate(0)\n')
    (tmp_path / "database_workload.json").write_text(json.dumps(["12", text]) + "\n")
    with pytest.raises(TuningError, match="database_workload.json:1: .*'__import__'"):
        TuningDashboard(tmp_path).records
    assert not marker.exists()


@pytest.mark.parametrize("seconds", [0.0, -1e-3, float("nan"), float("inf")])
def test_a_zero_negative_or_nan_time_is_not_a_valid_record(seconds):
    from mlcbench_widgets.tuning_model import DashboardRecord
    assert not DashboardRecord("main", None, (seconds,), None).is_valid
    assert DashboardRecord("main", None, (1e-3,), None).is_valid


def test_rounds_scored_by_an_untrained_model_are_marked():
    from dataclasses import replace

    from mlcbench_widgets.tuning_model import round_label
    from mlcbench_widgets.tuning_plots import correlation_title
    base = make_round("dense", 0, 0, 2, 2, [candidate(2e-3, 0.1, 1.0), candidate(1e-3, 0.9, 2.0)],
                      2.0, 1.5, rho=1.0)
    random_round, trained_round = (replace(base, model_trained=flag) for flag in (False, True))
    assert "model not trained: random scores" in round_label(0, random_round)
    assert "scores are random" in correlation_title(random_round)
    for shown in (trained_round, base):       # trained, or no cost model at all
        assert "random" not in round_label(0, shown) + correlation_title(shown)


def test_per_worker_progress_and_the_dask_link():
    import dataclasses

    def on(worker, c):
        return dataclasses.replace(c, worker=worker)
    rounds = [make_round("dense", 0, 0, 3, 3, [on("tcp://a:1", candidate(2e-3, 0.1, 1.0)),
                                                on("tcp://b:2", candidate(None, 0.5)),
                                                on("tcp://a:1", candidate(1e-3, 0.9, 2.0))],
                         2.0, 1.0)]

    class Client:
        dashboard_link = "http://scheduler:8787/status"
    dashboard = fed(TuningDashboard(client=Client()), rounds)
    assert [(w.worker, w.trials, w.errors) for w in dashboard.workers] == [
        ("tcp://a:1", 2, 0), ("tcp://b:2", 1, 1)]
    ui = dashboard.widget
    assert "http://scheduler:8787/status" in ui.summary.value
    assert "tcp://b:2" in ui.worker_table.value and "<progress value='1' max='2'>" in \
        ui.worker_table.value
    local = fed(TuningDashboard(), [make_round("dense", 0, 0, 1, 1, [
        on("local", candidate(2e-3, 0.1, 1.0))], 1.0, 1.0)])
    assert local.widget.worker_table.value == "" and "Dask" not in local.widget.summary.value
