"""Tuning for a GPU target on the simulated GPU: candidates built and modeled in the
builder's workers, records in the database, the best program checked against numpy."""
import numpy as np
import pytest

import mlcbench
from mlcbench import meta_schedule as ms
from mlcbench.meta_schedule.gpu_measure import (SimulatedGPURunner, check_best,
                                                export_model)
from mlcbench.meta_schedule.runner import RunnerInput

from helpers.tuning_testing import matmul_module

TARGET = "nvidia/geforce-rtx-2080-ti"


@pytest.fixture(autouse=True)
def _simulated_gpu(monkeypatch):
    monkeypatch.setenv("MLCBENCH_GPU", "sim")


def test_tune_tir_on_the_simulated_gpu_finds_a_correct_program(tmp_path):
    mod = matmul_module(128)
    strategy = ms.search_strategy.EvolutionarySearch(
        population_size=8, init_min_unmeasured=2, genetic_num_iters=1)
    database = ms.tune_tir(mod, TARGET, str(tmp_path), max_trials_global=2,
                           num_trials_per_iter=2, strategy=strategy, seed=0,
                           progress_bar=False)
    records = database.get_all_tuning_records()
    assert len(records) == 2
    valid = [r for r in records if r.is_valid]
    assert valid, [r.error_msg for r in records]
    # modeled times: a 128^3 matmul takes microseconds on the modeled GPU, not seconds
    assert all(1e-7 < r.mean_run_secs < 1e-2 for r in valid)
    sch = ms.tir_integration.compile_tir(database, mod, TARGET)
    assert "threadIdx.x" in sch.mod.script() and 'scope="shared"' in sch.mod.script()
    rt_mod = mlcbench.build(sch.mod, target=TARGET)
    rng = np.random.default_rng(1)
    a, b = rng.random((128, 128), dtype="float32"), rng.random((128, 128), dtype="float32")
    dev = mlcbench.cuda(0)
    args = [mlcbench.nd.array(x, dev) for x in (a, b, np.zeros((128, 128), "float32"))]
    rt_mod["main"](*args)
    np.testing.assert_allclose(args[2].numpy(), a @ b, rtol=1e-4, atol=1e-4)


def test_runner_reports_the_modeled_time_and_a_missing_one(tmp_path):
    path = export_model({"seconds": 2.5e-4, "profile": "..."})
    runner = SimulatedGPURunner(repeat=2)
    (good, missing) = runner.run([RunnerInput(path, "cuda"),
                                  RunnerInput(str(tmp_path / "none.json"), "cuda")])
    assert good.result().run_secs == [2.5e-4, 2.5e-4]
    assert missing.result().run_secs is None and "none.json" in missing.result().error_msg


def _bound_record(mod, database, workload):
    """A record of a plain GPU schedule of ``mod``: rows on blocks, columns on threads."""
    sch = mlcbench.tir.Schedule(mod)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    database.commit_tuning_record(ms.database.TuningRecord(
        sch.trace, workload, [1e-6], mlcbench.target.Target(TARGET)))


def test_check_best_keeps_a_correct_program_and_fails_a_wrong_one(tmp_path, monkeypatch):
    mod = matmul_module(32)
    database = ms.database.JSONDatabase(work_dir=str(tmp_path))
    workload = database.commit_workload(mod)
    _bound_record(mod, database, workload)
    assert check_best(database, mod, TARGET) is not None
    # the same program judged against other expected outputs is a wrong answer
    from mlcbench.meta_schedule import gpu_measure
    monkeypatch.setattr(gpu_measure, "_reference_outputs",
                        lambda m: [np.full((32, 32), 7.0, "float32")] * 3)
    assert check_best(database, mod, TARGET) is None
    (record,) = ms.database.latest_per_trace(database.get_records(workload))
    assert not record.is_valid and "wrong answer" in record.error_msg
    assert ms.tir_integration.compile_tir(database, mod, TARGET) is None
