"""The whole lowering pipeline: pass order, instruments, and semantics against numpy."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from helpers.interp import LoweredFormViolation, run_lowered
from helpers.lowering_programs import (mm_relu, softmax, split_reduction, unrolled_scale,
                               vector_add)

import mlcbench
from mlcbench.ir.instrument import RecordingInstrument
from mlcbench.ir.transform import PassContext
from mlcbench.tir import For, ForKind, Ramp, post_order_visit
from mlcbench.tir.transform import default_lowering_pipeline, lower

PASS_ORDER = ["tir.VerifyCPUCompatible", "tir.LowerInitBlock", "tir.ConvertBlocksToOpaque",
              "tir.CompactBufferAllocation", "tir.StorageAlign",
              "tir.LowerOpaqueBlock", "tir.Simplify", "tir.FlattenBuffer", "tir.Simplify",
              "tir.UnrollLoop", "tir.VectorizeLoop", "tir.InjectPrefetch", "tir.Simplify",
              "tir.RemoveNoOp"]


def _random(rng, *shape):
    return rng.standard_normal(shape).astype("float32")


def test_pipeline_is_named_and_ordered():
    pipeline = default_lowering_pipeline()
    assert pipeline.info.name == "tir.lower"
    assert [p.info.name for p in pipeline.passes] == PASS_ORDER


def test_instruments_see_every_pass():
    recorder = RecordingInstrument()
    with PassContext(instruments=[recorder]):
        lower(mm_relu())
    assert [r.name for r in recorder.records] == PASS_ORDER
    assert recorder.records[1].changed and not recorder.records[0].changed


def test_mm_relu():
    rng = np.random.default_rng(0)
    a, b, c = _random(rng, 16, 16), _random(rng, 16, 16), np.zeros((16, 16), "float32")
    run_lowered(lower(mm_relu())["mm_relu"], a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


def test_softmax_with_vector_and_unrolled_stages():
    rng = np.random.default_rng(1)
    a, b = _random(rng, 4, 16), np.zeros((4, 16), "float32")
    run_lowered(lower(softmax())["softmax"], a, b)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(b, e / e.sum(axis=1, keepdims=True), rtol=1e-5)


@settings(max_examples=15, deadline=None)
@given(chunks=st.integers(1, 4), lanes=st.sampled_from([2, 4, 8, 16, 32]))
def test_vector_add(chunks, lanes):
    n = chunks * lanes
    rng = np.random.default_rng(n)
    a, b, c = _random(rng, n), _random(rng, n), np.zeros(n, "float32")
    run_lowered(lower(vector_add(n, lanes))["vector_add"], a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_unrolled_loop():
    rng = np.random.default_rng(2)
    a, b = _random(rng, 12), np.zeros(12, "float32")
    func = lower(unrolled_scale())["unrolled_scale"]
    run_lowered(func, a, b)
    np.testing.assert_allclose(b, a * 2 + 1)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 23), factor=st.integers(1, 8))
def test_reduction_with_non_divisible_split(n, factor):
    rng = np.random.default_rng(n * 31 + factor)
    a, s = _random(rng, n), np.full(1, 123.0, "float32")
    run_lowered(lower(split_reduction(n, factor))["split_reduction"], a, s)
    np.testing.assert_allclose(s[0], a.sum(), rtol=1e-5, atol=1e-5)


def test_interpreter_rejects_unlowered_ir():
    with pytest.raises(LoweredFormViolation):
        run_lowered(mm_relu(), *(np.zeros((16, 16), "float32") for _ in range(3)))


def test_lower_accepts_modules_and_rejects_other_inputs():
    mod = mlcbench.IRModule({"f": vector_add()})
    assert list(lower(mod).functions)[0].name_hint == "f"
    with pytest.raises(TypeError, match="PrimFunc or an IRModule"):
        lower("not a function")


def test_tvmscript_scheduled_program():
    from mlcbench.script import tir as T

    @T.prim_func
    def scaled_row_sum(A: T.Buffer((6, 10), "float32"), S: T.Buffer((6,), "float32"),
                       D: T.Buffer((6, 10), "float32")):
        for i in range(6):
            for k0, k1 in T.grid(3, 4):
                with T.block("sum"):
                    vi = T.axis.spatial(6, i)
                    vk = T.axis.reduce(10, k0 * 4 + k1)
                    T.where(k0 * 4 + k1 < 10)
                    with T.init():
                        S[vi] = T.float32(0)
                    S[vi] = S[vi] + A[vi, vk]
            for j0 in T.unroll(2):
                for j1 in T.vectorized(5):
                    with T.block("double"):
                        vi = T.axis.spatial(6, i)
                        vj = T.axis.spatial(10, j0 * 5 + j1)
                        D[vi, vj] = A[vi, vj] * T.float32(2) - S[vi]

    rng = np.random.default_rng(3)
    a, s, d = _random(rng, 6, 10), np.zeros(6, "float32"), np.zeros((6, 10), "float32")
    lowered = lower(scaled_row_sum)["main"]
    run_lowered(lowered, a, s, d)
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(d, a * 2 - a.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)
    nodes = []
    post_order_visit(lowered.body, nodes.append)
    assert any(isinstance(n, Ramp) for n in nodes)
    assert {n.kind for n in nodes if isinstance(n, For)} == {ForKind.SERIAL}
