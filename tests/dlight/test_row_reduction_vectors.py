"""Row reductions (softmax's max and sum, sums and maxima over rows) accumulate
vector partial results inside each row (rfactor) when the row is long enough."""
import numpy as np
import pytest

from mlcbench import te, topi
from mlcbench.topi import testing as ref


def _schedule_text(default_schedule, inputs, out):
    return default_schedule(te.create_prim_func(list(inputs) + [out])).script()


def test_softmax_reductions_use_local_vector_partials(default_schedule):
    x = te.placeholder((512, 1000), name="x")
    text = _schedule_text(default_schedule, [x], topi.nn.softmax(x))
    assert 'T_softmax_maxelem_rf = T.alloc_buffer((512, 8), scope="local")' in text
    assert 'T_softmax_expsum_rf = T.alloc_buffer((512, 8), scope="local")' in text
    assert text.count("T.parallel(512)") == 1


def test_short_or_odd_rows_stay_scalar(default_schedule):
    x = te.placeholder((7, 13), name="x")
    assert "_rf" not in _schedule_text(default_schedule, [x], topi.nn.softmax(x))


@pytest.mark.parametrize("shape", [(5, 1000), (3, 48), (2, 4, 64)])
def test_softmax_matches_numpy(shape, run_te, rng):
    a = (rng.standard_normal(shape) * 10).astype("float32")
    x = te.placeholder(shape, name="x")
    np.testing.assert_allclose(run_te([x], topi.nn.softmax(x), [a]), ref.softmax_python(a),
                               rtol=1e-5, atol=1e-6)


def test_layer_norm_matches_numpy(run_te, rng):
    a = rng.standard_normal((9, 768)).astype("float32")
    g, b = rng.standard_normal(768).astype("float32"), rng.standard_normal(768).astype("float32")
    x, gg, bb = (te.placeholder(v.shape, name=n) for v, n in [(a, "x"), (g, "g"), (b, "b")])
    out = topi.nn.layer_norm(x, gg, bb, [1])
    mean, var = a.mean(axis=1, keepdims=True), a.var(axis=1, keepdims=True)
    np.testing.assert_allclose(run_te([x, gg, bb], out, [a, g, b]),
                               (a - mean) / np.sqrt(var + 1e-5) * g + b, rtol=1e-4, atol=1e-4)


def test_row_max_handles_negative_infinity(run_te):
    a = np.full((2, 64), -np.inf, "float32")
    a[0, 37] = 1.5
    x = te.placeholder(a.shape, name="x")
    got = run_te([x], topi.max(x, axis=1), [a])
    np.testing.assert_array_equal(got, [1.5, -np.inf])
