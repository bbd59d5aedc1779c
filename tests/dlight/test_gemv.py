"""Matrix-vector products: dense on one or a few rows skips packing and sums vector
partial results (rfactor) instead."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import te, topi
from mlcbench.dlight.cpu.gemv import GEMV_MAX_ROWS
from mlcbench.tir.functor import post_order_visit
from mlcbench.tir.stmt import For, ForKind
from mlcbench.target import Target


def _loop_kinds(func) -> set:
    kinds = set()
    post_order_visit(func.body, lambda n: kinds.add(n.kind) if isinstance(n, For) else None)
    return kinds


def _dense_text(default_schedule, m, k, n):
    x, w = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w")
    func = default_schedule(te.create_prim_func([x, w, topi.nn.dense(x, w)]))
    return func, func.script()


def test_one_row_dense_uses_vector_partial_sums_without_packing(default_schedule):
    func, text = _dense_text(default_schedule, 1, 784, 128)
    lanes = Target("llvm").vector_lanes(32)        # 784 = 49 * 16: one vector of partial sums
    assert f"_rf = T.alloc_buffer((1, 128, {lanes}), scope=\"local\")" in text
    assert "_global" not in text            # the weight is not packed
    assert {ForKind.VECTORIZED, ForKind.UNROLLED} <= _loop_kinds(func)
    assert ForKind.PARALLEL not in _loop_kinds(func)


def test_large_gemv_runs_outputs_in_parallel(default_schedule):
    func, text = _dense_text(default_schedule, 1, 1024, 1024)
    assert ForKind.PARALLEL in _loop_kinds(func) and "_rf" in text


def test_many_rows_keep_the_packed_micro_kernel(default_schedule):
    _, text = _dense_text(default_schedule, GEMV_MAX_ROWS + 4, 784, 128)
    assert "_global" in text and "_rf" not in text


def test_reduction_that_does_not_tile_falls_back(default_schedule, run_te, rng):
    _, text = _dense_text(default_schedule, 1, 7, 5)
    assert "_rf" not in text
    a, b = rng.standard_normal((1, 7)).astype("float32"), rng.standard_normal((5, 7)).astype("float32")
    x, w = te.placeholder((1, 7), name="x"), te.placeholder((5, 7), name="w")
    np.testing.assert_allclose(run_te([x, w], topi.nn.dense(x, w), [a, b]), a @ b.T,
                               rtol=1e-5, atol=1e-5)


@settings(max_examples=8, deadline=None)
@given(m=st.integers(1, GEMV_MAX_ROWS), k=st.sampled_from([16, 24, 40, 64, 200]),
       n=st.integers(1, 41), bias=st.booleans())
def test_gemv_matches_numpy(m, k, n, bias, run_te):
    rng = np.random.default_rng(m * 7919 + k * 31 + n)
    x, w, b = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w"), \
        te.placeholder((n,), name="b")
    a, wt, bb = (rng.standard_normal(s).astype("float32") for s in [(m, k), (n, k), (n,)])
    y = topi.nn.relu(topi.nn.dense(x, w, b if bias else None))
    got = run_te([x, w, b] if bias else [x, w], y, [a, wt, bb] if bias else [a, wt])
    np.testing.assert_allclose(got, np.maximum(a @ wt.T + (bb if bias else 0), 0),
                               rtol=1e-4, atol=1e-4)


def test_batched_gemv_matches_numpy(default_schedule, run_te, rng):
    a = rng.standard_normal((3, 1, 64)).astype("float32")
    b = rng.standard_normal((3, 20, 64)).astype("float32")
    x, y = te.placeholder(a.shape, name="a"), te.placeholder(b.shape, name="b")
    out = topi.nn.batch_matmul(x, y)
    assert "_rf" in default_schedule(te.create_prim_func([x, y, out])).script()
    np.testing.assert_allclose(run_te([x, y], out, [a, b]), a @ b.transpose(0, 2, 1),
                               rtol=1e-4, atol=1e-4)
