"""dense / matmul / batch_matmul against numpy."""
import numpy as np
import pytest

from mlcbench import te, topi
from mlcbench.ir.errors import IRError


@pytest.mark.parametrize("m, k, n", [(1, 7, 13), (5, 13, 3)])
def test_dense_with_bias(m, k, n, run_te, rng):
    x = te.placeholder((m, k), name="x")
    w = te.placeholder((n, k), name="w")
    b = te.placeholder((n,), name="b")
    a, wt, bias = (rng.standard_normal(s).astype("float32") for s in [(m, k), (n, k), (n,)])
    out = run_te([x, w, b], topi.nn.dense(x, w, b), [a, wt, bias])
    np.testing.assert_allclose(out, a @ wt.T + bias, rtol=1e-5, atol=1e-5)


def test_dense_int8_to_int32(run_te, rng):
    x = te.placeholder((3, 7), "int8", name="x")
    w = te.placeholder((4, 7), "int8", name="w")
    a = rng.integers(-100, 100, (3, 7)).astype("int8")
    wt = rng.integers(-100, 100, (4, 7)).astype("int8")
    y = topi.nn.dense(x, w, out_dtype="int32")
    assert y.dtype == "int32" and y.op.name == "T_matmul_NT"
    out = run_te([x, w], y, [a, wt])
    np.testing.assert_array_equal(out, a.astype("int32") @ wt.astype("int32").T)


@pytest.mark.parametrize("ta, tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_transposes(ta, tb, run_te, rng):
    a = rng.standard_normal((7, 5) if ta else (5, 7)).astype("float32")
    b = rng.standard_normal((3, 7) if tb else (7, 3)).astype("float32")
    x, y = te.placeholder(a.shape, name="a"), te.placeholder(b.shape, name="b")
    out = topi.nn.matmul(x, y, transpose_a=ta, transpose_b=tb)
    expected = (a.T if ta else a) @ (b.T if tb else b)
    np.testing.assert_allclose(run_te([x, y], out, [a, b]), expected, rtol=1e-5, atol=1e-5)


def test_batched_matmul_broadcasts_batch(run_te, rng):
    a = rng.standard_normal((2, 3, 5, 7)).astype("float32")
    b = rng.standard_normal((3, 7, 4)).astype("float32")
    x, y = te.placeholder(a.shape, name="a"), te.placeholder(b.shape, name="b")
    out = run_te([x, y], topi.nn.matmul(x, y), [a, b])
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def test_batch_matmul_default_transposes_b(run_te, rng):
    a = rng.standard_normal((1, 5, 7)).astype("float32")
    b = rng.standard_normal((3, 4, 7)).astype("float32")
    x, y = te.placeholder(a.shape, name="a"), te.placeholder(b.shape, name="b")
    z = topi.nn.batch_matmul(x, y)
    assert z.op.name == "T_batch_matmul_NT"
    np.testing.assert_allclose(run_te([x, y], z, [a, b]), a @ b.transpose(0, 2, 1),
                               rtol=1e-5, atol=1e-5)


def test_mismatched_inner_extent_is_refused():
    x = te.placeholder((2, 3), name="x")
    w = te.placeholder((4, 5), name="w")
    with pytest.raises(IRError, match="reduction extents differ"):
        topi.nn.dense(x, w)
