"""Row reductions (softmax's max and sum, sums and maxima over rows) accumulate
vector partial results inside each row (rfactor) when the row is long enough."""
import re

import numpy as np
import pytest

import mlcbench
from mlcbench import te, topi
from mlcbench.target import Target
from mlcbench.topi import testing as ref
from mlcbench.topi.nn.softmax import exp_of_nonpositive


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


@pytest.mark.parametrize("mcpu, lanes", [("znver3", 8), ("znver4", 16)])
def test_long_rows_walk_several_accumulators_then_combine_them(default_schedule, mcpu, lanes):
    """A row of 768 floats: four accumulator vectors side by side (an add waits for the
    previous add on its accumulator), added into one vector, whose lanes are summed."""
    x = te.placeholder((16, 768), name="x")
    func = default_schedule(te.create_prim_func([x, topi.sum(x, axis=1)]),
                            Target(f"llvm -mcpu={mcpu}"))
    text = func.script()
    assert f'x_red_rf_rf = T.alloc_buffer((16, 4, {lanes}), scope="local")' in text
    assert f'x_red_rf = T.alloc_buffer((16, {lanes}), scope="local")' in text
    assert "T.unroll(4)" in text and f"T.vectorized({lanes})" in text


@pytest.mark.parametrize("op, output", [(topi.nn.softmax, "T_softmax_norm"),
                                        (topi.nn.log_softmax, "T_log_softmax")])
def test_softmax_exp_runs_several_registers_wide(default_schedule, op, output):
    """softmax and log-softmax 128x1000 on AVX2: the exp of 40 floats (five registers)
    per vector operation, the max and sum over five accumulators; the output, light
    (``exp * (1 / sum)``, ``x - max - log(sum)`` with one log per row), one register wide."""
    x = te.placeholder((128, 1000), name="x")
    text = default_schedule(te.create_prim_func([x, op(x)]), Target("llvm -mcpu=znver3")).script()
    exp_loop, output_loop = (text.split(f'T.block("{name}")')[0].rsplit("\n", 2)[-2]
                             for name in ("T_softmax_exp", output))
    assert "T.vectorized(40)" in exp_loop and "T.vectorized(8)" in output_loop
    for stage in ("maxelem", "expsum"):
        assert f'T_softmax_{stage}_rf_rf = T.alloc_buffer((128, 5, 8), scope="local")' in text


@pytest.mark.parametrize("op", [topi.nn.softmax, topi.nn.log_softmax])
def test_an_exp_over_rows_no_register_divides_runs_whole_registers(default_schedule, op):
    """1000 floats on AVX-512's 16 lanes: the exp runs two whole registers at a time,
    its last 8 floats under a predicate (a scalar tail), where 8-lane halves would
    divide the row; the max and sum keep 8-lane vectors, which divide it."""
    x = te.placeholder((128, 1000), name="x")
    text = default_schedule(te.create_prim_func([x, op(x)]), Target("llvm -mcpu=znver4")).script()
    exp_block = text.split('T.block("T_softmax_exp")')
    exp_loop = exp_block[0].rsplit("\n", 2)[-2]
    assert "T.vectorized(32)" in exp_loop, text
    assert re.search(r"T\.where\(\w+ \* 32 \+ \w+ < 1000\)", exp_block[1].split("T_softmax_exp[")[0]), text
    for stage in ("maxelem", "expsum"):
        assert f'T_softmax_{stage}_rf_rf = T.alloc_buffer((128, 5, 8), scope="local")' in text


def test_exp_inside_a_sum_walks_one_accumulator(default_schedule):
    """A sum whose own body is an exp (as long as the wait for the previous add) keeps
    one accumulator vector: more would only spill the exp's constants."""
    x = te.placeholder((16, 1000), name="x")
    k = te.reduce_axis((0, 1000), name="k")
    out = te.compute((16,), lambda i: te.sum(exp_of_nonpositive(x[i, k] - 100.0), axis=k))
    text = default_schedule(te.create_prim_func([x, out]), Target("llvm -mcpu=znver3")).script()
    assert "_rf = T.alloc_buffer((16, 8), scope=\"local\")" in text
    assert "_rf_rf" not in text


