"""The task scheduler overlaps the cost model's feature extraction with the builds."""
import threading

import pytest

from mlcbench import meta_schedule as ms
from mlcbench.ir import TuningError
from mlcbench.ir.structural import structural_hash
from mlcbench.meta_schedule.builder import Builder, BuilderInput, BuilderResult
from mlcbench.meta_schedule.feature_extractor import PerStoreFeature
from mlcbench.meta_schedule.task_scheduler import build_while
from mlcbench.meta_schedule.xgb_model import XGBModel
from mlcbench.target import Target
from helpers.tuning_testing import FakeMeasurer, matmul_module

TARGET = "llvm --num-cores=2"


class _ThreadNoting(Builder):
    """Builds nothing; notes the thread it ran in, or fails."""

    def __init__(self, fail: bool = False):
        self.fail, self.threads = fail, []

    def build(self, build_inputs):
        self.threads.append(threading.current_thread())
        if self.fail:
            raise TuningError("the builder failed")
        return [BuilderResult(f"lib{n}.so", None) for n, _ in enumerate(build_inputs)]


def _inputs(count: int = 3):
    return [BuilderInput(matmul_module(8), Target(TARGET)) for _ in range(count)]


def test_build_while_works_in_another_thread_and_returns_the_same_results():
    alone, overlapped = _ThreadNoting(), _ThreadNoting()
    worked = []
    expected = alone.build(_inputs())
    built = build_while(overlapped, _inputs(), lambda: worked.append(threading.current_thread()))
    assert built == expected
    # the builder (whose worker processes end with the thread that started them) stays
    assert overlapped.threads == [threading.current_thread()]
    assert len(worked) == 1 and worked[0] is not threading.current_thread()


def test_an_error_of_the_work_does_not_lose_the_builds():
    def work():
        raise TuningError("features failed")
    assert len(build_while(_ThreadNoting(), _inputs(), work)) == 3


def test_an_error_of_the_builder_is_raised_after_the_work():
    worked = []
    with pytest.raises(TuningError, match="the builder failed"):
        build_while(_ThreadNoting(fail=True), _inputs(), lambda: worked.append(1))
    assert worked == [1]


class _CountingExtractor(PerStoreFeature):
    def __init__(self):
        super().__init__()
        self.extracted, self.keys = 0, []

    def _extract(self, mod):
        self.extracted += 1
        self.keys.append(structural_hash(mod))
        return super()._extract(mod)


class _Unprepared(XGBModel):
    def prepare(self, context, candidates) -> None:
        pass


def test_tuning_measures_the_same_programs_with_and_without_preparing(tmp_path):
    """Features extracted while building are those the update uses (not extracted
    again), and the search is the same without that early start."""
    runs = []
    for model_class in (XGBModel, _Unprepared):
        measurer, extractor = FakeMeasurer(), _CountingExtractor()
        model = model_class(extractor=extractor, num_warmup_samples=4, seed=0)
        strategy = ms.EvolutionarySearch(population_size=6, init_min_unmeasured=4,
                                         genetic_num_iters=1)
        ms.tune_tir(matmul_module(16), TARGET, str(tmp_path / model_class.__name__), 4,
                    num_trials_per_iter=2, cost_model=model, strategy=strategy, seed=0,
                    builder=measurer.builder, runner=measurer.runner, progress_bar=False)
        assert len(measurer.measured) == model.data_size == 4
        # once per measured program: prepared while building, read by the update
        assert extractor.extracted == len(set(extractor.keys)) == 4
        runs.append((measurer.measured, [f.tolist() for f in model.features]))
    assert runs[0] == runs[1]


class _DuckModel:
    """A cost model that is no CostModel and has no ``prepare``."""

    scores_are_random = True

    def __init__(self):
        self.updates = 0

    def update(self, context, candidates, results):
        self.updates += len(candidates)

    def predict(self, context, candidates):
        return [0.5] * len(candidates)


def test_a_cost_model_without_prepare_is_updated_as_before(tmp_path):
    measurer, model = FakeMeasurer(), _DuckModel()
    ms.tune_tir(matmul_module(16), TARGET, str(tmp_path), 2, num_trials_per_iter=2,
                strategy="replay-trace", cost_model=model, seed=0,
                builder=measurer.builder, runner=measurer.runner, progress_bar=False)
    assert model.updates == len(measurer.measured) == 2
