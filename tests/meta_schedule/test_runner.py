import os
import time

import pytest

from mlcbench import build, tir
from mlcbench.ir import TuningError
from mlcbench.meta_schedule.arg_info import ArgInfo, TensorInfo
from mlcbench.meta_schedule.builder import default_export, remove_artifact
from mlcbench.meta_schedule.runner import EvaluatorConfig, LocalRunner, RunnerInput
from mlcbench.meta_schedule.worker_pool import WorkerPool
from mlcbench.script import tir as T
from helpers.tuning_testing import (aborting_kernel, fill_kernel, fill_wrong_kernel, hanging_kernel,
                            matmul_module, segfaulting_kernel, stochastic_schedule_mm)

FAST = EvaluatorConfig(number=2, repeat=3, min_repeat_ms=0)
ARGS_4 = [TensorInfo("float32", [4])]


def _library(func_or_mod) -> str:
    return default_export(build(func_or_mod, "llvm --num-cores=2"))


@pytest.fixture(scope="module")
def runner():
    runner = LocalRunner(timeout_sec=2, evaluator_config=FAST)
    yield runner
    runner.shutdown()


def test_times_every_repeat_and_cleans_up(runner):
    mod = stochastic_schedule_mm(tir.Schedule(matmul_module(32), seed=0)).mod
    path = _library(mod)
    (future,) = runner.run([RunnerInput(path, "llvm", ArgInfo.from_entry_func(mod))])
    assert future.done()
    result = future.result()
    assert result.error_msg is None and len(result.run_secs) == 3
    assert all(0 < s < 0.1 for s in result.run_secs)
    assert not os.path.exists(path)


def test_crashing_and_hanging_candidates_are_errors_and_the_next_one_runs(runner):
    paths = [_library(f) for f in (segfaulting_kernel, fill_kernel, aborting_kernel,
                                   hanging_kernel, fill_kernel)]
    restarts = runner.pool.restarts
    results = [f.result() for f in runner.run([RunnerInput(p, "llvm", ARGS_4) for p in paths])]
    assert "run crash: the worker process died from signal SIGSEGV" in results[0].error_msg
    assert "SIGABRT" in results[2].error_msg
    assert "run timeout: no result after the time limit of 2 s" in results[3].error_msg
    for ok in (results[1], results[4]):
        assert ok.error_msg is None and len(ok.run_secs) == 3
    assert all(r.run_secs is None for r in (results[0], results[2], results[3]))
    assert runner.pool.restarts == restarts + 3


def test_wrong_answer_is_caught_by_the_reference_check(runner):
    reference = _library(fill_kernel)
    inputs = [RunnerInput(_library(f), "llvm", ARGS_4, reference_path=reference)
              for f in (fill_wrong_kernel, fill_kernel)]
    wrong, right = [f.result() for f in runner.run(inputs)]
    assert wrong.run_secs is None
    assert wrong.error_msg.startswith("wrong answer: argument 0 differs from the "
                                      "unscheduled module's at (0,): 2.0 instead of 1.0")
    assert right.error_msg is None
    unchecked = LocalRunner(timeout_sec=5, evaluator_config=FAST, check_correctness=False,
                            cleanup=False)
    path = _library(fill_wrong_kernel)
    (result,) = unchecked.run([RunnerInput(path, "llvm", ARGS_4, reference_path=reference)])
    assert result.result().error_msg is None
    unchecked.shutdown()
    for p in (path, reference):
        remove_artifact(p)


def test_min_repeat_ms_and_cache_flush(runner):
    slow = LocalRunner(timeout_sec=10, evaluator_config=dict(
        number=1, repeat=2, min_repeat_ms=60, enable_cpu_cache_flush=True))
    paths = [_library(fill_kernel) for _ in range(2)]
    slow.run([RunnerInput(paths[0], "llvm", ARGS_4)])          # starts the worker
    start = time.perf_counter()
    (future,) = slow.run([RunnerInput(paths[1], "llvm", ARGS_4)])
    assert time.perf_counter() - start >= 2 * 0.060
    assert len(future.result().run_secs) == 2
    slow.shutdown()


