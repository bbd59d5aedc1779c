import json

import pytest
from hypothesis import given, strategies as st

from mlcbench import build, tir
from mlcbench.ir import TuningError
from mlcbench.meta_schedule import TensorInfo, TuningRecord, Workload
from mlcbench.meta_schedule.adaptive_timing import (FIRST_CALL, FULL, PROBE, STOP,
                                                    AdaptiveTiming, Measurement,
                                                    measure_candidate, next_step,
                                                    time_limit)
from mlcbench.meta_schedule.builder import default_export
from mlcbench.meta_schedule.runner import EvaluatorConfig, LocalRunner, RunnerInput
from mlcbench.script import tir as T
from helpers.tuning_testing import matmul_module, stochastic_schedule_mm

POLICY = AdaptiveTiming(probe_ms=10, stop_factor=2.0, contender_factor=1.25)
TIMING = (3, 2, 0.0, False)          # number, repeat, min_repeat_ms, cache flush


@pytest.mark.parametrize("stage, seconds, window_ms, best, step", [
    (FIRST_CALL, 0.030, 30, None, FULL),      # nothing to compare with: measure in full
    (FIRST_CALL, 0.030, 30, 0.010, STOP),     # a 30 ms call is 3x the best
    (FIRST_CALL, 0.019, 19, 0.010, PROBE),    # 1.9x: not clearly slower
    (FIRST_CALL, 0.003, 3, 0.001, PROBE),     # 3x, but one 3 ms call is too short to judge
    (PROBE, 0.0124, 10, 0.010, FULL),         # within 1.25x: a contender
    (PROBE, 0.0080, 10, 0.010, FULL),         # faster than the best
    (PROBE, 0.0130, 10, 0.010, STOP),         # 1.3x: its probe stands
])
def test_next_step_on_synthetic_timings(stage, seconds, window_ms, best, step):
    assert next_step(stage, seconds, window_ms, best, POLICY) == step


class FakeCandidate:
    """A candidate whose calls take ``first`` then ``warm`` seconds, on a fake clock."""

    def __init__(self, first: float, warm: float, wrong: bool = False):
        self.first, self.warm, self.wrong = first, warm, wrong
        self.steps = []

    def call(self):
        self.steps.append("call")

    def check(self):
        return "wrong answer: argument 2 differs" if self.wrong else None

    def measure(self, number, repeat, min_repeat_ms, preproc):
        self.steps.append((number, repeat, min_repeat_ms))
        calls = max(number, int(min_repeat_ms / 1e3 / self.warm) + 1)
        return [self.warm] * repeat, calls * repeat

    def run(self, best):
        clock = iter([0.0, self.first])
        return measure_candidate(self.call, self.check, TIMING, best, POLICY, self.measure,
                                 clock=lambda: next(clock))


def test_clearly_slower_first_call_stops_there():
    candidate = FakeCandidate(first=0.5, warm=0.5)
    run_secs, how = candidate.run(best=0.01)
    assert run_secs == [0.5] and how == Measurement(FIRST_CALL, 1, 0.01)
    assert candidate.steps == ["call"]


def test_slower_candidate_stops_after_its_probe():
    candidate = FakeCandidate(first=0.002, warm=0.0015)
    run_secs, how = candidate.run(best=0.001)
    assert run_secs == [0.0015] and how == Measurement(PROBE, 7, 0.001)
    assert candidate.steps == ["call", (1, 1, 10.0)]


def test_contender_gets_probe_then_full_measurement():
    candidate = FakeCandidate(first=0.002, warm=0.0011)
    run_secs, how = candidate.run(best=0.001)
    assert run_secs == [0.0011, 0.0011] and how.method == FULL and how.best_secs == 0.001
    assert candidate.steps == ["call", (1, 1, 10.0), (3, 2, 0.0)]


def test_first_candidate_of_a_workload_is_measured_in_full():
    candidate = FakeCandidate(first=0.5, warm=0.5)
    run_secs, how = candidate.run(best=None)
    assert run_secs == [0.5, 0.5] and how == Measurement(FULL, 6, None)
    assert candidate.steps == ["call", (3, 2, 0.0)]


def test_wrong_answer_is_never_timed():
    candidate = FakeCandidate(first=0.001, warm=0.001, wrong=True)
    assert candidate.run(best=0.01) == (
        None, "wrong answer: argument 2 differs")
    assert candidate.steps == ["call"]


@given(first=st.floats(1e-6, 10.0), warm=st.floats(1e-6, 10.0), best=st.floats(1e-6, 10.0))
def test_only_candidates_clearly_slower_than_the_best_stop_early(first, warm, best):
    run_secs, how = FakeCandidate(first, warm).run(best)
    if how.method != FULL:
        assert min(run_secs) > POLICY.contender_factor * best
    if warm <= best:                        # a possible new best is always measured in full
        assert how.method == FULL or first > POLICY.stop_factor * best