@pytest.mark.parametrize("shape", [(128, 1000), (12, 128, 128)])
def test_scheduled_softmax_at_benchmark_shapes_with_extremes(shape, run_te, rng):
    a = (rng.standard_normal(shape) * 30).astype("float32")
    rows = a.reshape(-1, shape[-1])
    rows[0, :] = -np.inf
    rows[0, 7] = 1.0
    rows[1, ::3] = -3e38
    rows[2, :] = 3e38
    rows[3, 11] = np.inf
    x = te.placeholder(shape, name="x")
    soft, logsoft = run_te([x], [topi.nn.softmax(x), topi.nn.log_softmax(x)], [a])
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_allclose(soft, ref.softmax_python(a), rtol=1e-5, atol=1e-7)
        expected_log = ref.log_softmax_python(a)
    finite = np.isfinite(expected_log)
    np.testing.assert_allclose(logsoft[finite], expected_log[finite], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(logsoft[~finite], expected_log[~finite])


def test_window_of_several_reduce_loops_has_an_accumulator_per_inner_position(
        default_schedule):
    """Global pooling over 13x13: thirteen partial sums side by side, not one chain of
    169 dependent adds."""
    x = te.placeholder((1, 32, 13, 13), name="x")
    func = te.create_prim_func([x, topi.nn.global_avg_pool2d(x)])
    text = default_schedule(func, Target("llvm -mcpu=znver3")).script()
    assert 'adaptive_pool_sum_rf = T.alloc_buffer((1, 32, 1, 1, 13), scope="local")' in text
    assert "T.vectorized(13)" in text


@pytest.mark.parametrize("size, kind", [(13, "avg"), (7, "avg"), (13, "max"), (3, "avg")])
def test_global_pool_matches_numpy(size, kind, run_te, rng):
    a = rng.standard_normal((1, 20, size, size)).astype("float32")
    a[0, 3, 2, 1] = -np.inf
    a[0, 4, 0, 0] = np.nan
    x = te.placeholder(a.shape, name="x")
    got = run_te([x], topi.nn.global_pool(x, kind), [a])
    expected = (a.mean if kind == "avg" else a.max)(axis=(2, 3), keepdims=True)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_long_inner_reduce_loop_is_fused_with_the_outer_ones(default_schedule, run_te, rng):
    """Summing 64x64 planes: the reduce loops fuse into one row of 4096, which walks four
    accumulator vectors (not one accumulator per position, a vector of 64 lanes)."""
    x = te.placeholder((3, 64, 64), name="x")
    out = topi.sum(x, axis=(1, 2))
    text = default_schedule(te.create_prim_func([x, out]), Target("llvm -mcpu=znver3")).script()
    assert 'x_red_rf_rf = T.alloc_buffer((3, 4, 8), scope="local")' in text
    a = rng.standard_normal((3, 64, 64)).astype("float32")
    np.testing.assert_allclose(run_te([x], out, [a]), a.sum(axis=(1, 2)), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("op", [topi.nn.softmax, topi.nn.log_softmax])
def test_softmax_row_max_is_one_vmaxps_per_vector(default_schedule, op):
    """The row max of softmax and log-softmax skips NaN (a NaN element makes the row's sum
    NaN anyway), so each accumulator step is one vmaxps, not the five instructions
    (vblendvps, vcmpunordps) of the NaN-propagating T.max."""
    x = te.placeholder((16, 1000), name="x")
    target = Target("llvm -mcpu=znver3")
    func = default_schedule(te.create_prim_func([x, op(x)]), target)
    asm = mlcbench.build(func, target=target).get_source("asm")
    assert len(re.findall(r"vmaxps\s[^\n]*ymm", asm)) >= 5     # one per accumulator at least
    assert not re.findall(r"(vblendvps|vcmpunordps)\s[^\n]*ymm", asm)


def test_scheduled_softmax_rows_with_nan_and_infinities_match_numpy(run_te, rng):
    """Wherever a NaN sits in a row (first, last, before a larger value in the same
    accumulator lane, everywhere) the row is NaN, as numpy's; so are rows of -inf only
    and rows holding +inf; -0.0 and +0.0 as the maximum change nothing."""
    a = (rng.standard_normal((8, 1000)) * 30).astype("float32")
    a[0, :] = -np.inf
    a[1, 0] = a[2, 999] = np.nan
    a[3, 3], a[3, 3 + 8 * 5 * 7] = np.nan, 1e4   # five accumulators of 8 lanes on AVX2
    a[4, :] = np.nan
    a[5, ::2], a[5, 1] = -np.inf, np.inf
    a[6, :], a[6, 500] = -np.inf, np.inf
    a[7, :] = -np.abs(a[7, :])
    a[7, 10], a[7, 20] = -0.0, 0.0
    x = te.placeholder(a.shape, name="x")
    soft, logsoft = run_te([x], [topi.nn.softmax(x), topi.nn.log_softmax(x)], [a])
    with np.errstate(invalid="ignore"):
        expected_soft, expected_log = ref.softmax_python(a), ref.log_softmax_python(a)
    assert np.isnan(expected_soft[:7]).all() and np.isfinite(expected_soft[7]).all()
    np.testing.assert_array_equal(np.isnan(soft), np.isnan(expected_soft))
    np.testing.assert_array_equal(np.isnan(logsoft), np.isnan(expected_log))
    np.testing.assert_allclose(soft[7], expected_soft[7], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(logsoft[7], expected_log[7], rtol=1e-5, atol=1e-5)
