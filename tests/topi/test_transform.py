"""reshape, transpose, flatten, concatenate, split, squeeze, expand_dims, pad, take."""
import numpy as np
import pytest

from mlcbench import te, topi
from mlcbench.ir.errors import IRError


def test_reshape_transpose_flatten(run_te, rng):
    a = rng.standard_normal((2, 3, 7)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    outs = [topi.reshape(x, (7, -1)), topi.transpose(x, (2, 0, 1)), topi.transpose(x),
            topi.nn.flatten(x)]
    got = run_te([x], outs, [a])
    for g, e in zip(got, [a.reshape(7, -1), a.transpose(2, 0, 1), a.T, a.reshape(2, -1)]):
        np.testing.assert_array_equal(g, e)


def test_reshape_refuses_wrong_size():
    x = te.placeholder((2, 3), name="x")
    with pytest.raises(IRError, match="cannot reshape 6 elements"):
        topi.reshape(x, (4, 2))


def test_concatenate_split(run_te, rng):
    arrays = [rng.standard_normal((2, n)).astype("float32") for n in (3, 1, 7)]
    xs = [te.placeholder(a.shape, name=f"x{i}") for i, a in enumerate(arrays)]
    cat = topi.concatenate(xs, axis=1)
    pieces = topi.split(cat, [2, 5], axis=1)
    halves = topi.split(xs[2], 1, axis=0)
    got = run_te(xs, [cat, *pieces, *halves], arrays)
    joined = np.concatenate(arrays, axis=1)
    np.testing.assert_array_equal(got[0], joined)
    for g, e in zip(got[1:4], np.split(joined, [2, 5], axis=1)):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(got[4], arrays[2])


def test_split_sections(run_te, rng):
    a = rng.standard_normal((6, 13)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    got = run_te([x], topi.split(x, 3, axis=0), [a])
    for g, e in zip(got, np.split(a, 3, axis=0)):
        np.testing.assert_array_equal(g, e)


def test_squeeze_expand_dims(run_te, rng):
    a = rng.standard_normal((1, 7, 1, 3)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    got = run_te([x], [topi.squeeze(x), topi.squeeze(x, 2), topi.expand_dims(x, -1, 2)], [a])
    np.testing.assert_array_equal(got[0], a.squeeze())
    np.testing.assert_array_equal(got[1], a.squeeze(2))
    np.testing.assert_array_equal(got[2], a.reshape(1, 7, 1, 3, 1, 1))


def test_pad(run_te, rng):
    a = rng.standard_normal((3, 7)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    y = topi.nn.pad(x, (1, 0), (2, 3), pad_value=-1.0)
    np.testing.assert_array_equal(run_te([x], y, [a]),
                                  np.pad(a, ((1, 2), (0, 3)), constant_values=-1.0))


@pytest.mark.parametrize("axis, mode", [(0, "clip"), (1, "wrap"), (None, "clip")])
def test_take(axis, mode, run_te, rng):
    a = rng.standard_normal((5, 7)).astype("float32")
    idx = np.array([[0, 4], [-1, 9]], dtype="int32")
    x = te.placeholder(a.shape, name="x")
    i = te.placeholder(idx.shape, "int32", name="i")
    got = run_te([x, i], topi.take(x, i, axis, mode), [a, idx])
    np.testing.assert_array_equal(got, np.take(a, idx, axis=axis, mode=mode))
