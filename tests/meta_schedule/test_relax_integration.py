import numpy as np
import pytest

import mlcbench
from mlcbench import datasets, relax, tir
from mlcbench.driver.models import export_digits_model
from mlcbench.ir.errors import TuningError
from mlcbench.ir.transform import PassContext
from mlcbench.meta_schedule import MemoryDatabase, TuningRecord
from mlcbench.meta_schedule import relax_integration as ri
from mlcbench.relax.vm_build import SCHEDULE_LOOKUP_CONFIG
from mlcbench.script import ir as I
from mlcbench.script import relax as R
from helpers.tuning_testing import FakeMeasurer

TARGET = "llvm --num-cores=2"
# weights as arguments: each matmul reads its weight transposed in place (FuseTransposeMatmul)
MLP_KERNELS = {"fused_matmul_nt1_add1": 1, "fused_matmul_nt_add_relu": 1}
# weights bound: their transposes are folded at build time, the matmuls read them as B[k, j]
BOUND_MLP_KERNELS = {"fused_matmul1_add1": 1, "fused_matmul_add_relu": 1}
PARAM_NAMES = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]


@I.ir_module
class TwoMatmuls:
    @R.function
    def main(x: R.Tensor((4, 8), "float32"), y: R.Tensor((4, 8), "float32"),
             w: R.Tensor((8, 16), "float32")):
        with R.dataflow():
            a = R.matmul(x, w)
            b = R.matmul(y, w)
            c = R.concat((a, b), axis=0)
            R.output(c)
        return c


@pytest.fixture(scope="module")
def mlp():
    return export_digits_model("mlp", 1)


def _run_mlp(ex, params, x):
    vm = relax.VirtualMachine(ex, mlcbench.cpu())
    return vm["forward"](mlcbench.nd.array(x), *params).numpy()


def _expected(x):
    return datasets.mlp_forward(x, datasets.load_mlp_params())


def _input(seed=0):
    return np.random.default_rng(seed).random((1, 64), "float32")


def test_extract_tasks_of_the_mlp_gives_its_four_kernels_once_each(mlp):
    mod, _ = mlp
    tasks = ri.extract_tasks(mod, TARGET)
    assert {t.task_name: t.weight for t in tasks} == MLP_KERNELS
    for task in tasks:
        assert [gv.name_hint for gv in task.mod.get_global_vars()] == ["main"]
        assert task.mod["main"].attrs["global_symbol"] == "main"
        assert task.dispatched == (task.mod,)
        assert str(task.target) == str(mlcbench.target.Target(TARGET))


def test_extract_tasks_binds_params_by_name_and_folds_the_weight_transposes(mlp):
    """Bound weights are constants: their transposes are computed at build time, so
    only the two fused kernels are left to tune."""
    mod, params = mlp
    tasks = ri.extract_tasks(mod, TARGET, dict(zip(PARAM_NAMES, params)))
    assert {t.task_name: t.weight for t in tasks} == BOUND_MLP_KERNELS
    with pytest.raises(TuningError, match="no Relax function"):
        ri.extract_tasks(mod, TARGET, {"fc3.weight": params[0]})


def test_equal_kernels_are_one_task_weighted_by_their_calls():
    tasks = ri.extract_tasks(TwoMatmuls, TARGET)
    assert {t.task_name: t.weight for t in tasks} == {"matmul": 2, "concatenate": 1}


def test_tune_relax_then_compile_relax_matches_numpy(mlp):
    mod, params = mlp
    measurer = FakeMeasurer()
    database = ri.tune_relax(mod, None, TARGET, None, max_trials_global=12,
                             num_trials_per_iter=3, builder=measurer.builder,
                             runner=measurer.runner, database="memory",
                             strategy="replay-trace", cost_model="random", seed=1,
                             task_scheduler="round-robin", progress_bar=False)
    assert len(database) == 12
    for task in ri.extract_tasks(mod, TARGET):
        assert database.query_tuning_record(task.mod, TARGET) is not None, task.task_name
    x = _input()
    ex = ri.compile_relax(database, mod, TARGET)
    np.testing.assert_allclose(_run_mlp(ex, params, x), _expected(x), rtol=1e-4, atol=1e-5)


