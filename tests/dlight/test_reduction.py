"""The Reduction rule: row-wise kernels run rows in parallel, vectorized inside."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import te, topi
from mlcbench.dlight.analysis import block_infos
from mlcbench.dlight.cpu import Reduction
from mlcbench.dlight.cpu.reduction import TRANSCENDENTAL_WEIGHT, weighted_work
from mlcbench.tir.expr import Call, Var
from mlcbench.tir.functor import post_order_visit
from mlcbench.tir.schedule import Schedule
from mlcbench.topi import testing as ref
from mlcbench.topi.nn.softmax import exp_of_nonpositive

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


@pytest.mark.parametrize("op, rows, parallel", [
    (topi.nn.softmax, 128, True), (topi.nn.log_softmax, 128, True),
    (topi.nn.softmax, 8, False), (topi.nn.log_softmax, 1, False)])
def test_rows_with_an_exp_per_element_count_it_as_work(default_schedule, op, rows, parallel):
    """softmax 128x1000 is ~0.3 ms on one thread (an inline exp per element), above the
    ~100 us at which a second thread pays; its 128K elements alone would not say so."""
    x = te.placeholder((rows, 1000), name="x")
    func = te.create_prim_func([x, op(x)])
    text = default_schedule(func, Target("llvm -mcpu=znver3")).script()
    assert ("T.parallel" in text) == parallel


def test_weighted_work_counts_last_block_transcendentals_and_fmas():
    x = te.placeholder((4, 10), name="x")
    sch = Schedule(te.create_prim_func([x, topi.sum(topi.exp(x), axis=1)]))
    assert weighted_work(sch, block_infos(sch)) == 40 + TRANSCENDENTAL_WEIGHT * 40
    sch = Schedule(te.create_prim_func([x, topi.sum(x, axis=1)]))
    assert weighted_work(sch, block_infos(sch)) == 40
    # softmax's exp is written out of FMAs: each weighs one element
    fmas = []
    post_order_visit(exp_of_nonpositive(Var("d", "float32")), lambda n: fmas.append(n) if (
        isinstance(n, Call) and n.op == "tir.fma") else None)
    sch = Schedule(te.create_prim_func([x, topi.nn.softmax(x)]))
    assert len(fmas) == 9 and weighted_work(sch, block_infos(sch)) == 40 + 9 * 40


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 70), scale=st.sampled_from([1e-3, 1.0, 30.0]),
       log=st.booleans())
def test_softmax_any_shape_and_scale_matches_numpy(run_te, rows, cols, scale, log):
    a = (np.random.default_rng(rows * cols).standard_normal((rows, cols)) * scale)
    a = a.astype("float32")
    x = te.placeholder(a.shape, name="x")
    op, expected = ((topi.nn.log_softmax, ref.log_softmax_python) if log
                    else (topi.nn.softmax, ref.softmax_python))
    np.testing.assert_allclose(run_te([x], op(x), [a]), expected(a), rtol=2e-5, atol=2e-6)


def test_softmax_of_infinities_and_huge_values(run_te):
    a = np.zeros((4, 40), "float32")
    a[0, :] = -np.inf
    a[0, 3] = 2.0                    # one finite entry among -inf: all the mass there
    a[1, :] = 1e30                   # equal huge values: uniform
    a[2, ::2] = -1e30                # half the row vanishes
    a[3, 5] = np.inf                 # +inf makes the row NaN, as in numpy
    x = te.placeholder(a.shape, name="x")
    got = run_te([x], topi.nn.softmax(x), [a])
    np.testing.assert_array_equal(got[0], np.eye(40, dtype="float32")[3])
    np.testing.assert_allclose(got[1], np.full(40, 1 / 40), rtol=1e-6)
    np.testing.assert_allclose(got[2], np.tile([0, 1 / 20], 20), rtol=1e-6)
    assert np.isnan(got[3]).all()
