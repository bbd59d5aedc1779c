"""The WindowReduction rule on a two-stage max pool: the row of maxes is computed per
output row inside the parallel row loop, both stages vectorized along the row with
their taps unrolled inside the vector tile."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench
from mlcbench import te, topi
from mlcbench.target import Target
from mlcbench.topi import testing as ref


def _max_pool(shape, kernel=3, stride=2, pad=1):
    x = te.placeholder(shape, name="x")
    out = topi.nn.pool2d(x, (kernel, kernel), (stride, stride), (1, 1), (pad,) * 4, "max")
    return te.create_prim_func([x, out])


def _loops_of(text, block):
    """The loop headers above ``block`` in its nest (the lines between the nest's top and it)."""
    lines = text[:text.index(f'T.block("{block}")')].splitlines()
    return [ln.strip() for ln in lines if ln.strip().startswith("for ")]


def test_the_rule_is_window_reduction(rule_for):
    x = te.placeholder((1, 4, 16, 16), name="x")
    out = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
    assert rule_for([x], out) == "WindowReduction"


@pytest.mark.parametrize("mcpu, row_tile, window_tile", [("znver3", 8, 8), ("znver4", 16, 56)])
def test_row_stage_runs_per_block_of_output_rows_vectorized(default_schedule, mcpu, row_tile,
                                                            window_tile):
    """1x64x112x112, 3x3/2: 8 output rows' rows of maxes (112 columns each, a register a
    tile), then their 8 x 56 outputs (one vector of them on 16 lanes); both under the
    one parallel loop over 64 channels x 7 blocks of rows."""
    text = default_schedule(_max_pool((1, 64, 112, 112)), Target(f"llvm -mcpu={mcpu}")).script()
    assert text.count("T.parallel(") == 1
    rows = _loops_of(text, "pool_row_max_update")
    assert rows == ["for ax0_ax1_ax2_0_fused in T.parallel(448):",
                    f"for ax0, ax1_0 in T.grid(8, {112 // row_tile}):",
                    f"for ax1_1 in T.vectorized({row_tile}):", "for ax2 in T.unroll(3):"]
    window = _loops_of(text[text.index('T.block("pool_max_init")'):], "pool_max_update")
    assert window == ["for rv1 in T.unroll(3):"]
    assert f"in T.vectorized({window_tile}):" in text[text.index("pool_row_max_update"):]


@pytest.mark.parametrize("shape, rows", [((1, 64, 112, 112), 8), ((1, 8, 14, 14), 7),
                                         ((1, 8, 27, 27), 13), ((1, 8, 224, 224), 4)])
def test_row_buffer_holds_a_block_of_rows(default_schedule, shape, rows):
    """The largest divisor of the output rows whose rows of maxes fit in 4 KB: 8 of 56
    rows of 112, all 7 of 14, all 13 of 27, 4 of 112 rows of 224."""
    func = default_schedule(_max_pool(shape, pad=0 if shape[-1] % 2 else 1),
                            Target("llvm -mcpu=znver3"))
    text = mlcbench.lower(mlcbench.IRModule({"main": func})).script()
    width = shape[-1]
    assert f'pool_row_max = T.allocate([{rows * width}], "float32", "global")' in text, text


def test_the_block_of_rows_counts_the_element_size(default_schedule):
    """float16 rows of 224 take 448 bytes: 8 of 112 output rows fit in 4 KB (float32: 4)."""
    x = te.placeholder((1, 8, 224, 224), name="x", dtype="float16")
    out = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1,) * 4, "max")
    func = default_schedule(te.create_prim_func([x, out]), Target("llvm -mcpu=znver3"))
    text = mlcbench.lower(mlcbench.IRModule({"main": func})).script()
    assert 'pool_row_max = T.allocate([1792], "float16", "global")' in text, text


def test_odd_width_rows_are_vectorized_but_their_tail(default_schedule):
    """113 columns: 14 tiles of 8 in vector code, the 113th in the serial version."""
    func = default_schedule(_max_pool((1, 64, 113, 113), pad=0), Target("llvm -mcpu=znver3"))
    text = mlcbench.lower(mlcbench.IRModule({"main": func})).script()
    row_stage = text[:text.index("pool_max_1[")]
    assert "pool_row_max_1[ax0 * 113 + ax1_0 * 8:ax0 * 113 + ax1_0 * 8 + 8] = T.max(" \
        in row_stage
    assert "else:" in row_stage


def test_both_stages_count_toward_the_parallel_threshold(default_schedule):
    """1x832x14x14, 3x3/2: the window stage's 90K taps alone are under
    PARALLEL_MIN_ELEMENTS, with the row stage's 210K the pool is over it."""
    text = default_schedule(_max_pool((1, 832, 14, 14), pad=0), Target("llvm -mcpu=znver4")).script()
    assert "for ax0_ax1_ax2_0_fused in T.parallel(832):" in text, text


def test_small_pools_stay_on_one_thread(default_schedule):
    assert "T.parallel" not in default_schedule(_max_pool((1, 4, 16, 16))).script()


@settings(max_examples=20, deadline=None)
@given(channels=st.integers(1, 3), height=st.integers(3, 12), width=st.integers(3, 40),
       kernel=st.integers(3, 4), dilation=st.integers(1, 2), ceil=st.booleans(),
       data=st.data())
def test_scheduled_two_stage_pool_matches_reference(run_te, channels, height, width, kernel,
                                                    dilation, ceil, data):
    stride = data.draw(st.integers(1, kernel - 1))          # overlapping: two stages
    span = (kernel - 1) * dilation + 1
    # pad + stride <= span: even ceil mode's last window starts inside the input
    pad = data.draw(st.integers(0, min(kernel // 2, span - stride)))
    height, width = max(height, span), max(width, span)
    a = np.random.default_rng(height * width).standard_normal(
        (1, channels, height, width)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    args = ((kernel, kernel), (stride, stride), (dilation, dilation), (pad,) * 4, "max", ceil)
    out = topi.nn.pool2d(x, *args)
    np.testing.assert_array_equal(run_te([x], out, [a]), ref.pool2d_python(a, *args))
