"""Packing the vector operand into panels: a transposed source (``B[j, k]``) is gathered
along the vector axis when a panel's rows are short, scattered from its rows when long;
a contiguous source (``B[k, j]``) with rows shorter than PACK_MIN_ROW_BYTES is read in
place. A transposed operand (gathered where a batched one has short rows, else in 8 x 8
blocks) and a contiguous weight that few row tiles read are packed a panel per parallel
task (given enough column tiles)."""
import re

import numpy as np
from hypothesis import given, settings, strategies as st

from mlcbench import te, topi
from mlcbench.dlight.cpu.gemv import CONSTANT_PARAMS
from mlcbench.dlight.cpu.matmul import SWAP_MIN_ROWS, padded_rows
from mlcbench.dlight.cpu.packing import GATHER_SPAN_BYTES, PACK_MIN_ROW_BYTES, \
    TASK_MAX_ROW_TILES, TRANSPOSE_RUN
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
    # a dense weight of 4096-float rows: a 32-row panel spans 512 KB; two column tiles,
    # too few for a panel per task: packed at the head
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


def _batched_nt(batch, m, n, k):
    a, b = te.placeholder((batch, m, k), name="a"), te.placeholder((batch, n, k), name="b")
    return te.create_prim_func([a, b, topi.nn.batch_matmul(a, b, transpose_b=True)])


def _parallel_bodies(text):
    """The text under each ``T.parallel`` loop (up to the next one)."""
    starts = [m.start() for m in re.finditer(r"T\.parallel\(", text)]
    return [text[s:e] for s, e in zip(starts, starts[1:] + [len(text)])]


def test_a_batched_transposed_operand_is_packed_in_each_task(default_schedule):
    """q @ k^T of attention (12 heads, 128 x 128, head size 64): one parallel loop over
    heads x column tiles, in which each task gathers its 32 x 64 panel of k, then runs
    its 16 row tiles over it."""
    text = default_schedule(_batched_nt(12, 128, 128, 64), AVX512).script()
    (body,) = _parallel_bodies(text)
    assert body.startswith("T.parallel(48)"), text
    panel = re.search(r"for (\w+) in range\(64\):\s*for (\w+) in T\.vectorized\(32\):\s*"
                      r'with T\.block\("b_global"\)', body)
    assert panel, text
    assert body.index('T.block("b_global")') < body.index("for i_0 in range(16):"), text
    assert "b_global[v1 // 32, v0, v2, v1 % 32] = b[v0, v1, v2]" in body, text


def _dense(m, k, n):
    """A dense whose weight is a constant, as PrepackWeights marks it: the weight is
    packed whatever the rows (with an argument weight, rows that fill vector tiles
    would pack ``x`` instead, ``test_matmul.py``)."""
    x, w = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w")
    func = te.create_prim_func([x, w, topi.nn.dense(x, w)])
    return func.with_attr(CONSTANT_PARAMS, [1])


def test_a_weight_is_packed_in_each_task_in_square_blocks(default_schedule):
    """A dense weight ``W[j, k]`` (768 x 768, a 96 KB panel): one parallel loop over the
    24 column tiles, in which each task copies its panel in 8 x 8 blocks, then runs its
    15 row tiles. A block is read into ``w_local`` a row of 8 contiguous elements at a
    time, then stored into the panel a column at a time."""
    text = default_schedule(_dense(120, 768, 768), AVX512).script()
    (body,) = _parallel_bodies(text)
    assert body.startswith("T.parallel(24)"), text
    run = TRANSPOSE_RUN
    block = rf"T\.grid\({768 // run}, {32 // run}\):\s*" \
            rf"for (\w+) in T\.unroll\({run}\):\s*for (\w+) in T\.vectorized\({run}\):\s*" \
            r'with T\.block\("w_local"\):\s*' \
            r"v0 = T\.axis\.spatial\(768, [^\n]*\+ \1\)\s*" \
            r"v1 = T\.axis\.spatial\(768, [^\n]*\+ \2\)" \
            rf".*?for (\w+) in T\.unroll\({run}\):\s*for (\w+) in T\.vectorized\({run}\):\s*" \
            r'with T\.block\("w_global"\):\s*' \
            r"v0 = T\.axis\.spatial\(768, [^\n]*\+ \4\)\)\s*" \
            r"v1 = T\.axis\.spatial\(768, [^\n]*\+ \3\)"
    assert re.search(block, body, re.S), text
    assert body.index('T.block("w_global")') < body.index("for i_0 in range(15):"), text
    assert "w_local[v0, v1] = w[v0, v1]" in body, text
    assert "w_global[v0 // 32, v1, v0 % 32] = w_local[v0, v1]" in body, text


def test_a_weight_with_too_few_column_tiles_keeps_its_packing_at_the_head(default_schedule):
    """128 columns are 4 tiles of 32: the row tiles join the parallel loop, where a
    panel per task would be copied once per row tile."""
    text = default_schedule(_dense(128, 768, 128), AVX512).script()
    first, *rest = _parallel_bodies(text)
    assert 'T.block("w_global")' in first and "_update" not in first, text
    assert rest and all('T.block("w_global")' not in b for b in rest), text