def _database_for_one_kernel(mod, kernel: str):
    """A database whose only record is a parallel split of ``kernel``'s matmul."""
    (task,) = [t for t in ri.extract_tasks(mod, TARGET) if t.task_name == kernel]
    sch = tir.Schedule(task.mod)
    _, j, _ = sch.get_loops(sch.get_block("T_matmul_NT"))
    outer, _ = sch.split(j, factors=[None, 16])
    sch.parallel(outer)
    database = MemoryDatabase()
    workload = database.commit_workload(task.mod)
    database.commit_tuning_record(TuningRecord(sch.trace, workload, [1e-6], TARGET))
    return database, sch


def test_kernels_without_a_record_get_the_default_schedule(mlp):
    mod, params = mlp
    database, sch = _database_for_one_kernel(mod, "fused_matmul_nt_add_relu")
    lookup, found = ri.schedule_lookup(database), {}

    def spy(func, name, target):
        found[name] = lookup(func, name, target)
        return found[name]

    with PassContext(config={SCHEDULE_LOOKUP_CONFIG: spy}):
        ex = relax.build(mod, TARGET)
    assert sorted(found) == sorted(MLP_KERNELS)
    assert [name for name, s in found.items() if s is not None] == ["fused_matmul_nt_add_relu"]
    mlcbench.ir.assert_structural_equal(found["fused_matmul_nt_add_relu"].mod, sch.mod)
    x = _input(1)
    np.testing.assert_allclose(_run_mlp(ex, params, x), _expected(x), rtol=1e-4, atol=1e-5)
    ex = ri.compile_relax(database, mod, TARGET)
    np.testing.assert_allclose(_run_mlp(ex, params, x), _expected(x), rtol=1e-4, atol=1e-5)


def test_compile_relax_with_bound_params_and_an_empty_database(mlp):
    mod, params = mlp
    ex = ri.compile_relax(MemoryDatabase(), mod, TARGET, dict(zip(PARAM_NAMES, params)))
    x = _input(2)
    out = relax.VirtualMachine(ex, mlcbench.cpu())["forward"](mlcbench.nd.array(x)).numpy()
    np.testing.assert_allclose(out, _expected(x), rtol=1e-4, atol=1e-5)


def test_tune_relax_measures_real_kernels_and_the_result_runs():
    from mlcbench.meta_schedule.runner import EvaluatorConfig, LocalRunner
    runner = LocalRunner(evaluator_config=EvaluatorConfig(number=3, repeat=1, min_repeat_ms=0))
    try:
        database = ri.tune_relax(TwoMatmuls, None, TARGET, None, max_trials_global=4,
                                 num_trials_per_iter=2, runner=runner, database="memory",
                                 strategy="replay-trace", cost_model="random", seed=0,
                                 progress_bar=False)
    finally:
        runner.shutdown()
    records = database.get_all_tuning_records()
    assert len(records) == 4 and all(r.is_valid for r in records)
    rng = np.random.default_rng(3)
    x, y, w = (rng.random(s, "float32") for s in [(4, 8), (4, 8), (8, 16)])
    ex = ri.compile_relax(database, TwoMatmuls, TARGET)
    out = relax.VirtualMachine(ex, mlcbench.cpu())["main"](
        *(mlcbench.nd.array(a) for a in (x, y, w))).numpy()
    np.testing.assert_allclose(out, np.concatenate([x @ w, y @ w]), rtol=1e-5)


def test_records_of_a_kernel_with_dotted_parameter_names_replay_from_disk(tmp_path):
    from mlcbench.ir import structural_hash
    from mlcbench.meta_schedule import JSONDatabase, Workload
    from mlcbench.meta_schedule.default_schedule import default_schedule
    mod, _ = export_digits_model("cnn", 2)           # the conv's weight is "conv.weight"
    task = next(t for t in ri.extract_tasks(mod, "llvm") if "conv2d" in t.task_name)
    sch = default_schedule(task.mod, task.target)      # cache_read names a block after it
    assert any("weight_global" in str(i.attrs) for i in sch.trace.insts)
    database = JSONDatabase(work_dir=str(tmp_path))
    database.commit_tuning_record(TuningRecord(sch.trace, database.commit_workload(task.mod),
                                               [1e-5], task.target))
    reloaded = JSONDatabase(work_dir=str(tmp_path)).query_schedule(task.mod, task.target)
    assert structural_hash(reloaded.mod) == structural_hash(sch.mod)
