"""RandomTuner and GridSearchTuner: every config at most once; failures do not stop."""
import logging

import pytest

from mlcbench import autotvm
from mlcbench.ir import InvalidValueError

from helpers.autotvm_testing import FakeBuilder, FakeRunner


def test_random_tuner_never_repeats_and_survives_failures(task):
    runner = FakeRunner(broken=range(0, 72, 2))
    tuner = autotvm.tuner.RandomTuner(task, seed=0)
    tuner.tune(n_trial=40, measure_option={"builder": FakeBuilder(), "runner": runner})
    assert runner.calls == 40 and len(tuner.visited) == 40
    assert tuner.best_config.index % 2 == 1 and tuner.best_flops > 0


def test_grid_search_walks_indices_and_stops_at_space_end(task):
    tuner = autotvm.tuner.GridSearchTuner(task)
    seen = []
    tuner.tune(n_trial=500, measure_option={"builder": FakeBuilder(), "runner": FakeRunner()},
               callbacks=[lambda t, inputs, results: seen.extend(i.config.index
                                                                   for i in inputs)])
    assert seen == list(range(len(task.config_space)))


def test_early_stopping_and_load_history(task, fake_option):
    tuner = autotvm.tuner.GridSearchTuner(task)
    tuner.tune(n_trial=72, measure_option=fake_option, early_stopping=5)
    assert len(tuner.visited) < 72
    fresh = autotvm.tuner.RandomTuner(task, seed=1)
    history = [(autotvm.MeasureInput("llvm", task, task.config_space.get(i)),
                autotvm.MeasureResult((1.0,), 0, 0.0, 0.0)) for i in range(10)]
    fresh.load_history(history)
    batch = fresh.next_batch(62)
    assert not {c.index for c in batch} & set(range(10))


def test_each_measured_config_is_logged_in_the_prefix_asked_for(task, fake_option, caplog):
    tuner = autotvm.tuner.GridSearchTuner(task)
    with caplog.at_level(logging.DEBUG, logger="mlcbench.autotvm"):
        tuner.tune(n_trial=6, measure_option=fake_option, si_prefix="M")
    lines = [r.getMessage() for r in caplog.records if r.name == "mlcbench.autotvm"]
    assert [line.split("\t")[0] for line in lines] == [f"No: {i}" for i in range(1, 7)]
    best = tuner.best_flops / 1e6
    assert all("MFLOPS: " in line for line in lines)
    assert lines[-1].split("\t")[1].endswith(f"/{best:.2f}")


def test_unknown_si_prefix_is_refused_before_measuring(task, fake_option):
    tuner = autotvm.tuner.GridSearchTuner(task)
    with pytest.raises(InvalidValueError, match=r"si_prefix must be one of .*found 'Q'"):
        tuner.tune(n_trial=4, measure_option=fake_option, si_prefix="Q")
    assert not tuner.visited

