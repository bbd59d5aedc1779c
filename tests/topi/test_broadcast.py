"""Binary elementwise operators with numpy broadcasting and scalar operands."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import te, topi
from mlcbench.ir.errors import IRError

BINARY = [
    (topi.add, np.add), (topi.subtract, np.subtract), (topi.multiply, np.multiply),
    (topi.divide, np.divide), (topi.maximum, np.maximum), (topi.minimum, np.minimum),
    (topi.power, np.power),
]


@pytest.mark.parametrize("op, ref", BINARY, ids=[op.__name__ for op, _ in BINARY])
def test_binary_broadcast_float32(op, ref, run_te, rng):
    x = te.placeholder((7, 1, 13), name="x")
    y = te.placeholder((3, 1), name="y")
    a = rng.uniform(0.5, 2.0, (7, 1, 13)).astype("float32")
    b = rng.uniform(0.5, 2.0, (3, 1)).astype("float32")
    out = run_te([x, y], op(x, y), [a, b])
    np.testing.assert_allclose(out, ref(a, b), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float64"])
def test_add_multiply_other_dtypes(dtype, run_te, rng):
    x = te.placeholder((7,), dtype, name="x")
    y = te.placeholder((7,), dtype, name="y")
    a = rng.integers(-50, 50, 7).astype(dtype)
    b = rng.integers(-50, 50, 7).astype(dtype)
    got_add, got_mul = run_te([x, y], [topi.add(x, y), topi.multiply(x, y)], [a, b])
    np.testing.assert_array_equal(got_add, a + b)
    np.testing.assert_array_equal(got_mul, a * b)


def test_scalar_operands(run_te, rng):
    x = te.placeholder((4, 13), name="x")
    a = rng.standard_normal((4, 13)).astype("float32")
    left, right = run_te([x], [topi.subtract(2.0, x), topi.multiply(x, 3.0)], [a])
    np.testing.assert_allclose(left, 2.0 - a, rtol=1e-6)
    np.testing.assert_allclose(right, a * 3.0, rtol=1e-6)


def test_two_scalars_give_an_expression():
    value = topi.add(2, 3)
    assert int(value) == 5


def test_block_reads_broadcast_axis_at_zero():
    x = te.placeholder((4, 1), name="x")
    y = te.placeholder((5,), name="y")
    text = te.create_prim_func([x, y, topi.add(x, y)]).script()
    assert 'with T.block("T_add"):' in text
    assert "T_add[v_ax0, v_ax1] = x[v_ax0, 0] + y[v_ax1]" in text


def test_incompatible_shapes_are_refused():
    x = te.placeholder((4, 3), name="x")
    y = te.placeholder((5,), name="y")
    with pytest.raises(IRError, match="do not broadcast"):
        topi.add(x, y)


_dims = st.lists(st.integers(1, 4), min_size=1, max_size=3)


@settings(max_examples=8, deadline=None)
@given(shape=_dims, data=st.data())
def test_broadcast_shapes_match_numpy(shape, data, run_te):
    other = [data.draw(st.sampled_from([1, d])) for d in shape]
    other = other[data.draw(st.integers(0, len(other) - 1)):]
    x = te.placeholder(tuple(shape), name="x")
    y = te.placeholder(tuple(other), name="y")
    a = np.arange(np.prod(shape), dtype="float32").reshape(shape)
    b = np.arange(np.prod(other), dtype="float32").reshape(other) * 10
    np.testing.assert_allclose(run_te([x, y], topi.add(x, y), [a, b]), a + b)