def test_a_weight_with_long_rows_is_packed_in_each_task_too(default_schedule):
    """Rows of 4096 floats: 512 KB panels, each filled and read by its own task."""
    text = default_schedule(_dense(120, 4096, 1024), AVX512).script()
    (body,) = _parallel_bodies(text)
    assert body.index('T.block("w_global")') < body.index("_update"), text


def _matmul(m, k, n):
    x, w = te.placeholder((m, k), name="x"), te.placeholder((k, n), name="w")
    return te.create_prim_func([x, w, topi.nn.matmul(x, w)])


def test_a_contiguous_weight_read_by_few_row_tiles_is_packed_in_each_task(default_schedule):
    """``B[k, j]`` with 4 KB rows, 16 row tiles: each task copies its panel a vector of
    32 columns at a time, then runs its row tiles."""
    text = default_schedule(_matmul(128, 512, 1024), AVX512).script()
    (body,) = _parallel_bodies(text)
    assert re.search(r"for \w+ in range\(512\):\s*for \w+ in T\.vectorized\(32\):\s*"
                     r'with T\.block\("w_global"\)', body), text
    assert body.index('T.block("w_global")') < body.index("for i_0 in range(16):"), text
    assert "w_global[v1 // 32, v0, v1 % 32] = w[v0, v1]" in body, text


def test_a_contiguous_weight_read_by_many_row_tiles_keeps_its_packing_at_the_head(
        default_schedule):
    rows = 8 * (TASK_MAX_ROW_TILES + 1)
    text = default_schedule(_matmul(rows, 512, 1024), AVX512).script()
    first, *rest = _parallel_bodies(text)
    assert 'T.block("w_global")' in first and "_update" not in first, text


@settings(max_examples=5, deadline=None)
@given(m=st.integers(32, 200), n=st.sampled_from([1024, 1056]), k=st.sampled_from([1, 7, 64]))
def test_contiguous_weights_packed_in_tasks_match_numpy(m, n, k, run_te, default_schedule):
    rng = np.random.default_rng(m * 1000 + n + k)
    xv, wv = rng.standard_normal((m, k), "float32"), rng.standard_normal((k, n), "float32")
    x, w = te.placeholder(xv.shape, name="x"), te.placeholder(wv.shape, name="w")
    got = run_te([x, w], topi.nn.matmul(x, w), [xv, wv])
    np.testing.assert_allclose(got, xv @ wv, rtol=1e-4, atol=1e-3)
    text = default_schedule(_matmul(m, k, n), AVX512).script()
    assert len(re.findall(r"^    for ", text, re.M)) == 1, text


@settings(max_examples=10, deadline=None)
@given(m=st.integers(5, 130), n=st.sampled_from([512, 544, 768]),
       k=st.sampled_from([1, 7, 64, 300]))
def test_weights_packed_in_tasks_match_numpy(m, n, k, run_te, default_schedule):
    """Reductions that are no multiple of the block (7, 300) and partial row tiles; the
    host's target for the numbers, AVX-512 for the nest."""
    rng = np.random.default_rng(m * 1000 + n + k)
    xv, wv = rng.standard_normal((m, k), "float32"), rng.standard_normal((n, k), "float32")
    x, w = te.placeholder(xv.shape, name="x"), te.placeholder(wv.shape, name="w")
    got = run_te([x, w], topi.nn.dense(x, w), [xv, wv])
    np.testing.assert_allclose(got, xv @ wv.T, rtol=1e-4, atol=1e-3)
    text = default_schedule(_dense(m, k, n), AVX512).script()
    # one nest at the root: the panel is filled inside the product's outer loop
    assert len(re.findall(r"^    for ", text, re.M)) == 1, text


def test_long_batched_rows_are_packed_in_each_task_in_square_blocks(default_schedule):
    """Rows of 2048 floats (8 KB): a panel of 32 of them spans 256 KB, past
    GATHER_SPAN_BYTES, and gathering 32 rows a page or more apart would fall into one
    L1 set; each task copies its panel in 8 x 8 blocks through ``b_local``."""
    assert 32 * 2048 * 4 > GATHER_SPAN_BYTES and 2048 * 4 >= PACK_MIN_ROW_BYTES
    text = default_schedule(_batched_nt(8, 72, 128, 2048), AVX512).script()
    (body,) = _parallel_bodies(text)
    assert body.index('T.block("b_local")') < body.index('T.block("b_global")') \
        < body.index("_update"), text
    assert f"T.unroll({TRANSPOSE_RUN})" in body.split('T.block("b_global")')[0], text


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(4, 12),
       m=st.integers(8, 130).filter(lambda m: m < SWAP_MIN_ROWS or padded_rows(m, 32) is None),
       n=st.sampled_from([64, 96, 128, 160]),
       k=st.sampled_from([1, 8, 64, 100, 1030]))
def test_products_packed_in_tasks_match_numpy(batch, m, n, k, run_te, default_schedule):
    """Shapes that put the packing in the tasks on a 16-lane target (and the host's
    target for the numbers), with partial row tiles; rows of 1030 floats are copied in
    8 x 8 blocks, the last one partial."""
    _check_product(run_te, batch, m, n, k, transpose_b=True)
    text = default_schedule(_batched_nt(batch, m, n, k), AVX512).script()
    if batch * n // 32 >= 16:      # heads x column tiles enough for the threads
        # one nest at the root: the panel is filled inside the product's outer loop
        assert len(re.findall(r"^    for ", text, re.M)) == 1, text
