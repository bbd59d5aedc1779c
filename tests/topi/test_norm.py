"""batch_norm (inference), layer_norm and lrn against numpy."""
import numpy as np
import pytest

from mlcbench import te, topi
from mlcbench.topi import testing as ref


@pytest.mark.parametrize("shape, axis", [((2, 3, 5, 5), 1), ((7, 13), 1)])
def test_batch_norm(shape, axis, run_te, rng):
    c = shape[axis]
    a = rng.standard_normal(shape).astype("float32")
    gamma, beta, mean = (rng.standard_normal(c).astype("float32") for _ in range(3))
    var = rng.uniform(0.5, 2, c).astype("float32")
    ts = [te.placeholder(s, name=n) for s, n in
          [(shape, "x"), ((c,), "g"), ((c,), "b"), ((c,), "m"), ((c,), "v")]]
    out, _, _ = topi.nn.batch_norm(*ts, axis=axis, epsilon=1e-5)
    got = run_te(ts, out, [a, gamma, beta, mean, var])
    expected = ref.batch_norm_python(a, gamma, beta, mean, var, axis)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape, axis", [((3, 13), [-1]), ((2, 3, 7), [1, 2])])
def test_layer_norm(shape, axis, run_te, rng):
    inner = tuple(shape[a] for a in axis)
    a = (rng.standard_normal(shape) + 3).astype("float32")
    gamma, beta = (rng.standard_normal(inner).astype("float32") for _ in range(2))
    x, g, b = (te.placeholder(s, name=n) for s, n in [(shape, "x"), (inner, "g"), (inner, "b")])
    y = topi.nn.layer_norm(x, g, b, axis, 1e-5)
    got = run_te([x, g, b], y, [a, gamma, beta])
    expected = ref.layer_norm_python(a, gamma, beta, tuple(axis), 1e-5)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_lrn(run_te, rng):
    a = rng.standard_normal((1, 7, 3, 3)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    y = topi.nn.lrn(x, 5, 1, 1e-2, 0.75, 2.0)
    expected = ref.lrn_python(a, 5, 1, 1e-2, 0.75, 2.0)
    np.testing.assert_allclose(run_te([x], y, [a]), expected, rtol=1e-5, atol=1e-6)
