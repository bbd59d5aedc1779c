"""batch_norm (inference), layer_norm and lrn against numpy."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

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


@settings(max_examples=12, deadline=None)
@given(size=st.integers(1, 6), beta=st.sampled_from([0.75, 0.5, 1.0, 0.6]),
       axis=st.integers(0, 2), channels=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_lrn_matches_numpy_for_any_window_and_exponent(size, beta, axis, channels, seed,
                                                       run_te):
    """Even and odd windows (wider than the axis too), along any axis; the exponents
    taken by square roots and the one left to pow."""
    shape = [3, 4, 5]
    shape[axis] = channels
    a = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    x = te.placeholder(a.shape, name="x")
    got = run_te([x], topi.nn.lrn(x, size, axis, 1e-2, beta, 2.0), [a])
    np.testing.assert_allclose(got, ref.lrn_python(a, size, axis, 1e-2, beta, 2.0),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("beta, uses_pow", [(0.75, False), (0.5, False), (0.6, True)])
def test_lrn_is_one_elementwise_stage(beta, uses_pow):
    """No reduction and no separate sum of squares, so the row vectorizes; pow only for
    an exponent square roots do not give."""
    x = te.placeholder((1, 8, 5, 5), name="x")
    text = te.create_prim_func([x, topi.nn.lrn(x, 5, 1, 1e-4, beta, 1.0)]).script()
    assert re.findall(r'with T\.block\("(\w+)"\)', text) == ["root", "T_lrn"], text
    assert "T.init()" not in text, text
    assert ("T.pow(" in text) == uses_pow, text
