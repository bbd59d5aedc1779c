"""Kernels built in worker processes: the same kernels, the same results bit for bit, one
object; a failing worker leaves the build to this process.

The kernel and model caches are off in these tests (``MLCBENCH_KERNEL_CACHE=0``), so
every build compiles.
"""
import os
import threading

import numpy as np
import pytest
from hypothesis import given, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.codegen import kernel_cache
from mlcbench.relax import op, parallel_build, vm_build
from mlcbench.relax.transform.legalize_ops import LegalizeOps

# The last shape is large enough for the default schedule's parallel loop: the workers
# emit the OpenMP calls, and this process must load the runtime before linking.
SHAPES = [(64 * (k + 1), 48) for k in range(parallel_build.MIN_KERNELS + 1)] + [(1024, 512)]


def many_kernels():
    """One input per shape, each through relu then exp: two distinct kernels per shape."""
    xs = [relax.Var(f"x{k}", relax.TensorStructInfo(shape, "float32"))
          for k, shape in enumerate(SHAPES)]
    bb = relax.BlockBuilder()
    with bb.function("main", xs):
        with bb.dataflow():
            outs = [bb.emit(op.exp(op.nn.relu(x))) for x in xs]
            gv = bb.emit_output(relax.Tuple(outs))
        bb.emit_func_output(gv)
    return bb.get()


def inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype("float32") for shape in SHAPES]


def run(ex):
    vm = relax.VirtualMachine(ex, tvm.cpu())
    return [out.numpy() for out in vm["main"](*[tvm.nd.array(a) for a in inputs()])]


def build(jobs, monkeypatch):
    monkeypatch.setenv(parallel_build.JOBS_VARIABLE, str(jobs))
    return relax.build(many_kernels(), "llvm", pipeline=[LegalizeOps()])


@pytest.fixture(autouse=True)
def no_cache(monkeypatch):
    monkeypatch.setenv(kernel_cache.SWITCH, "0")


def test_workers_build_the_same_kernels_with_the_same_results(monkeypatch):
    before = parallel_build.stats()
    parallel = build(2, monkeypatch)
    assert parallel_build.stats()["parallel"] == before["parallel"] + 1
    assert parallel_build.stats()["fallbacks"] == before["fallbacks"]
    serial = build(1, monkeypatch)
    assert parallel_build.stats()["parallel"] == before["parallel"] + 1
    assert parallel.lib.function_names == serial.lib.function_names
    assert parallel.as_text() == serial.as_text()
    for got, want, a in zip(run(parallel), run(serial), inputs()):
        assert got.tobytes() == want.tobytes()
        np.testing.assert_allclose(got, np.exp(np.maximum(a, 0)), rtol=1e-5)
    source = parallel.lib.get_source("ll")
    assert "GOMP_parallel" in source
    for spec in parallel.lib.kernel_specs.values():
        assert f"@{spec.symbol}(" in source


def test_the_linked_object_exports_and_loads(monkeypatch, tmp_path):
    ex = build(2, monkeypatch)
    ex.export_library(tmp_path / "model.so")
    loaded = relax.VirtualMachine(tvm.runtime.load_module(tmp_path / "model.so"), tvm.cpu())
    outs = loaded["main"](*[tvm.nd.array(a) for a in inputs()])
    for got, want in zip(outs, run(ex)):
        assert got.numpy().tobytes() == want.tobytes()


def test_default_schedules_made_in_workers_equal_those_made_here(monkeypatch):
    _, kernels = vm_build.unique_prim_funcs(LegalizeOps()(many_kernels()))
    assert len(kernels) >= parallel_build.MIN_KERNELS
    schedules = {}
    for jobs in (2, 1):
        monkeypatch.setenv(parallel_build.JOBS_VARIABLE, str(jobs))
        before = parallel_build.stats()["mapped"]
        with tvm.target.Target("llvm -mcpu=znver3"):
            schedules[jobs] = vm_build.with_default_schedules(kernels, {}, kernels)
        assert parallel_build.stats()["mapped"] == before + (jobs > 1)
    assert list(schedules[2]) == list(kernels)
    for name in kernels:
        assert vm_build.looks_scheduled(schedules[2][name])
        tvm.ir.assert_structural_equal(schedules[2][name], schedules[1][name])


def test_a_worker_that_dies_leaves_the_build_to_this_process(monkeypatch):
    original = parallel_build.generate_ir

    def dying(funcs, target, *args, **kwargs):
        if parallel_build._in_worker:
            os._exit(3)
        return original(funcs, target, *args, **kwargs)
    monkeypatch.setattr(parallel_build, "generate_ir", dying)
    before = parallel_build.stats()
    ex = build(2, monkeypatch)
    assert parallel_build.stats()["fallbacks"] == before["fallbacks"] + 1
    for got, a in zip(run(ex), inputs()):
        np.testing.assert_allclose(got, np.exp(np.maximum(a, 0)), rtol=1e-5)


@pytest.mark.parametrize("setting, kernels, expected", [
    ("2", parallel_build.MIN_KERNELS, 2),
    ("2", parallel_build.MIN_KERNELS - 1, 1),   # too few to be worth a fork
    ("1", 50, 1),
    ("64", 50, 50),                              # never more workers than kernels
    ("many", 50, 1),                             # not a number: this process
    ("0", 50, 1),
])
def test_build_jobs(monkeypatch, setting, kernels, expected):
    monkeypatch.setenv(parallel_build.JOBS_VARIABLE, setting)
    assert parallel_build.build_jobs(kernels) == expected


def test_a_worker_never_starts_workers(monkeypatch):
    monkeypatch.setenv(parallel_build.JOBS_VARIABLE, "2")
    monkeypatch.setattr(parallel_build, "_in_worker", True)
    assert parallel_build.build_jobs(50) == 1


def test_a_side_thread_builds_in_its_process(monkeypatch):
    monkeypatch.setenv(parallel_build.JOBS_VARIABLE, "2")
    found = []
    thread = threading.Thread(target=lambda: found.append(parallel_build.build_jobs(50)))
    thread.start()
    thread.join()
    assert found == [1]


@given(st.integers(1, 60), st.integers(1, 40))
def test_runs_cover_the_kernels_in_order_in_near_equal_parts(count, runs):
    names = [f"k{n}" for n in range(count)]
    parts = parallel_build._runs(names, runs)
    assert [name for part in parts for name in part] == names
    assert len(parts) == min(runs, count) and all(parts)
    assert max(map(len, parts)) - min(map(len, parts)) <= 1
