"""GATuner: breeds unmeasured configs and finds the fake optimum."""
from mlcbench import autotvm


def test_ga_tuner_finds_good_configs_without_repeats(task, fake_option):
    tuner = autotvm.tuner.GATuner(task, pop_size=12, elite_num=2, mutation_prob=0.2, seed=0)
    indices = []
    tuner.tune(n_trial=48, measure_option=fake_option,
               callbacks=[lambda t, inputs, results: indices.extend(i.config.index
                                                                      for i in inputs)])
    assert len(indices) == len(set(indices)) == 48
    best = tuner.best_config
    assert best["vec"].val == 1 and best["tile_x"].size[-1] in (4, 8, 16)