def test_evaluator_config_is_checked():
    with pytest.raises(TuningError, match="number and repeat must be >= 1"):
        EvaluatorConfig(number=0)


def test_missing_artifact_is_an_error(runner):
    (future,) = runner.run([RunnerInput("/nonexistent/candidate.so", "llvm", ARGS_4)])
    assert "no such file" in future.result().error_msg


def test_reference_outputs_are_kept_beside_the_reference_for_the_next_worker(monkeypatch):
    from mlcbench.meta_schedule import runner_worker as runner_module
    reference = _library(fill_kernel)
    monkeypatch.setattr(runner_module, "_REFERENCES", {})
    first = runner_module._reference_outputs(reference, ARGS_4)
    kept = [f for f in os.listdir(os.path.dirname(reference)) if f.endswith(".npz")]
    assert len(kept) == 1 and first[0].tolist() == [1.0] * 4
    # a new worker (empty memory) reads them: the library is not run again
    monkeypatch.setattr(runner_module, "_REFERENCES", {})
    monkeypatch.setattr(runner_module, "_run_reference", lambda *a: pytest.fail("ran again"))
    assert runner_module._reference_outputs(reference, ARGS_4)[0].tolist() == [1.0] * 4
    remove_artifact(reference)
    assert not os.path.exists(os.path.dirname(reference))


@T.prim_func
def slow_fill_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    T.evaluate(T.call_extern("int32", "usleep", 1500000))
    for i in range(4):
        A[i] = T.float32(1)


def test_a_reference_slower_than_the_time_limit_runs_outside_it():
    reference = _library(slow_fill_kernel)
    quick = LocalRunner(timeout_sec=1, evaluator_config=FAST)
    try:
        (future,) = quick.run([RunnerInput(_library(fill_kernel), "llvm", ARGS_4,
                                           reference_path=reference)])
    finally:
        quick.shutdown()
        remove_artifact(reference)
    result = future.result()
    assert result.error_msg is None and len(result.run_secs) == 3


class _NamingPool(WorkerPool):
    """A worker pool that notes the name of every function it runs."""

    def __init__(self, timeout_sec: float):
        super().__init__(1, timeout_sec)
        self.calls = []

    def map(self, fn, arg_tuples, timeout_sec=None):
        self.calls += [fn.__name__] * len(arg_tuples)
        return super().map(fn, arg_tuples, timeout_sec)


@pytest.mark.parametrize("check", [True, False])
def test_a_prefetched_reference_runs_before_the_candidates_it_checks(check):
    reference = _library(slow_fill_kernel)
    pool = _NamingPool(timeout_sec=1)
    prefetching = LocalRunner(evaluator_config=FAST, pool=pool, check_correctness=check)
    try:
        prefetching.prefetch_reference(RunnerInput(None, "llvm", ARGS_4, reference))
        inputs = [RunnerInput(_library(f), "llvm", ARGS_4, reference_path=reference)
                  for f in (fill_wrong_kernel, fill_kernel)]
        wrong, right = [f.result() for f in prefetching.run(inputs)]
        # its outputs lie beside the reference, where the measuring worker read them
        kept = [f for f in os.listdir(os.path.dirname(reference)) if f.endswith(".npz")]
    finally:
        prefetching.shutdown()
        remove_artifact(reference)
    assert right.error_msg is None and len(right.run_secs) == 3
    # the slow reference ran in a worker of its own, outside the candidates' time limit
    assert pool.calls == ["run_in_worker", "run_in_worker"]
    if check:
        assert wrong.error_msg.startswith("wrong answer: argument 0 differs")
        assert len(kept) == 1
    else:
        assert wrong.error_msg is None and kept == []
