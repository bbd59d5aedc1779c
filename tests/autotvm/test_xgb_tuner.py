"""XGBTuner: knob and itervar features, rank and reg losses, model-guided picks."""
import pytest

from mlcbench import autotvm
from mlcbench.ir.errors import TuningError


@pytest.mark.parametrize("feature_type,loss_type", [("knob", "rank"), ("itervar", "reg")])
def test_xgb_tuner_finds_the_fake_optimum(task, fake_option, feature_type, loss_type):
    tuner = autotvm.tuner.XGBTuner(task, plan_size=16, feature_type=feature_type,
                                   loss_type=loss_type, seed=0)
    indices = []
    tuner.tune(n_trial=40, measure_option=fake_option,
               callbacks=[lambda t, inputs, results: indices.extend(i.config.index
                                                                      for i in inputs)])
    assert len(indices) == len(set(indices)) == 40
    best = tuner.best_config
    assert best["vec"].val == 1
    assert (best["tile_y"].size[-1], best["tile_x"].size[-1]) == (8, 8)


def test_simulated_annealing_on_a_large_space(task, fake_option):
    tuner = autotvm.tuner.XGBTuner(task, plan_size=16, feature_type="knob",
                                   exhaustive_limit=0, seed=0)
    tuner.tune(n_trial=32, measure_option=fake_option)
    assert tuner.trials and not set(tuner.trials) & tuner.visited


def test_bad_options_are_refused(task):
    with pytest.raises(TuningError, match="feature_type must be one of"):
        autotvm.tuner.XGBTuner(task, feature_type="curves")
    with pytest.raises(TuningError, match="optimizer must be 'sa'.*found 'ga' and None"):
        autotvm.tuner.XGBTuner(task, optimizer="ga")
    with pytest.raises(TuningError, match="diversity_filter_ratio None, found 'sa' and 2"):
        autotvm.tuner.XGBTuner(task, diversity_filter_ratio=2)



def test_xgb_tuner_without_xgboost_fails_when_created(task, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "xgboost", None)
    with pytest.raises(TuningError, match="xgboost package"):
        autotvm.tuner.XGBTuner(task)
