"""Building and measuring on Dask workers (and any concurrent.futures.Executor): a
LocalCluster of two worker processes on loopback, each with the resource measure=1."""
import concurrent.futures
import json
import operator
import time

import pytest

distributed = pytest.importorskip("distributed", reason="the [dask] extra is not installed")

from mlcbench import IRModule, autotvm, te, tir  # noqa: E402
from mlcbench.autotvm.measure import (MeasureErrorNo, MeasureInput,  # noqa: E402
                                      create_measure_batch)
from mlcbench import meta_schedule as ms  # noqa: E402
from mlcbench.ir import TuningError  # noqa: E402
from mlcbench.meta_schedule.arg_info import ArgInfo, TensorInfo  # noqa: E402
from mlcbench.meta_schedule.builder import BuilderInput, ExecutorBuilder  # noqa: E402
from mlcbench.meta_schedule.runner import (DaskRunner, EvaluatorConfig,  # noqa: E402
                                           ExecutorRunner, RunnerInput)
from mlcbench.target import Target  # noqa: E402
from helpers.tuning_testing import (aborting_matmul, fill_kernel, matmul_module,  # noqa: E402
                            set_worker_cpu, stochastic_schedule_mm)

FAST = EvaluatorConfig(number=2, repeat=2, min_repeat_ms=0)
TARGET = "llvm --num-cores=1"


def _cluster_client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  resources={"measure": 1}, dashboard_address=":0",
                                  host="127.0.0.1") as cluster:
        with distributed.Client(cluster) as client:
            yield client


client = pytest.fixture(scope="module")(_cluster_client)
# A cluster of its own for the test that kills workers: Dask's nanny does not restart a
# worker that dies while it is still starting, so the other tests' cluster is spared.
killable_client = pytest.fixture(scope="function")(_cluster_client)


def _tune(tmp_path, name, builder, runner, space=stochastic_schedule_mm, trials=4,
          strategy="replay-trace"):
    ms.tune_tir(matmul_module(32), TARGET, str(tmp_path / name), max_trials_global=trials,
                num_trials_per_iter=trials, space=space, strategy=strategy,
                cost_model="random", seed=0, builder=builder, runner=runner,
                progress_bar=False, callbacks=[_ROUNDS.append])
    return ms.JSONDatabase(work_dir=str(tmp_path / name)).get_all_tuning_records()


_ROUNDS = []


def _kinds(record) -> list:
    return [inst.kind for inst in record.trace.insts]


def test_the_cluster_gives_records_of_the_same_kind_as_local_tuning(client, tmp_path):
    local = _tune(tmp_path, "local", "local", ms.LocalRunner(evaluator_config=FAST))
    _ROUNDS.clear()
    remote = _tune(tmp_path, "dask", client, DaskRunner(client, evaluator_config=FAST))
    assert len(local) == len(remote) == 4
    # the same seed samples the same programs; each is measured on a cluster worker
    assert sorted(r.trace_key for r in local) == sorted(r.trace_key for r in remote)
    for a, b in zip(local, remote):
        assert a.is_valid and b.is_valid and a.target == b.target
        assert [i.as_json() for i in a.args_info] == [i.as_json() for i in b.args_info]
        assert _kinds(a) == _kinds(b)
    workers = set(client.scheduler_info()["workers"])
    assert {c.worker for r in _ROUNDS for c in r.candidates} <= workers


_SAMPLED = []


def _second_one_aborts(sch):
    """The stochastic matmul, except the second program sampled, which aborts its process."""
    _SAMPLED.append(None)
    if len(_SAMPLED) == 2:
        return tir.Schedule(IRModule({"main": aborting_matmul}))
    return stochastic_schedule_mm(sch)


def test_a_worker_killed_mid_run_is_recovered_from(killable_client, tmp_path):
    client = killable_client
    # not isolated: the candidate that aborts takes its Dask worker down with it, twice
    runner = DaskRunner(client, evaluator_config=FAST, isolate=False, check_correctness=False)
    _SAMPLED.clear()
    records = _tune(tmp_path, "killed", client, runner, space=_second_one_aborts, trials=6,
                    strategy="replay-func")
    lost = [r for r in records if not r.is_valid]
    # only the aborting program: no other call was queued on the workers it killed
    assert len(records) == 6 and len(lost) == 1
    assert "sample_perfect_tile" not in _kinds(lost[0])
    assert runner.pool.lost >= len(lost)                # each was submitted again once
    for record in lost:
        assert "the worker died while running it, 2 times" in record.error_msg
        first, second = record.error_msg.split("(")[1].split(")")[0].split(" and then ")
        assert first != second
    # every line of the file is a record, and no program was committed twice
    with open(tmp_path / "killed" / "database_tuning_record.json") as lines:
        assert len([json.loads(line) for line in lines]) == 6
    assert len({r.trace_key for r in records}) == 6


def _allowed_failures(dask_scheduler=None):
    return dask_scheduler.allowed_failures


def _allowed_failures_seen_by_a_call():
    return distributed.get_client().run_on_scheduler(_allowed_failures)