@pytest.mark.parametrize("best, timeout, limit", [
    (None, 30.0, 30.0),          # nothing to compare with: the runner's limit
    (0.010, 30.0, 2.0),          # 20x 10 ms is 0.2 s: at least 2 s
    (0.500, 30.0, 10.0),         # 20x the best
    (5.000, 30.0, 30.0),         # never beyond the runner's limit
    (0.500, None, 10.0),
])
def test_time_limit_follows_the_best(best, timeout, limit):
    assert time_limit(best, POLICY, timeout) == limit


@pytest.mark.parametrize("fields, message", [
    (dict(probe_ms=0), "probe_ms must be > 0, found 0"),
    (dict(stop_factor=1.1, contender_factor=1.2), "stop_factor >= contender_factor >= 1"),
    (dict(contender_factor=0.9), "found stop_factor=2.0, contender_factor=0.9"),
    (dict(time_limit_factor=1.5), "time_limit_factor >= stop_factor"),
    (dict(min_time_limit_sec=0), "found time_limit_factor=20.0, min_time_limit_sec=0"),
])
def test_adaptive_timing_is_checked(fields, message):
    with pytest.raises(TuningError, match=message):
        AdaptiveTiming(**fields)


def test_record_keeps_how_it_was_measured():
    workload = Workload(matmul_module(16))
    trace = stochastic_schedule_mm(tir.Schedule(workload.mod, seed=0)).trace
    record = TuningRecord(trace, workload, [0.25], "llvm", None,
                          measurement=Measurement(PROBE, 4, 0.1))
    again = TuningRecord.from_json(json.loads(json.dumps(record.as_json())), workload)
    assert again.measurement == Measurement(PROBE, 4, 0.1) and again.error_msg is None
    assert TuningRecord.from_json(record.as_json()[:4], workload).measurement is None


@pytest.mark.parametrize("bad", [{"method": "guess", "calls": 1}, {"method": "full"},
                                 {"method": "full", "calls": 2, "best_secs": "fast"}, [1]])
def test_malformed_measurement_names_the_field(bad):
    with pytest.raises(TuningError, match="measurement: expected"):
        Measurement.from_json(bad)


def _sleeping_kernel(microseconds: int) -> str:
    @T.prim_func
    def sleeper(A: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        T.evaluate(T.call_extern("int32", "usleep", microseconds))
    return default_export(build(sleeper, "llvm --num-cores=2"))


def test_runner_remembers_the_best_per_workload_and_stops_slow_candidates():
    args = [TensorInfo("float32", [4])]
    runner = LocalRunner(timeout_sec=10, evaluator_config=EvaluatorConfig(
        number=2, repeat=2, min_repeat_ms=0), adaptive=AdaptiveTiming(
            probe_ms=5, min_time_limit_sec=1.0))
    fast, slow, unkeyed = _sleeping_kernel(100), _sleeping_kernel(40000), _sleeping_kernel(40000)
    hanging = _sleeping_kernel(20_000_000)
    try:
        results = [f.result() for f in runner.run([
            RunnerInput(fast, "llvm", args, workload_key="w"),
            RunnerInput(slow, "llvm", args, workload_key="w"),
            RunnerInput(unkeyed, "llvm", args),
            RunnerInput(hanging, "llvm", args, workload_key="w")])]
    finally:
        runner.shutdown()
    # far slower than the best: stopped at the shorter limit, not the runner's 10 s
    assert results[3].run_secs is None and results[3].error_msg.startswith(
        "run timeout: no result after the time limit of 1 s; the worker was stopped: "
        "20x the best time of this workload")
    assert results[0].measurement.method == FULL and results[0].measurement.best_secs is None
    assert len(results[0].run_secs) == 2
    assert results[1].measurement.method == FIRST_CALL and len(results[1].run_secs) == 1
    assert results[1].measurement.best_secs == runner.best_secs["w"]
    assert results[2].measurement.method == FULL and len(results[2].run_secs) == 2
    assert runner.best_secs["w"] < 0.040 <= results[1].run_secs[0]


def test_tuning_records_say_how_each_candidate_was_measured(tmp_path):
    from mlcbench import meta_schedule as ms
    runner = LocalRunner(evaluator_config=EvaluatorConfig(number=2, repeat=1, min_repeat_ms=1))
    database = ms.tune_tir(mod=matmul_module(64), target="llvm --num-cores=2",
                           max_trials_global=8, num_trials_per_iter=8, work_dir=str(tmp_path),
                           runner=runner, space=ms.space_generator.ScheduleFn(
                               stochastic_schedule_mm),
                           strategy="replay-trace", cost_model="random", seed=1)
    runner.shutdown()
    records = ms.JSONDatabase(work_dir=tmp_path).get_all_tuning_records()
    assert len(records) == 8 and all(r.is_valid for r in records)
    first, *later = [r.measurement for r in records]
    assert first.method == FULL and first.best_secs is None
    # every later candidate was compared with the best measured before it
    best = records[0].mean_run_secs
    for record, how in zip(records[1:], later):
        assert how.best_secs == pytest.approx(best) and how.calls >= 1
        best = min(best, record.mean_run_secs)
