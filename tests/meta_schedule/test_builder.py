import os
import re

import numpy as np
import pytest

from mlcbench import IRModule, tir
from mlcbench.ir import InvalidValueError
from mlcbench.meta_schedule.builder import (BuilderInput, LocalBuilder, default_export,
                                            remove_artifact)
from mlcbench.runtime import load_module
from mlcbench.runtime import ndarray as nd
from helpers.tuning_testing import (aborting_build, failing_build, fill_kernel, matmul_module,
                            sleeping_build, stochastic_schedule_mm, unlinkable_kernel)

TARGET = "llvm --num-cores=2"


@pytest.fixture(scope="module")
def builder():
    builder = LocalBuilder(max_workers=2, timeout_sec=20)
    yield builder
    builder.shutdown()


def test_built_candidates_load_and_compute_the_product(builder):
    mod = matmul_module(32)
    mods = [stochastic_schedule_mm(tir.Schedule(mod, seed=s)).mod for s in range(3)]
    results = builder.build([BuilderInput(m, TARGET) for m in mods])
    rng = np.random.default_rng(1)
    a, b = rng.random((32, 32), "float32"), rng.random((32, 32), "float32")
    for result in results:
        assert result.error_msg is None
        c = nd.empty((32, 32), "float32")
        load_module(result.artifact_path)["main"](nd.array(a), nd.array(b), c)
        np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-5)
        remove_artifact(result.artifact_path)
        assert not os.path.exists(os.path.dirname(result.artifact_path))


def test_a_failed_build_is_an_error_and_the_others_build(builder):
    results = builder.build([BuilderInput(IRModule({"main": unlinkable_kernel}), TARGET),
                             BuilderInput(IRModule({"main": fill_kernel}), TARGET)])
    assert results[0].artifact_path is None
    assert "no_such_function_anywhere" in results[0].error_msg
    assert results[1].error_msg is None and os.path.exists(results[1].artifact_path)
    remove_artifact(results[1].artifact_path)


@pytest.mark.parametrize("f_build, expected", [
    (failing_build, r"build error: .*this build always fails"),
    (aborting_build, r"build crash: the worker process died from signal SIGABRT"),
    (sleeping_build, r"build timeout: no result after the time limit of 1 s"),
])
def test_build_failures_are_reported_and_the_pool_recovers(f_build, expected):
    with_failure = LocalBuilder(max_workers=1, timeout_sec=1, f_build=f_build)
    (result,) = with_failure.build([BuilderInput(IRModule({"main": fill_kernel}), TARGET)])
    assert result.artifact_path is None
    assert result.error_msg is not None
    assert re.search(expected, result.error_msg, re.S), result.error_msg
    with_failure.f_build = LocalBuilder().f_build          # the same workers build again
    (result,) = with_failure.build([BuilderInput(IRModule({"main": fill_kernel}), TARGET)])
    assert result.error_msg is None
    remove_artifact(result.artifact_path)
    with_failure.shutdown()


def test_default_export_writes_a_loadable_library():
    from mlcbench import build
    path = default_export(build(fill_kernel))
    a = nd.array(np.zeros(4, "float32"))
    load_module(path)["main"](a)
    assert a.numpy().tolist() == [1, 1, 1, 1]
    remove_artifact(path)


def test_a_worker_initializer_is_refused():
    with pytest.raises(InvalidValueError, match="initializer is not supported.*found <function"):
        LocalBuilder(max_workers=1, initializer=lambda: None)
