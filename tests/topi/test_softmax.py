"""softmax and log_softmax along any axis."""
import numpy as np
import pytest

from mlcbench import te, topi
from mlcbench.topi import testing as ref
from mlcbench.topi.nn.softmax import exp_of_nonpositive


@pytest.mark.parametrize("shape, axis", [((3, 13), -1), ((7, 4, 5), 1), ((2, 7), 0)])
def test_softmax_and_log_softmax(shape, axis, run_te, rng):
    a = (rng.standard_normal(shape) * 5).astype("float32")
    x = te.placeholder(shape, name="x")
    soft, logsoft = run_te([x], [topi.nn.softmax(x, axis), topi.nn.log_softmax(x, axis)], [a])
    np.testing.assert_allclose(soft, ref.softmax_python(a, axis), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(logsoft, ref.log_softmax_python(a, axis), rtol=1e-5, atol=1e-5)


def test_softmax_stages_named_like_tvm():
    x = te.placeholder((2, 3), name="x")
    text = te.create_prim_func([x, topi.nn.softmax(x)]).script()
    for block in ("T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum", "T_softmax_norm"):
        assert f'with T.block("{block}"):' in text
    assert "for i0, k in T.grid(2, 3):" in text


def _ulp_error(got, exact):
    """|got - exact| in units of float32's spacing at ``exact`` (float64)."""
    spacing = np.spacing(np.abs(exact).astype("float32")).astype("float64")
    return np.abs(got.astype("float64") - exact) / spacing


def test_exp_of_nonpositive_within_two_ulp_and_zero_below_its_range(run_te):
    """softmax's exp of ``x - max``: a polynomial and exponent bits, no branch."""
    normal = np.linspace(-87.3, 0.0, 200_001).astype("float32")
    special = np.array([-0.0, -1e-30, -88.0, -100.0, -1e30, -np.inf, np.nan], "float32")
    a = np.concatenate([normal, special])
    x = te.placeholder(a.shape, name="x")
    out = te.compute(a.shape, lambda i: exp_of_nonpositive(x[i]), name="e")
    got = run_te([x], out, [a])
    assert _ulp_error(got[:normal.size], np.exp(normal.astype("float64"))).max() <= 2
    np.testing.assert_array_equal(got[normal.size:-1], [1, 1, 0, 0, 0, 0])
    assert np.isnan(got[-1])


@pytest.mark.parametrize("shape", [(128, 1000), (12, 128, 128)])
def test_softmax_at_benchmark_shapes_with_extremes(shape, run_te, rng):
    a = (rng.standard_normal(shape) * 30).astype("float32")
    rows = a.reshape(-1, shape[-1])
    rows[0, :] = -np.inf
    rows[0, 7] = 1.0                   # all the mass on the one finite entry
    rows[1, ::3] = -3e38               # far below the rest: exp underflows to zero
    rows[2, :] = 3e38                  # equal huge values: uniform
    rows[3, 11] = np.inf               # +inf: NaN row, as numpy
    rows[4, 5] = np.nan
    x = te.placeholder(shape, name="x")
    soft, logsoft = run_te([x], [topi.nn.softmax(x), topi.nn.log_softmax(x)], [a])
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_allclose(soft, ref.softmax_python(a), rtol=1e-5, atol=1e-7)
        expected_log = ref.log_softmax_python(a)
    finite = np.isfinite(expected_log)
    np.testing.assert_allclose(logsoft[finite], expected_log[finite], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(logsoft[~finite], expected_log[~finite])
    flat = soft.reshape(-1, shape[-1])
    assert flat[0, 7] == 1 and np.isnan(flat[3]).all() and np.isnan(flat[4]).all()
