"""Matrix-vector products: dense on one or a few rows skips packing and sums vector
partial results (rfactor) instead."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench
from mlcbench import te, topi
from mlcbench.dlight.cpu.gemv import (CONSTANT_PARAMS, GEMV_MAX_ROWS, GEMV_TILED_MAX_ROWS,
                                     row_tile, schedule_gemv)
from mlcbench.dlight.cpu.matmul import matmul_block
from mlcbench.tir.schedule import Schedule
from mlcbench.tir.functor import post_order_visit
from mlcbench.tir.stmt import For, ForKind
from mlcbench.target import Target


def _loop_kinds(func) -> set:
    kinds = set()
    post_order_visit(func.body, lambda n: kinds.add(n.kind) if isinstance(n, For) else None)
    return kinds


def _dense_text(default_schedule, m, k, n):
    x, w = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w")
    func = default_schedule(te.create_prim_func([x, w, topi.nn.dense(x, w)]))
    return func, func.script()


def test_one_row_dense_uses_vector_partial_sums_without_packing(default_schedule):
    func, text = _dense_text(default_schedule, 1, 784, 128)
    lanes = Target("llvm").vector_lanes(32)        # 784 = 49 * 16: one vector of partial sums
    assert f"_rf = T.alloc_buffer((1, 128, {lanes}), scope=\"local\")" in text
    assert "_global" not in text            # the weight is not packed
    assert {ForKind.VECTORIZED, ForKind.UNROLLED} <= _loop_kinds(func)
    assert ForKind.PARALLEL not in _loop_kinds(func)


def test_large_gemv_runs_outputs_in_parallel(default_schedule):
    func, text = _dense_text(default_schedule, 1, 1024, 1024)
    assert ForKind.PARALLEL in _loop_kinds(func) and "_rf" in text


def test_many_rows_keep_the_packed_micro_kernel(default_schedule):
    _, text = _dense_text(default_schedule, GEMV_TILED_MAX_ROWS + 1, 784, 128)
    assert "_global" in text and "_rf" not in text


def test_reduction_that_does_not_tile_falls_back(default_schedule, run_te, rng):
    _, text = _dense_text(default_schedule, 1, 7, 5)
    assert "_rf" not in text
    a, b = rng.standard_normal((1, 7)).astype("float32"), rng.standard_normal((5, 7)).astype("float32")
    x, w = te.placeholder((1, 7), name="x"), te.placeholder((5, 7), name="w")
    np.testing.assert_allclose(run_te([x, w], topi.nn.dense(x, w), [a, b]), a @ b.T,
                               rtol=1e-5, atol=1e-5)


@settings(max_examples=8, deadline=None)
@given(m=st.integers(1, GEMV_MAX_ROWS), k=st.sampled_from([16, 24, 40, 64, 200]),
       n=st.integers(1, 41), bias=st.booleans())
def test_gemv_matches_numpy(m, k, n, bias, run_te):
    rng = np.random.default_rng(m * 7919 + k * 31 + n)
    x, w, b = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w"), \
        te.placeholder((n,), name="b")
    a, wt, bb = (rng.standard_normal(s).astype("float32") for s in [(m, k), (n, k), (n,)])
    y = topi.nn.relu(topi.nn.dense(x, w, b if bias else None))
    got = run_te([x, w, b] if bias else [x, w], y, [a, wt, bb] if bias else [a, wt])
    np.testing.assert_allclose(got, np.maximum(a @ wt.T + (bb if bias else 0), 0),
                               rtol=1e-4, atol=1e-4)


def test_batched_gemv_matches_numpy(default_schedule, run_te, rng):
    a = rng.standard_normal((3, 1, 64)).astype("float32")
    b = rng.standard_normal((3, 20, 64)).astype("float32")
    x, y = te.placeholder(a.shape, name="a"), te.placeholder(b.shape, name="b")
    out = topi.nn.batch_matmul(x, y)
    assert "_rf" in default_schedule(te.create_prim_func([x, y, out])).script()
    np.testing.assert_allclose(run_te([x, y], out, [a, b]), a @ b.transpose(0, 2, 1),
                               rtol=1e-4, atol=1e-4)


def _dense_func(m, k, n, constant_weight=False):
    x, w = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w")
    func = te.create_prim_func([x, w, topi.nn.dense(x, w)])
    return func.with_attr(CONSTANT_PARAMS, [1]) if constant_weight else func


def test_up_to_32_rows_go_in_tiles_of_rows(default_schedule):
    """16 rows with a weight passed in, on AVX-512: tiles of 8 rows x 2 outputs inside
    the parallel outputs, each tile's partial sums in half the 32 registers, summed under
    the tile; the weight read where it lies, each of its rows by two tiles."""
    target = Target("llvm -mcpu=znver4")
    text = default_schedule(_dense_func(16, 1024, 1024), target).script()
    assert "_global" not in text, text
    assert re.search(r"for j_0 in T\.parallel\(512\):\s*for i_0 in range\(2\):", text), text
    assert re.search(r"for k_0 in range\(64\):\s*for i_1 in T\.unroll\(8\):\s*"
                     r"for j_1 in T\.unroll\(2\):\s*for k_1 in T\.vectorized\(16\)", text), text
    writeback = text[text.index('T.block("T_matmul_NT")') - 200:text.index('T.block("T_matmul_NT")')]
    assert re.search(r"T\.grid\(16, 8, 2\)", writeback), text


def test_row_tiles_fit_half_the_registers():
    avx512, avx2 = Target("llvm -mcpu=znver4"), Target("llvm -mcpu=znver3")
    assert row_tile(16, avx512) == (8, 2)
    assert row_tile(24, avx512) == (8, 2)
    assert row_tile(12, avx512) == (6, 2)
    assert row_tile(7, avx512) == (7, 2)
    assert row_tile(10, avx512) == (5, 2)
    assert row_tile(3, avx512) == (3, 4)
    # a divisor small enough for four outputs keeps them: 11 rows go one at a time
    assert row_tile(11, avx512) == (1, 4)
    # AVX2's 16 registers keep 2 rows x 4 outputs (4 x 2 ran slower)
    assert row_tile(16, avx2) == (2, 4)
    assert row_tile(5, avx2) == (1, 4)


def test_on_8_lanes_a_few_rows_go_in_tiles_of_two_rows(default_schedule):
    """AVX2's 16 registers: tiles of 2 rows x 4 outputs, 8 accumulators of 8 lanes."""
    text = default_schedule(_dense_func(16, 1024, 1024), Target("llvm -mcpu=znver3")).script()
    assert "_global" not in text, text
    assert re.search(r"for j_0 in T\.parallel\(256\):\s*for i_0 in range\(8\):", text), text
    assert re.search(r"for k_0 in range\(128\):\s*for i_1 in T\.unroll\(2\):\s*"
                     r"for j_1 in T\.unroll\(4\):\s*for k_1 in T\.vectorized\(8\)", text), text


