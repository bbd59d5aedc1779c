"""Cost models: XGBModel learns a ranking online; save/load; RandomModel."""
from types import SimpleNamespace

import numpy as np
import pytest

from mlcbench import te
from mlcbench.ir.errors import TuningError
from mlcbench.meta_schedule import metrics
from mlcbench.meta_schedule.cost_model import CostModel, RandomModel, mean_run_secs
from mlcbench.meta_schedule.feature_extractor import FeatureExtractor
from mlcbench.meta_schedule.xgb_model import XGBConfig, XGBModel
from mlcbench.tir import Schedule

N_FEATURES = 6
WEIGHTS = np.array([1.0, -0.6, 0.4, 0.0, 0.2, 0.0])


class LookupExtractor(FeatureExtractor):
    """Candidates are keys of a table of ready-made feature matrices."""

    feature_vector_length = N_FEATURES

    def __init__(self, table):
        self.table = table

    def extract_from(self, context, candidates):
        return [self.table[c] for c in candidates]


def synthetic_task(n, seed):
    """Candidates with 1-4 store rows each; run time falls as the rows' scores rise."""
    rng = np.random.default_rng(seed)
    table, secs = {}, []
    for c in range(n):
        rows = rng.uniform(0, 1, size=(rng.integers(1, 5), N_FEATURES)).astype(np.float32)
        table[(seed, c)] = rows
        secs.append(float(np.exp(-(rows @ WEIGHTS).sum())) * 1e-3)
    return table, [(seed, c) for c in range(n)], secs


def results_for(secs, failed=()):
    return [SimpleNamespace(run_secs=None if i in failed else [s, s], error_msg="boom"
                            if i in failed else None) for i, s in enumerate(secs)]


def model_for(table, **options):
    return XGBModel(extractor=LookupExtractor(table), config=XGBConfig(nthread=1),
                    num_boost_round=60, num_warmup_samples=40, **options)


@pytest.mark.parametrize("options", [dict(objective="rank"), dict(objective="reg"),
                                     dict(aggregate="candidate")])
def test_xgb_model_learns_a_synthetic_ranking(options):
    table, train, train_secs = synthetic_task(240, seed=1)
    test_table, test, test_secs = synthetic_task(120, seed=2)
    model = model_for({**table, **test_table}, **options)
    for start in range(0, 240, 60):                       # online: four rounds
        batch = slice(start, start + 60)
        model.update(None, train[batch], results_for(train_secs[batch]))
    assert model.booster is not None and not model.scores_are_random
    pred = model.predict(None, test)
    assert metrics.pairwise_accuracy(pred, 1 / np.array(test_secs)) > 0.8


def test_warm_up_predicts_at_random_and_reports_untrained():
    table, cands, secs = synthetic_task(30, seed=3)
    model = model_for(table)
    first = model.predict(None, cands)
    assert first.shape == (30,) and model.booster is None and model.scores_are_random
    model.update(None, cands, results_for(secs))
    assert model.booster is None and model.data_size == 30 and model.scores_are_random
    assert model.last_update.trained is False
    assert not np.allclose(model.predict(None, cands), first)   # fresh random draws


def test_last_update_compares_predictions_with_measurements():
    table, cands, secs = synthetic_task(120, seed=4)
    model = model_for(table)
    model.update(None, cands[:60], results_for(secs[:60]))
    model.update(None, cands[60:], results_for(secs[60:]))
    report = model.last_update
    assert report.trained and report.predicted.shape == (60,)
    np.testing.assert_allclose(report.measured, 1 / np.array(secs[60:]))
    assert report.pairwise_accuracy == metrics.pairwise_accuracy(report.predicted,
                                                                 report.measured)
    assert report.pairwise_accuracy > 0.7


def test_failed_runs_get_target_zero_and_rank_low():
    table, cands, secs = synthetic_task(80, seed=5)
    failed = set(range(0, 80, 4))
    model = model_for(table)
    model.update(None, cands, results_for(secs, failed))
    targets = model.targets()
    assert all(targets[i] == 0 for i in failed)
    assert targets.max() == 1.0 and np.all(targets[[i for i in range(80) if i not in failed]] > 0)
    assert mean_run_secs(results_for(secs, failed)[0]) is None
    assert mean_run_secs(SimpleNamespace(run_secs=[1.0, 3.0], error_msg=None)) == 2.0


def test_save_load_round_trip(tmp_path):
    table, cands, secs = synthetic_task(60, seed=6)
    model = model_for(table)
    model.update(None, cands, results_for(secs))
    path = str(tmp_path / "model.bin")
    model.save(path)
    restored = model_for(table)
    restored.load(path)
    np.testing.assert_allclose(restored.predict(None, cands), model.predict(None, cands))
    assert restored.costs == model.costs and restored.groups == model.groups
    for a, b in zip(restored.features, model.features):
        np.testing.assert_array_equal(a, b)
    wider = XGBModel(extractor=SimpleNamespace(feature_vector_length=N_FEATURES + 1))
    with pytest.raises(TuningError, match="features of length 6"):
        wider.load(path)


def test_tasks_are_normalized_apart():
    model = XGBModel(extractor=LookupExtractor({}), num_warmup_samples=10 ** 6)
    rows = [np.zeros((1, N_FEATURES), np.float32)] * 2
    model.add_records("fast task", rows, [1e-3, 2e-3])
    model.add_records("slow task", rows, [1.0, 4.0])
    np.testing.assert_allclose(model.targets(), [1.0, 0.5, 1.0, 0.25])


def test_with_real_features_of_matmul_schedules():
    A, B = te.placeholder((16, 16), name="A"), te.placeholder((16, 16), name="B")
    k = te.reduce_axis((0, 16), name="k")
    C = te.compute((16, 16), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    func = te.create_prim_func([A, B, C])
    schedules = []
    for tile in (1, 2, 4, 8, 16, 2, 4, 8):
        sch = Schedule(func)
        i, j, kk = sch.get_loops(sch.get_block("C"))
        _, inner = sch.split(j, [None, tile])
        if tile > 4:
            sch.vectorize(inner)
        schedules.append(sch)
    model = XGBModel(config=XGBConfig(nthread=1), num_warmup_samples=4, num_boost_round=10)
    model.update(SimpleNamespace(mod=func), schedules, results_for([1.0 / t for t in
                                                                   (1, 2, 4, 8, 16, 2, 4, 8)]))
    scores = model.predict(SimpleNamespace(mod=func), schedules)
    assert scores.shape == (8,) and np.all(np.isfinite(scores))


def test_random_model_is_seeded_and_saves_its_state(tmp_path):
    cands = list(range(20))
    a, b = RandomModel(seed=7), RandomModel(seed=7)
    first = a.predict(None, cands)
    np.testing.assert_array_equal(first, b.predict(None, cands))
    assert np.all((first >= 0) & (first < 100)) and first.shape == (20,)
    path = str(tmp_path / "random.json")
    a.save(path)
    c = RandomModel(path=path)
    np.testing.assert_array_equal(c.predict(None, cands), a.predict(None, cands))
    a.update(None, cands[:3], results_for([1.0, 2.0, 3.0]))
    assert a.last_update.trained is False and a.last_update.measured.shape == (3,)


def test_create_and_the_base_class():
    assert isinstance(CostModel.create("random", seed=1), RandomModel)
    assert isinstance(CostModel.create("xgb"), XGBModel)
    with pytest.raises(TuningError, match="unknown kind"):
        CostModel.create("gbm")
    with pytest.raises(TuningError, match="objective must be"):
        XGBModel(objective="listwise")
    with pytest.raises(NotImplementedError):
        CostModel().predict(None, [])
