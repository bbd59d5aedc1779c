"""Checks every schedule primitive test runs: expected IR, trace replay, JSON round
trip, numbers against numpy, and refusals that leave the schedule unchanged."""
import json

import numpy as np
import pytest

import mlcbench
from mlcbench import tir
from mlcbench.ir import assert_structural_equal
from mlcbench.script import tir as T
from mlcbench.tir import Schedule, ScheduleError, Trace


def check_trace_roundtrip(original, sch, func_name="main"):
    """Replaying ``sch.trace`` (directly and through JSON) rebuilds ``sch.mod``."""
    replayed = Schedule(original)
    sch.trace.apply_to_schedule(replayed, remove_postproc=False)
    assert_structural_equal(replayed.mod[func_name], sch.mod[func_name])
    data = json.loads(json.dumps(sch.trace.as_json()))
    again = Schedule(original)
    Trace.from_json(data).apply_to_schedule(again)
    assert_structural_equal(again.mod[func_name], sch.mod[func_name])
    assert str(Trace.from_json(data)) == str(sch.trace)


def check_after(original, sch, expected, func_name="main"):
    assert_structural_equal(sch.mod[func_name], expected)
    check_trace_roundtrip(original, sch, func_name)


def random_args(func, seed=0):
    rng = np.random.default_rng(seed)
    arrays = []
    for _, buf in func.buffer_params():
        shape = [int(s.value) for s in buf.shape]
        arrays.append(rng.standard_normal(shape).astype(str(buf.dtype)))
    return arrays


def run(func, arrays, name="main"):
    lib = mlcbench.build(func, target="llvm")
    nd = [mlcbench.nd.array(a) for a in arrays]
    lib[name](*nd)
    return [x.numpy() for x in nd]


def check_numeric(func, reference, outputs=(-1,), name="main", rtol=1e-4):
    """Run ``func`` on random inputs; compare the output buffers with ``reference``."""
    arrays = random_args(func)
    results = run(func, [a.copy() for a in arrays], name)
    expected = reference(*arrays)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for pos, want in zip(outputs, expected):
        np.testing.assert_allclose(results[pos], want, rtol=rtol, atol=1e-5)


def check_refused(sch, action, match):
    """``action(sch)`` raises ScheduleError matching ``match``; nothing changes."""
    mod_before, trace_before = sch.mod, str(sch.trace)
    script_before = sch.mod.script()
    with pytest.raises(ScheduleError, match=match) as info:
        action(sch)
    assert sch.mod is mod_before
    assert sch.mod.script() == script_before
    assert str(sch.trace) == trace_before
    return info.value


# The course's matmul with B transposed (C = A @ B.T), blockized and tensorized in tests.
@T.prim_func
def course_matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                  C: T.Buffer((64, 64), "float32")):
    for i, j, k in T.grid(64, 64, 64):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] += A[vi, vk] * B[vj, vk]
