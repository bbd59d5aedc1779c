"""Fixtures: ``run_te`` builds tensors with the default schedule applied; ``rule_for``
names the rule that schedules a function."""
import numpy as np
import pytest

import mlcbench
from mlcbench import dlight, te
from mlcbench.dlight.base import IS_SCHEDULED, schedule_func
from mlcbench.target import Target

TARGET = Target("llvm")
# Structural tests of target-dependent schedules name their targets, so they check the
# same thing on every host: one AVX2 CPU (8 float lanes) and one AVX-512 CPU (16).
NAMED_TARGETS = [Target("llvm -mcpu=znver3"), Target("llvm -mcpu=znver4")]


def default_schedule(func, target=TARGET):
    """``func`` after ``ApplyDefaultSchedule(*default_rules())`` for ``target`` (checked to
    be marked)."""
    mod = mlcbench.IRModule({"main": func})
    with target:
        mod = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(mod)
    assert mod["main"].attrs.get(IS_SCHEDULED)
    return mod["main"]


def _run(inputs, outputs, arrays):
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    func = default_schedule(te.create_prim_func(list(inputs) + outputs))
    lib = mlcbench.build(func, target=TARGET)
    nd_in = [mlcbench.nd.array(np.ascontiguousarray(a)) for a in arrays]
    nd_out = [mlcbench.nd.array(np.zeros([int(s) for s in t.shape], dtype=t.dtype))
              for t in outputs]
    lib["main"](*nd_in, *nd_out)
    results = [o.numpy() for o in nd_out]
    return results[0] if len(results) == 1 else results


def _rule_for(inputs, outputs):
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    func = te.create_prim_func(list(inputs) + outputs)
    _, rule = schedule_func(func, dlight.cpu.default_rules(), TARGET)
    return type(rule).__name__


@pytest.fixture(scope="session")
def run_te():
    return _run


@pytest.fixture(scope="session")
def rule_for():
    return _rule_for


@pytest.fixture(scope="session", name="default_schedule")
def default_schedule_fixture():
    return default_schedule


@pytest.fixture(scope="session", params=NAMED_TARGETS, ids=lambda t: t.mcpu)
def named_target(request):
    """Each of an AVX2 and an AVX-512 target, whatever the host (schedules only: code
    built for them may not run here)."""
    return request.param


@pytest.fixture(scope="session")
def rng():
    return np.random.default_rng(0)
