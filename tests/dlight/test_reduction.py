"""The Reduction rule: row-wise kernels run rows in parallel, vectorized inside."""
import numpy as np
import pytest

from mlcbench import te, topi
from mlcbench.dlight.cpu import Reduction
from mlcbench.topi import testing as ref

from mlcbench.target import Target

TARGET = Target("llvm")


def test_applies_to_softmax_and_layer_norm(rule_for):
    x = te.placeholder((7, 13), name="x")
    assert rule_for([x], topi.nn.softmax(x)) == "Reduction"
    g, b = te.placeholder((13,), name="g"), te.placeholder((13,), name="b")
    assert rule_for([x, g, b], topi.nn.layer_norm(x, g, b, [1])) == "Reduction"


def test_does_not_apply_to_elementwise():
    x = te.placeholder((7, 13), name="x")
    assert Reduction().apply(te.create_prim_func([x, topi.exp(x)]), TARGET) is None


def test_softmax_rows_share_one_parallel_loop(default_schedule):
    x = te.placeholder((512, 1000), name="x")
    text = default_schedule(te.create_prim_func([x, topi.nn.softmax(x)])).script()
    assert text.count("T.parallel(512)") == 1 and "T.vectorized" in text


def test_rows_under_100us_of_work_stay_on_one_thread(default_schedule):
    """A second thread saves at most ~50 us here but waits ~0.5 ms for a descheduled
    worker when other processes share the cores."""
    x = te.placeholder((128, 768), name="x")
    g, b = te.placeholder((768,), name="g"), te.placeholder((768,), name="b")
    func = te.create_prim_func([x, g, b, topi.nn.layer_norm(x, g, b, [1])])
    assert "T.parallel" not in default_schedule(func).script()


@pytest.mark.parametrize("shape", [(7, 13), (3, 1000), (300, 256)])
def test_softmax_matches_numpy(shape, run_te, rng):
    a = rng.standard_normal(shape).astype("float32")
    x = te.placeholder(shape, name="x")
    np.testing.assert_allclose(run_te([x], topi.nn.softmax(x), [a]), ref.softmax_python(a),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(7, 13), (130, 768)])
def test_layer_norm_matches_numpy(shape, run_te, rng):
    a = (rng.standard_normal(shape) + 2).astype("float32")
    gamma, beta = (rng.standard_normal(shape[1:]).astype("float32") for _ in range(2))
    x, g, b = (te.placeholder(s, name=n) for s, n in [(shape, "x"), (shape[1:], "g"),
                                                        (shape[1:], "b")])
    got = run_te([x, g, b], topi.nn.layer_norm(x, g, b, [1]), [a, gamma, beta])
    np.testing.assert_allclose(got, ref.layer_norm_python(a, gamma, beta, (1,)),
                               rtol=1e-4, atol=1e-4)


def test_sum_over_leading_axis_matches_numpy(run_te, rng):
    a = rng.standard_normal((13, 7)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    np.testing.assert_allclose(run_te([x], topi.sum(x, axis=0), [a]), a.sum(0), rtol=1e-5,
                               atol=1e-5)
