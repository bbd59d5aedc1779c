"""Unary elementwise operators and cast against numpy."""
import numpy as np
import pytest

from mlcbench import te, topi
from mlcbench.topi import testing as ref

UNARY = [
    (topi.exp, np.exp, (-3, 3)), (topi.log, np.log, (0.1, 5)), (topi.sqrt, np.sqrt, (0, 9)),
    (topi.tanh, np.tanh, (-4, 4)), (topi.sigmoid, ref.sigmoid_python, (-6, 6)),
    (topi.erf, ref.erf_python, (-3, 3)), (topi.relu, lambda a: np.maximum(a, 0), (-2, 2)),
    (topi.gelu, ref.gelu_python, (-4, 4)), (topi.abs, np.abs, (-3, 3)),
    (topi.negative, np.negative, (-3, 3)),
]


@pytest.mark.parametrize("op, expected, bounds", UNARY, ids=[u[0].__name__ for u in UNARY])
def test_unary_float32(op, expected, bounds, run_te, rng):
    x = te.placeholder((7, 13), name="x")
    a = rng.uniform(*bounds, (7, 13)).astype("float32")
    np.testing.assert_allclose(run_te([x], op(x), [a]), expected(a), rtol=2e-5, atol=2e-6)


def test_unary_float64_and_names(run_te, rng):
    x = te.placeholder((13,), "float64", name="x")
    a = rng.uniform(-2, 2, 13)
    y = topi.exp(x)
    assert y.op.name == "compute" and y.dtype == "float64"
    np.testing.assert_allclose(run_te([x], y, [a]), np.exp(a), rtol=1e-12)


def test_nn_relu_is_topi_relu(run_te):
    x = te.placeholder((5,), "int32", name="x")
    a = np.array([-2, -1, 0, 1, 2], dtype="int32")
    np.testing.assert_array_equal(run_te([x], topi.nn.relu(x), [a]), [0, 0, 0, 1, 2])


@pytest.mark.parametrize("src, dst", [("float32", "int32"), ("int32", "float64"),
                                      ("float32", "float16")])
def test_cast(src, dst, run_te, rng):
    x = te.placeholder((7,), src, name="x")
    a = (rng.uniform(-50, 50, 7)).astype(src)
    y = topi.cast(x, dst)
    assert y.dtype == dst and y.op.name == "T_cast"
    np.testing.assert_allclose(run_te([x], y, [a]), a.astype(dst), rtol=1e-3)


def test_clip(run_te, rng):
    x = te.placeholder((13,), name="x")
    a = rng.uniform(-3, 3, 13).astype("float32")
    np.testing.assert_allclose(run_te([x], topi.clip(x, -1.0, 1.5), [a]), np.clip(a, -1, 1.5))