def test_below_8_lanes_a_few_rows_keep_the_packed_micro_kernel(default_schedule):
    """SSE's 4 lanes (``generic``): the tiles of rows were not measured there."""
    text = default_schedule(_dense_func(16, 1024, 1024), Target("llvm -mcpu=generic")).script()
    assert "_global" in text and "_rf" not in text, text


def test_a_constant_weight_keeps_the_packed_micro_kernel(default_schedule):
    """Named constant (PrepackWeights packs it once at build time), the weight of 16 rows
    is packed, and a parameter beyond the function's is ignored."""
    avx512 = Target("llvm -mcpu=znver4")
    text = default_schedule(_dense_func(16, 1024, 1024, constant_weight=True), avx512).script()
    assert "_global" in text and "_rf" not in text, text
    func = _dense_func(16, 64, 64).with_attr(CONSTANT_PARAMS, [7])
    assert "_rf" in default_schedule(func, avx512).script()


@settings(max_examples=10, deadline=None)
@given(m=st.integers(GEMV_MAX_ROWS + 1, GEMV_TILED_MAX_ROWS), k=st.sampled_from([32, 48, 200]),
       n=st.integers(1, 41), mcpu=st.sampled_from(["znver3", "znver4"]))
def test_row_tiles_match_numpy(m, k, n, mcpu):
    """Row counts with and without a dividing tile (a prime count takes tiles of one),
    tiles for AVX2's and AVX-512's register files, each built for the host."""
    func = _dense_func(m, k, n)
    sch = Schedule(func)
    assert schedule_gemv(sch, *matmul_block(sch), Target(f"llvm -mcpu={mcpu}"),
                         max_rows=GEMV_TILED_MAX_ROWS)
    rng = np.random.default_rng(m * 7919 + k * 31 + n)
    a, wt = rng.standard_normal((m, k)).astype("float32"), rng.standard_normal((n, k)).astype("float32")
    out = mlcbench.nd.array(np.zeros((m, n), "float32"))
    mlcbench.build(sch.mod["main"], target="llvm")["main"](mlcbench.nd.array(a),
                                                          mlcbench.nd.array(wt), out)
    np.testing.assert_allclose(out.numpy(), a @ wt.T, rtol=1e-4, atol=1e-4)
