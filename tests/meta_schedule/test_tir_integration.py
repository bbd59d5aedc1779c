import numpy as np

import mlcbench
from mlcbench import tir
from mlcbench.ir import assert_structural_equal
from mlcbench.meta_schedule import MemoryDatabase, TuningRecord
from mlcbench.meta_schedule.tir_integration import compile_tir
from helpers.tuning_testing import matmul_module, stochastic_schedule_mm

TARGET = "llvm --num-cores=2"


def _database_with(seeds_and_seconds, n=64):
    database = MemoryDatabase()
    workload = database.commit_workload(matmul_module(n))
    for seed, seconds in seeds_and_seconds:
        sch = stochastic_schedule_mm(tir.Schedule(matmul_module(n), seed=seed))
        run_secs = None if seconds is None else [seconds]
        database.commit_tuning_record(TuningRecord(sch.trace, workload, run_secs, TARGET))
    return database


def test_compile_tir_applies_the_fastest_trace_and_the_result_computes_the_product():
    database = _database_with([(1, 3e-3), (2, 1e-3), (3, None), (4, 2e-3)])
    sch = compile_tir(database, matmul_module(64), TARGET)
    expected = stochastic_schedule_mm(tir.Schedule(matmul_module(64), seed=2))
    assert_structural_equal(sch.mod, expected.mod)
    assert [i.decision for i in sch.trace.insts] == [i.decision for i in expected.trace.insts]
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), "float32"), rng.random((64, 64), "float32")
    c = mlcbench.nd.empty((64, 64), "float32")
    mlcbench.build(sch.mod, TARGET)["main"](mlcbench.nd.array(a), mlcbench.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)


def test_compile_tir_accepts_a_prim_func_and_another_spelling_of_the_target():
    database = _database_with([(5, 1e-3)])
    sch = compile_tir(database, matmul_module(64)["main"], "llvm -num-cores=2")
    assert sch is not None and len(sch.trace.insts) > 0


def test_compile_tir_gives_none_without_a_valid_record():
    assert compile_tir(_database_with([]), matmul_module(64), TARGET) is None
    assert compile_tir(_database_with([(1, None)]), matmul_module(64), TARGET) is None
    assert compile_tir(_database_with([(1, 1e-3)]), matmul_module(32), TARGET) is None