def test_the_schedulers_resubmission_is_off_only_while_a_batch_runs(client):
    before = client.run_on_scheduler(_allowed_failures)
    pool = ms.runner.ExecutorPool(client, isolate=False)
    (outcome,) = pool.map(_allowed_failures_seen_by_a_call, [()])
    assert outcome.ok, outcome.message
    assert before > 0 and outcome.value == 0
    assert client.run_on_scheduler(_allowed_failures) == before


def test_a_call_no_worker_can_take_comes_back_as_a_timeout_not_a_hang(client):
    # no worker has the resource "gpu": the scheduler keeps the call waiting for one
    pool = ms.runner.ExecutorPool(client, resources={"gpu": 1}, isolate=False,
                                  patience_sec=2)
    (outcome,) = pool.map(operator.add, [(1, 2)])
    assert outcome.status == "timeout" and "patience_sec" in outcome.message
    # cancelled: the scheduler lets go of the waiting call
    deadline = time.monotonic() + 10
    while client.run_on_scheduler(_tasks_waiting_for_a_worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert client.run_on_scheduler(_tasks_waiting_for_a_worker) == 0


def _tasks_waiting_for_a_worker(dask_scheduler=None):
    return len(dask_scheduler.unrunnable)


def _fill_input(builder) -> RunnerInput:
    (built,) = builder.build([BuilderInput(IRModule({"main": fill_kernel}), Target(TARGET))])
    return RunnerInput(built.artifact_path, "llvm", [TensorInfo("float32", [4])])


def test_workers_with_different_cpus_are_refused_unless_allowed(client):
    builder = ExecutorBuilder(client)
    (worker, *_) = client.scheduler_info()["workers"]
    client.run(set_worker_cpu, "Imaginary CPU 9000", workers=[worker])
    try:
        runner = DaskRunner(client, evaluator_config=FAST)
        with pytest.raises(TuningError, match=r"(?s)'Imaginary CPU 9000'.*allow_mixed_cpus=True"):
            runner.run([_fill_input(builder)])
        mixed = DaskRunner(client, evaluator_config=FAST, allow_mixed_cpus=True)
        results = [f.result() for f in mixed.run([_fill_input(builder) for _ in range(4)])]
    finally:
        client.run(set_worker_cpu, None)
    assert all(r.error_msg is None and len(r.run_secs) == 2 for r in results)
    real_cpu = ms.executor_pool.worker_identity()[1]
    assert {r.cpu for r in results} <= {real_cpu, "Imaginary CPU 9000"}


def test_a_cluster_without_the_measure_resource_is_refused():
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=1,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as client:
            runner = DaskRunner(client)
            with pytest.raises(TuningError, match="--resources measure=1"):
                runner.run([RunnerInput("unused.so", "llvm", [])])


def test_any_executor_builds_and_measures():
    mod = stochastic_schedule_mm(tir.Schedule(matmul_module(32), seed=1)).mod
    with concurrent.futures.ThreadPoolExecutor(2) as executor:
        builder = ExecutorBuilder(executor, timeout_sec=60)
        built = builder.build([BuilderInput(mod, Target(TARGET)),
                               BuilderInput(IRModule({"main": aborting_matmul}),
                                            Target(TARGET))])
        runner = ExecutorRunner(executor, evaluator_config=FAST, timeout_sec=60)
        good, bad = [f.result() for f in runner.run(
            [RunnerInput(b.artifact_path, "llvm", ArgInfo.from_entry_func(mod))
             for b in built])]
    assert good.error_msg is None and len(good.run_secs) == 2 and good.cpu and good.host
    # isolated in a process of its own: the abort costs that process, not the executor
    assert bad.run_secs is None and "SIGABRT" in bad.error_msg


@autotvm.template("test/risky_add_on_dask")
def risky_add(n):
    """knob "mode": 0 fine, 1 refused by the schedule, 2 computes the wrong thing."""
    A = te.placeholder((n,), name="A")
    cfg = autotvm.get_config()
    cfg.define_knob("mode", [0, 1, 2])
    B = te.compute((n,), lambda i: A[i] + (2.0 if cfg["mode"].val == 2 else 1.0), name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    if cfg["mode"].val == 1:
        sch.get_block("nothing")
    return sch, [A, B]


def test_autotvm_measures_on_the_cluster(client):
    task = autotvm.task.create("test/risky_add_on_dask", args=(64,), target="llvm")
    option = autotvm.measure_option(builder=client, runner=autotvm.LocalRunner(
        number=1, repeat=2, check_correctness=True, executor=client))
    measure = create_measure_batch(task, option)
    inputs = [MeasureInput("llvm", task, task.config_space.get(i)) for i in (1, 2, 0)]
    refused, wrong, fine = measure(inputs)
    assert refused.error_no == MeasureErrorNo.INSTANTIATION_ERROR
    assert wrong.error_no == MeasureErrorNo.WRONG_ANSWER
    assert fine.error_no == 0 and len(fine.costs) == 2 and fine.all_cost > 0
