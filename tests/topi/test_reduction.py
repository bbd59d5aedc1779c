"""sum / mean / max / min / prod / argmax / argmin over axes, with keepdims."""
import numpy as np
import pytest

from mlcbench import te, topi


@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, True), ((0, 2), False)])
def test_reductions(axis, keepdims, run_te, rng):
    a = rng.uniform(0.5, 1.5, (3, 7, 5)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    ops = [topi.sum, topi.mean, topi.max, topi.min, topi.prod]
    refs = [np.sum, np.mean, np.max, np.min, np.prod]
    got = run_te([x], [op(x, axis, keepdims) for op in ops], [a])
    for g, r in zip(got, refs):
        np.testing.assert_allclose(g, r(a, axis=axis, keepdims=keepdims), rtol=1e-5)


def test_int_sum(run_te, rng):
    a = rng.integers(-9, 9, (4, 13)).astype("int64")
    x = te.placeholder(a.shape, "int64", name="x")
    np.testing.assert_array_equal(run_te([x], topi.sum(x, 1), [a]), a.sum(1))


@pytest.mark.parametrize("axis, keepdims", [(1, False), (0, True)])
def test_argmax_argmin_first_index(axis, keepdims, run_te):
    a = np.array([[1, 3, 3, 0], [2, 2, -1, 5], [2, 0, -1, 5]], dtype="float32")
    x = te.placeholder(a.shape, name="x")
    got = run_te([x], [topi.argmax(x, axis, keepdims), topi.argmin(x, axis, keepdims)], [a])
    np.testing.assert_array_equal(got[0], np.argmax(a, axis=axis, keepdims=keepdims))
    np.testing.assert_array_equal(got[1], np.argmin(a, axis=axis, keepdims=keepdims))


def test_reduce_block_names():
    x = te.placeholder((2, 3), name="x")
    text = te.create_prim_func([x, topi.sum(x, axis=1, keepdims=True)]).script()
    assert 'with T.block("x_red"):' in text
    assert "for ax0, ax1, k1 in T.grid(2, 1, 3):" in text
