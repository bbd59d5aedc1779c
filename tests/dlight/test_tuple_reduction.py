"""Reductions with several independent outputs (layer_norm's sum and sum of squares)
are split into one block per output, so each gets vector partial sums."""
import numpy as np
from hypothesis import given, settings, strategies as st

from mlcbench import te, topi
from mlcbench.dlight.cpu.tuple_reduction import split_tuple_reductions


def _layer_norm(rows, cols):
    x = te.placeholder((rows, cols), name="x")
    g, b = te.placeholder((cols,), name="g"), te.placeholder((cols,), name="b")
    return [x, g, b], topi.nn.layer_norm(x, g, b, [1])


def test_layer_norm_reduction_splits_into_one_block_per_output():
    inputs, out = _layer_norm(7, 13)
    text = split_tuple_reductions(te.create_prim_func(inputs + [out])).script()
    assert 'T.block("T_layer_norm_red_temp_v0")' in text
    assert 'T.block("T_layer_norm_red_temp_v1")' in text
    assert 'T.block("T_layer_norm_red_temp")' not in text


def test_layer_norm_sums_use_local_vector_partials(default_schedule, named_target):
    """One vector of partial sums per row and per output: 8 lanes on AVX2, 16 on AVX-512."""
    inputs, out = _layer_norm(128, 768)
    text = default_schedule(te.create_prim_func(inputs + [out]), named_target).script()
    lanes = named_target.vector_lanes(32)
    for output in ("v0", "v1"):
        assert (f'T_layer_norm_red_temp_{output}_rf = T.alloc_buffer((128, {lanes}), '
                'scope="local")') in text, text


def test_dependent_outputs_stay_one_block():
    """argmax's index output reads its value output: splitting would change it."""
    x = te.placeholder((7, 13), name="x")
    func = te.create_prim_func([x, topi.argmax(x, axis=1)])
    assert split_tuple_reductions(func) is func


@settings(max_examples=12, deadline=None)
@given(rows=st.sampled_from([1, 7, 13]), cols=st.sampled_from([7, 13, 16, 48, 1000]))
def test_layer_norm_matches_numpy(run_te, rows, cols):
    rng = np.random.default_rng(rows * cols)
    a = (rng.standard_normal((rows, cols)) + 2).astype("float32")
    g, b = rng.standard_normal(cols).astype("float32"), rng.standard_normal(cols).astype("float32")
    inputs, out = _layer_norm(rows, cols)
    mean, var = a.mean(axis=1, keepdims=True), a.var(axis=1, keepdims=True)
    np.testing.assert_allclose(run_te(inputs, out, [a, g, b]),
                               (a - mean) / np.sqrt(var + 1e-5) * g + b, rtol=1e-4, atol=1e-4)
