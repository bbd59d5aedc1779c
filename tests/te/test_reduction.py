"""Reductions: sum/max/min over several axes, where= masks, comm_reducer, argmax."""
import numpy as np
import pytest

import mlcbench
from mlcbench import te, tir


def _run(args, arrays):
    lib = mlcbench.build(te.create_prim_func(args), target="llvm")
    nds = [mlcbench.nd.array(a) for a in arrays]
    lib["main"](*nds)
    return [n.numpy() for n in nds]


def test_sum_max_min_over_two_axes():
    A = te.placeholder((3, 7, 13), name="A")
    j, k = te.reduce_axis((0, 7), name="j"), te.reduce_axis((0, 13), name="k")

    def reduce_with(reducer):
        return te.compute((3,), lambda i: reducer(A[i, j, k], axis=[j, k]),
                          name=reducer.__name__)
    outs = [reduce_with(r) for r in (te.sum, te.max, te.min)]
    a = np.random.default_rng(0).standard_normal((3, 7, 13)).astype("float32")
    got = _run([A] + outs, [a] + [np.zeros(3, "float32")] * 3)
    np.testing.assert_allclose(got[1], a.sum((1, 2)), rtol=1e-5)
    np.testing.assert_array_equal(got[2], a.max((1, 2)))
    np.testing.assert_array_equal(got[3], a.min((1, 2)))


def test_where_masks_the_reduction():
    A = te.placeholder((4, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")
    B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k, where=k > 1), name="B")
    assert "if v_k > 1:" in te.create_prim_func([A, B]).script()
    a = np.arange(24, dtype="float32").reshape(4, 6)
    np.testing.assert_array_equal(_run([A, B], [a, np.zeros(4, "float32")])[1],
                                  a[:, 2:].sum(1))


def test_elementwise_max_of_two_expressions():
    x, y = te.var("x", "float32"), te.var("y", "float32")
    assert isinstance(te.max(x, y), tir.Max)


def test_comm_reducer_product():
    A = te.placeholder((2, 5), name="A")
    k = te.reduce_axis((0, 5), name="k")
    product = te.comm_reducer(lambda x, y: x * y, lambda t: tir.const(1, t), name="product")
    B = te.compute((2,), lambda i: product(A[i, k], axis=k), name="B")
    a = np.arange(1, 11, dtype="float32").reshape(2, 5)
    np.testing.assert_allclose(_run([A, B], [a, np.zeros(2, "float32")])[1], a.prod(1))


def test_tuple_reducer_argmax():
    A = te.placeholder((3, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")

    def combine(x, y):
        keep = x[1] >= y[1]
        return tir.expr.Select(keep, x[0], y[0]), tir.expr.Select(keep, x[1], y[1])

    argmax = te.comm_reducer(combine, lambda ti, tv: (tir.const(-1, ti), tir.min_value(tv)))
    idx, val = te.compute((3,), lambda i: argmax((k.var, A[i, k]), axis=k), name="am")
    a = np.random.default_rng(2).standard_normal((3, 6)).astype("float32")
    got = _run([A, idx, val], [a, np.zeros(3, "int32"), np.zeros(3, "float32")])
    np.testing.assert_array_equal(got[1], a.argmax(1))
    np.testing.assert_array_equal(got[2], a.max(1))


def test_reduce_axis_must_be_reduce():
    A = te.placeholder((3,), name="A")
    with pytest.raises(mlcbench.ir.errors.IRError, match="reduce axes"):
        te.compute((1,), lambda i: te.sum(A[i], axis=[i]))
