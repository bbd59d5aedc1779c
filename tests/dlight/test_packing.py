"""Packing the vector operand into panels: a transposed source (``B[j, k]``) is gathered
along the vector axis when a panel's rows are short, scattered from its rows when long;
a contiguous source (``B[k, j]``) with rows shorter than PACK_MIN_ROW_BYTES is read in
place."""
import re

import numpy as np
from hypothesis import given, settings, strategies as st

from mlcbench import te, topi
from mlcbench.dlight.cpu.packing import GATHER_SPAN_BYTES, PACK_MIN_ROW_BYTES, \
    TRANSPOSE_RUN
from mlcbench.target import Target

AVX512 = Target("llvm -mcpu=znver4")


def _packing_nest(default_schedule, func):
    """The loops of the packing block (the one writing ``*_global``) and the script."""
    text = default_schedule(func, AVX512).script()
    block = re.search(r'with T\.block\("\w+_global"\)', text).start()
    start = text.rfind("T.parallel", 0, block)
    return text[start:block], text


def test_short_transposed_rows_are_gathered_into_a_panel_row(default_schedule):
    # q @ k^T of attention: k's rows of 64 floats, a 32-row panel spans 8 KB
    a, b = te.placeholder((2, 64, 64), name="a"), te.placeholder((2, 64, 64), name="b")
    y = topi.nn.batch_matmul(a, b, transpose_b=True)
    nest, text = _packing_nest(default_schedule, te.create_prim_func([a, b, y]))
    assert 32 * 64 * 4 <= GATHER_SPAN_BYTES
    assert re.search(rf"for \w+ in range\({TRANSPOSE_RUN}\):\s*"
                     r"for \w+ in T\.vectorized\(32\):", nest), text


def test_long_transposed_rows_are_read_along_the_row_and_scattered(default_schedule):
    # a dense weight of 4096-float rows: a 32-row panel spans 512 KB
    x, w = te.placeholder((64, 4096), name="x"), te.placeholder((64, 4096), name="w")
    nest, text = _packing_nest(default_schedule,
                               te.create_prim_func([x, w, topi.nn.dense(x, w)]))
    assert 32 * 4096 * 4 > GATHER_SPAN_BYTES
    assert re.search(rf"for \w+ in range\(32\):\s*"
                     rf"for \w+ in T\.vectorized\({TRANSPOSE_RUN}\):", nest), text


def _plain_batch_matmul(batch, m, k, n):
    a, b = te.placeholder((batch, m, k), name="a"), te.placeholder((batch, k, n), name="b")
    return te.create_prim_func([a, b, topi.nn.batch_matmul(a, b, transpose_b=False)])


def test_short_contiguous_rows_are_read_in_place(default_schedule):
    """attention's attn @ v: v's rows of 64 floats (256 bytes), 16 row tiles of 8."""
    assert 64 * 4 < PACK_MIN_ROW_BYTES
    text = default_schedule(_plain_batch_matmul(12, 128, 128, 64), AVX512).script()
    assert "_global" not in text, text
    assert re.search(r"b\[v_\w+, v_\w+, v_\w+\]", text), text


def test_long_contiguous_rows_reused_by_enough_row_tiles_are_packed(default_schedule):
    """1024-float rows (4 KB), 128 row tiles: packed into panels of 32."""
    assert 1024 * 4 >= PACK_MIN_ROW_BYTES
    text = default_schedule(_plain_batch_matmul(1, 1024, 256, 1024), AVX512).script()
    assert re.search(r"b_global = T\.alloc_buffer\(\(32, 1, 256, 32\)\)", text), text


def _check_product(run_te, batch, m, n, k, transpose_b):
    rng = np.random.default_rng(batch * 1000 + m * 10 + n)
    av = rng.standard_normal((batch, m, k)).astype("float32")
    bv = rng.standard_normal((batch, n, k) if transpose_b else (batch, k, n)).astype("float32")
    a, b = te.placeholder(av.shape, name="a"), te.placeholder(bv.shape, name="b")
    got = run_te([a, b], topi.nn.batch_matmul(a, b, transpose_b=transpose_b), [av, bv])
    expected = av @ (np.swapaxes(bv, 1, 2) if transpose_b else bv)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), m=st.integers(1, 70), n=st.integers(1, 300),
       k=st.sampled_from([3, 8, 64, 300]))
def test_plain_products_match_numpy(batch, m, n, k, run_te):
    _check_product(run_te, batch, m, n, k, transpose_b=False)


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 3), m=st.integers(1, 40), n=st.integers(1, 70),
       k=st.sampled_from([3, 8, 64, 300, 1200]))
def test_transposed_products_match_numpy(batch, m, n, k, run_te):
    _check_product(run_te, batch, m, n, k, transpose_b=True)
