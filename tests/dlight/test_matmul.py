"""The Matmul rule: dense, matmul and batch matmul get the register-blocked kernel."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench
from mlcbench import dlight, te, topi
from mlcbench.script import from_source
from mlcbench.dlight.cpu import Matmul, tiling
from mlcbench.dlight.cpu.gemv import CONSTANT_PARAMS
from mlcbench.dlight.cpu.matmul import (SWAP_MAX_PADDED_ROWS_512, SWAP_MAX_ROWS,
                                        SWAP_MIN_ROWS, padded_rows)
from mlcbench.tir.stmt import For, ForKind
from mlcbench.tir.functor import post_order_visit

from mlcbench.target import Target

TARGET = Target("llvm")


def _loop_kinds(func) -> set:
    kinds = set()
    post_order_visit(func.body, lambda n: kinds.add(n.kind) if isinstance(n, For) else None)
    return kinds


@pytest.mark.parametrize("make", [
    lambda: (lambda x, w: topi.nn.dense(x, w))(te.placeholder((5, 7)), te.placeholder((3, 7))),
    lambda: topi.nn.matmul(te.placeholder((5, 7)), te.placeholder((7, 3))),
    lambda: topi.nn.batch_matmul(te.placeholder((2, 5, 7)), te.placeholder((2, 3, 7))),
])
def test_applies_to_matmul_shapes(make):
    out = make()
    func = te.create_prim_func(list(out.op.input_tensors) + [out])
    assert Matmul().apply(func, TARGET) is not None


@pytest.mark.parametrize("make", [
    lambda x: topi.nn.conv2d_nchw(x, te.placeholder((2, 3, 3, 3)), 1, 1, 1),
    lambda x: topi.nn.softmax(x),
    lambda x: topi.add(x, x),
    lambda x: topi.sum(x, axis=1),
])
def test_does_not_apply_to_other_ops(make):
    x = te.placeholder((1, 3, 8, 8))
    out = make(x)
    func = te.create_prim_func([x, out] if out.op.input_tensors == [x] else
                               [x, *[t for t in out.op.input_tensors if t is not x], out])
    assert Matmul().apply(func, TARGET) is None


def test_large_dense_is_parallel_unrolled_and_vectorized(rule_for, default_schedule):
    x, w = te.placeholder((128, 96), name="x"), te.placeholder((128, 96), name="w")
    y = topi.nn.relu(topi.nn.dense(x, w))
    assert rule_for([x, w], y) == "Matmul"
    scheduled = default_schedule(te.create_prim_func([x, w, y]))
    kinds = _loop_kinds(scheduled)
    assert {ForKind.PARALLEL, ForKind.VECTORIZED, ForKind.UNROLLED} <= kinds
    assert "local" in scheduled.script() and "T.max(" in scheduled.script()


@settings(max_examples=6, deadline=None)
@given(m=st.integers(1, 20), k=st.integers(1, 40), n=st.integers(1, 70), bias=st.booleans())
def test_dense_matches_numpy_for_any_size(m, k, n, bias, run_te):
    rng = np.random.default_rng(m * 1000 + n)
    x, w, b = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w"), \
        te.placeholder((n,), name="b")
    a, wt, bb = (rng.standard_normal(s).astype("float32") for s in [(m, k), (n, k), (n,)])
    y = topi.nn.relu(topi.nn.dense(x, w, b if bias else None))
    got = run_te([x, w, b] if bias else [x, w], y, [a, wt, bb] if bias else [a, wt])
    np.testing.assert_allclose(got, np.maximum(a @ wt.T + (bb if bias else 0), 0),
                               rtol=1e-4, atol=1e-4)


def test_batch_matmul_odd_sizes(run_te, rng):
    a = rng.standard_normal((3, 13, 7)).astype("float32")
    b = rng.standard_normal((3, 7, 1000)).astype("float32")
    x, y = te.placeholder(a.shape, name="a"), te.placeholder(b.shape, name="b")
    got = run_te([x, y], topi.nn.matmul(x, y), [a, b])
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


SYMBOLIC_MATMUL = '''
@T.prim_func
def mm(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 16), "float32")
    B = T.match_buffer(b, (16, 32), "float32")
    C = T.match_buffer(c, (n, 32), "float32")
    for i, j, k in T.grid(n, 32, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def test_symbolic_extent_is_left_to_later_rules_and_still_runs(rng):
    func = from_source(SYMBOLIC_MATMUL)
    assert Matmul().apply(func, TARGET) is None
    mod = mlcbench.IRModule({"mm": func})
    mod = dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(mod)
    a = rng.standard_normal((7, 16)).astype("float32")
    b = rng.standard_normal((16, 32)).astype("float32")
    c = np.zeros((7, 32), "float32")
    mlcbench.build(mod)["mm"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mcpu", ["znver3", "znver4"])
def test_one_row_times_a_kj_weight_reads_wide_packed_panels(mcpu):
    """``x[1, k] @ B[k, j]`` (ONNX's Gemm with transB imports its weight so): B is packed
    into panels (at build time when it is a constant) and the vector tile widened to the
    accumulators the single row leaves free (8 of 16 registers, 16 of 32), so every
    step of k reads one contiguous run instead of 64 bytes of a long strided row."""
    target = Target(f"llvm -mcpu={mcpu}")
    x, b = te.placeholder((1, 2048), name="x"), te.placeholder((2048, 1024), name="b")
    func = te.create_prim_func([x, b, topi.nn.matmul(x, b)])
    text = Matmul().apply(func, target).mod["main"].script()
    cols = target.vector_registers // 2 * target.vector_lanes(32)
    assert f"b_global = T.alloc_buffer(({1024 // cols}, 2048, {cols}))" in text, text
    assert f"T.vectorized({cols}):\n" in text and "T.parallel(" in text, text


def test_many_rows_keep_the_register_tile_and_contiguous_operand(default_schedule,
                                                                named_target):
    x, b = te.placeholder((64, 512), name="x"), te.placeholder((512, 1024), name="b")
    func = te.create_prim_func([x, b, topi.nn.matmul(x, b)])
    text = default_schedule(func, named_target).script()
    lanes = named_target.vector_lanes(32)
    assert f"T.vectorized({2 * lanes})" in text and f"T.vectorized({8 * lanes})" not in text


@settings(max_examples=8, deadline=None)
@given(m=st.integers(1, 4), k=st.integers(1, 70), n=st.integers(1, 300))
def test_few_rows_times_a_kj_weight_match_numpy(m, k, n, run_te):
    rng = np.random.default_rng(m * 1000 + k * 7 + n)
    a = rng.standard_normal((m, k)).astype("float32")
    bt = rng.standard_normal((k, n)).astype("float32")
    x, b = te.placeholder(a.shape, name="x"), te.placeholder(bt.shape, name="b")
    np.testing.assert_allclose(run_te([x, b], topi.nn.matmul(x, b), [a, bt]), a @ bt,
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n, narrow", [(10, 5), (14, 7), (9, 9)])
def test_columns_between_one_and_two_registers_split_into_whole_vectors(n, narrow,
                                                                        named_target):
    """On 8 lanes 10 columns are two vectors of 5 (a ``<10 x float>`` accumulator is
    taken apart lane by lane on every step of k) with 12 rows, one accumulator each; 9
    (no divisor fills half a register) stays whole. On 16 lanes each is one vector."""
    x, w = te.placeholder((64, 128), name="x"), te.placeholder((128, n), name="w")
    func = te.create_prim_func([x, w, topi.nn.matmul(x, w)])
    text = Matmul().apply(func, named_target).mod["main"].script()
    lanes = named_target.vector_lanes(32)
    width = narrow if lanes == 8 else n
    assert f"T.vectorized({width}):\n" in text, text
    assert width == n or f"T.vectorized({n})" not in text, text
    if width != n:      # AVX2's 16 registers: 12 accumulators, rows of one vector
        assert "T.unroll(12)" in text, text


@settings(max_examples=8, deadline=None)
@given(m=st.integers(1, 70), k=st.integers(1, 40), n=st.integers(9, 33), dense=st.booleans())
def test_odd_column_counts_match_numpy(m, k, n, dense, run_te):
    rng = np.random.default_rng(m * 1000 + k * 7 + n)
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((n, k) if dense else (k, n)).astype("float32")
    x, w = te.placeholder(a.shape, name="x"), te.placeholder(b.shape, name="w")
    out = topi.nn.dense(x, w) if dense else topi.nn.matmul(x, w)
    np.testing.assert_allclose(run_te([x, w], out, [a, b]), a @ (b.T if dense else b),
                               rtol=1e-4, atol=1e-4)


def _parallel_loop(func):
    loops = []
    post_order_visit(func.body, lambda n: loops.append(n) if isinstance(n, For)
                     and n.kind == ForKind.PARALLEL else None)
    return loops


def test_column_tiles_go_in_groups_whose_panels_fit_l2(default_schedule, named_target):
    """1024^3: 32 column panels of 1024 x 32 floats (128 KB, AVX-512) or 64 of 1024 x 16
    (64 KB, AVX2) outgrow ``PANEL_GROUP_BYTES`` (256 KB), so the fused parallel loop is
    ``column group > row tile > column tile in group``: 2 or 4 panels per group."""
    x, b = te.placeholder((1024, 1024), name="x"), te.placeholder((1024, 1024), name="b")
    func = te.create_prim_func([x, b, topi.nn.matmul(x, b)])
    scheduled = default_schedule(func, named_target)
    lanes = named_target.vector_lanes(32)
    # AVX2: 6 rows (12 accumulators), 171 row tiles, the last one partial
    rows, cols = (8, 32) if lanes == 16 else (6, 16)
    row_tiles = -(-1024 // rows)
    group = (256 << 10) // (1024 * cols * 4)
    loop = _parallel_loop(scheduled)[-1]
    assert loop.loop_var.name == "j_0_0_i_0_j_0_1_fused", scheduled.script()
    assert int(loop.extent.value) == (1024 // cols) * row_tiles
    # column tile = group index * group + tile in group; row tile in between
    fused = "j_0_0_i_0_j_0_1_fused"
    assert (f"({fused} // {row_tiles * group} * {group} + {fused} % {group}) * {cols}"
            in scheduled.script()), scheduled.script()


def test_panels_that_fit_keep_rows_outside_columns(default_schedule, named_target):
    x, b = te.placeholder((256, 64), name="x"), te.placeholder((64, 256), name="b")
    scheduled = default_schedule(te.create_prim_func([x, b, topi.nn.matmul(x, b)]),
                                 named_target)
    assert [lp.loop_var.name for lp in _parallel_loop(scheduled)][-1] == "i_0_j_0_fused"


def test_column_tiles_with_no_divisor_in_the_budget_put_columns_outside_rows(
        default_schedule, monkeypatch):
    """7 column tiles of 64 KB each with room for 2 per group: no group divides 7, so
    each panel is one group and the column tile loop goes outside the row tiles."""
    monkeypatch.setattr(tiling, "PANEL_GROUP_BYTES", 128 << 10)
    target = Target("llvm -mcpu=znver3")
    x, b = te.placeholder((64, 1024), name="x"), te.placeholder((1024, 7 * 16), name="b")
    scheduled = default_schedule(te.create_prim_func([x, b, topi.nn.matmul(x, b)]), target)
    assert _parallel_loop(scheduled)[-1].loop_var.name == "j_0_i_0_fused", scheduled.script()


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(0, 2), m=st.integers(2, 40), k=st.integers(1, 48),
       n=st.integers(1, 200), budget=st.sampled_from([1 << 10, 4 << 10, 16 << 10]),
       dense=st.booleans())
def test_grouped_column_tiles_match_numpy(batch, m, k, n, budget, dense, run_te):
    """Small budgets put any shape into groups (of one or more panels, with partial
    row and column tiles and epilogues)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tiling, "PANEL_GROUP_BYTES", budget)
        rng = np.random.default_rng(batch * 10_000 + m * 1000 + k * 7 + n)
        lead = (batch,) if batch else ()
        a = rng.standard_normal(lead + (m, k)).astype("float32")
        b = rng.standard_normal(lead + ((n, k) if dense else (k, n))).astype("float32")
        x, w = te.placeholder(a.shape, name="x"), te.placeholder(b.shape, name="w")
        if batch:
            out = topi.nn.batch_matmul(x, w, transpose_b=dense)
        else:
            out = topi.nn.dense(x, w) if dense else topi.nn.matmul(x, w)
        got = run_te([x, w], topi.nn.relu(out), [a, b])
    expected = a @ (np.swapaxes(b, -1, -2) if dense else b)
    np.testing.assert_allclose(got, np.maximum(expected, 0), rtol=1e-4, atol=1e-4)


def _dense_func(m, k, n, constant_weight=False, bias=False):
    x, w = te.placeholder((m, k), name="x"), te.placeholder((n, k), name="w")
    out = topi.nn.dense(x, w)
    args = [x, w]
    if bias:
        b = te.placeholder((n,), name="b")
        out = topi.nn.relu(topi.add(out, b))
        args.append(b)
    func = te.create_prim_func(args + [out])
    return func.with_attr(CONSTANT_PARAMS, [1]) if constant_weight else func


def test_rows_in_whole_vector_tiles_pack_x_and_read_the_weight_in_place(default_schedule,
                                                                       named_target):
    """``x[64, k] @ W[1024, k]^T`` with the weight an argument: x's 64 rows are the vector
    axis (two tiles of 32 on AVX-512, four of 16 on AVX2), packed once at the head; the
    weight's rows are the register tile's rows, each read where it lies; the column
    tiles of x run outside the weight's tiles; the accumulators, stored output column
    by output row, are transposed as each tile is written."""
    lanes = named_target.vector_lanes(32)
    cols, rows = 2 * lanes, (8 if lanes == 16 else 6)
    scheduled = default_schedule(_dense_func(64, 512, 1024), named_target)
    text = scheduled.script()
    assert f"x_global = T.alloc_buffer(({64 // cols}, 512, {cols}))" in text, text
    assert "w_global" not in text and "_rf" not in text, text
    assert 'T_matmul_NT_local = T.alloc_buffer((1024, 64), scope="local")' in text, text
    _, product = _parallel_loop(scheduled)     # x's packing, then the product
    assert text.index('T.block("x_global")') < text.index(product.loop_var.name), text
    assert product.loop_var.name == "i_0_j_0_fused", text
    assert int(product.extent.value) == (64 // cols) * -(-1024 // rows)
    assert re.search(rf"for j_1 in T\.unroll\({rows}\):\s*for i_1 in T\.vectorized\({cols}\):",
                     text), text
    assert "x_global[v_i // {0}, v_k, v_i % {0}] * w[v_j, v_k]".format(cols) in text, text
    assert "T_matmul_NT[v0, v1] = T_matmul_NT_local[v1, v0]" in text, text


@pytest.mark.parametrize("mcpu", ["znver3", "znver4"])
def test_32_rows_pack_x_rather_than_go_in_tiles_of_rows(mcpu, default_schedule):
    """Up to 32 rows go in tiles of rows (``test_gemv.py``), except whole vector tiles of
    ``SWAP_MIN_ROWS`` rows or more: 32x1024x1024 took 0.44 ms in tiles of rows and 0.34
    with x packed (2-core Zen 4). 16 rows, whole tiles on AVX2, stay in tiles of rows."""
    target = Target(f"llvm -mcpu={mcpu}")
    cols = 2 * target.vector_lanes(32)
    text = default_schedule(_dense_func(32, 1024, 1024), target).script()
    assert f"x_global = T.alloc_buffer(({32 // cols}, 1024, {cols}))" in text, text
    assert "_rf" not in text, text
    assert "_rf" in default_schedule(_dense_func(16, 1024, 1024), target).script()


def test_rows_are_padded_to_whole_vector_tiles_up_to_a_quarter_more():
    assert padded_rows(40, 16) == 48 and padded_rows(200, 32) == 224
    assert padded_rows(64, 32) == 64
    assert padded_rows(48, 32) is None and padded_rows(33, 16) is None


@pytest.mark.parametrize("mcpu, m, padded", [("znver3", 40, 48), ("znver3", 200, 208),
                                             ("znver4", 56, 64), ("znver4", 120, 128)])
def test_rows_in_no_whole_vector_tile_pack_x_padded_with_zero_rows(mcpu, m, padded,
                                                                  default_schedule):
    """x's panels are filled with zeros past its rows, the accumulators and the product
    run whole tiles with no bound test on the rows, and only the write-back tests it."""
    target = Target(f"llvm -mcpu={mcpu}")
    cols = 2 * target.vector_lanes(32)
    text = default_schedule(_dense_func(m, 256, 1024), target).script()
    assert f"x_global = T.alloc_buffer(({padded // cols}, 256, {cols}))" in text, text
    assert f"T.if_then_else(v0 < {m}, x[v0, v1], T.float32(0))" in text, text
    assert f'T_matmul_NT_local = T.alloc_buffer((1024, {padded}), scope="local")' in text
    update = text[text.index('T.block("T_matmul_NT_update")'):]
    update = update[:update.index("T_matmul_NT_local[v_j, v_i] =")]
    assert f"v_i = T.axis.spatial({padded}," in update, text
    assert f"< {m})" not in update and f"<= {m - 1})" not in update, text
    assert f"<= {m - 1}" in text[text.index('T.block("T_matmul_NT_local")') - 300:], text


@pytest.mark.parametrize("m, k, n, constant", [
    (64, 512, 1024, True),      # the weight packed once at build time
    (48, 512, 1024, False),     # padded to whole AVX-512 tiles, a third more rows
    (200, 512, 1024, False),    # padded, more than SWAP_MAX_PADDED_ROWS_512
    (64, 512, 64, False),       # no fewer rows than columns
    (288, 256, 1024, False),    # more than SWAP_MAX_ROWS
])
def test_other_products_keep_packing_the_weight(m, k, n, constant, default_schedule):
    text = default_schedule(_dense_func(m, k, n, constant), Target("llvm -mcpu=znver4")).script()
    assert "w_global" in text and "x_global" not in text, text


def test_a_contiguous_weight_is_never_swapped(default_schedule, named_target):
    x, b = te.placeholder((64, 512), name="x"), te.placeholder((512, 1024), name="b")
    text = default_schedule(te.create_prim_func([x, b, topi.nn.matmul(x, b)]),
                            named_target).script()
    assert "x_global" not in text, text


def test_a_batched_product_with_few_rows_packs_its_rows(default_schedule, named_target):
    """Attention-like ``a[8, 64, k] @ b[8, 128, k]^T``: ``a`` is packed per head."""
    a, b = te.placeholder((8, 64, 256), name="a"), te.placeholder((8, 128, 256), name="b")
    text = default_schedule(te.create_prim_func(
        [a, b, topi.nn.batch_matmul(a, b, transpose_b=True)]), named_target).script()
    cols = 2 * named_target.vector_lanes(32)
    assert f"a_global = T.alloc_buffer(({64 // cols}, 8, 256, {cols}))" in text, text
    assert "b_global" not in text, text


@settings(max_examples=12, deadline=None)
@given(m=st.one_of(st.sampled_from([16, 32, 64, 96, 128, 256]), st.integers(17, 256)),
       k=st.sampled_from([1, 7, 64, 300]),
       extra=st.integers(1, 200), bias=st.booleans(), batch=st.integers(0, 3),
       mcpu=st.sampled_from(["znver3", "znver4"]))
def test_products_packing_their_rows_match_numpy(m, k, extra, bias, batch, mcpu,
                                                 default_schedule):
    """Weights with partial row tiles (``n`` any count above ``m``), rows padded to whole
    vector tiles, reductions of any length, a bias and relu fused into the transposed
    write, batched products; scheduled for AVX2's and AVX-512's tiles, built for the
    host."""
    n = m + extra
    rng = np.random.default_rng(m * 7919 + k * 31 + extra * 3 + batch)
    lead = (batch,) if batch else ()
    a = rng.standard_normal(lead + (m, k)).astype("float32")
    wt = rng.standard_normal(lead + (n, k)).astype("float32")
    bv = rng.standard_normal(n).astype("float32")
    if batch:
        x, w = te.placeholder(a.shape, name="x"), te.placeholder(wt.shape, name="w")
        func = te.create_prim_func([x, w, topi.nn.batch_matmul(x, w, transpose_b=True)])
        expected, arrays = a @ np.swapaxes(wt, -1, -2), [a, wt]
    else:
        func = _dense_func(m, k, n, bias=bias)
        expected = a @ wt.T
        expected, arrays = (np.maximum(expected + bv, 0), [a, wt, bv]) if bias \
            else (expected, [a, wt])
    scheduled = default_schedule(func, Target(f"llvm -mcpu={mcpu}"))
    lanes = Target(f"llvm -mcpu={mcpu}").vector_lanes(32)
    padded = padded_rows(m, 2 * lanes)
    cap = SWAP_MAX_PADDED_ROWS_512 if lanes == 16 else SWAP_MAX_ROWS
    if m >= SWAP_MIN_ROWS and padded is not None and (padded == m or padded <= cap) \
            and k > 1:
        assert "x_global" in scheduled.script()
    out = mlcbench.nd.array(np.zeros(expected.shape, "float32"))
    mlcbench.build(scheduled, target="llvm")["main"](
        *[mlcbench.nd.array(v) for v in arrays], out)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mcpu, ahead", [("cascadelake", 4), ("skylake-avx512", 4),
                                         ("znver4", None), ("haswell", None)])
def test_the_tile_k_loop_prefetches_the_panel_on_skylake_sp_cores(mcpu, ahead):
    from mlcbench.dlight.cpu.matmul import PREFETCH_AHEAD
    from mlcbench.tir.transform.inject_prefetch import PREFETCH_ANNOTATION
    x, w = te.placeholder((256, 256), name="A"), te.placeholder((256, 256), name="B")
    func = te.create_prim_func([x, w, topi.nn.matmul(x, w)])
    sch = Matmul().apply(func, Target(f"llvm -mcpu={mcpu}"))
    annotated = []
    post_order_visit(sch.mod["main"].body, lambda n: annotated.append(n) if isinstance(n, For)
                     and PREFETCH_ANNOTATION in (n.annotations or {}) else None)
    if ahead is None:
        assert annotated == []
        return
    assert PREFETCH_AHEAD == ahead
    (k_loop,) = annotated
    assert k_loop.loop_var.name == "k" and int(k_loop.annotations[PREFETCH_ANNOTATION]) == ahead
    # The loop feeds the register tile: the rows unrolled, the columns vectorized.
    assert k_loop.body.kind == ForKind.UNROLLED and k_loop.body.body.kind == ForKind.VECTORIZED


def test_a_weight_packed_in_the_tasks_is_prefetched_too():
    from mlcbench.tir.transform.inject_prefetch import PREFETCH_ANNOTATION
    x, w = te.placeholder((128, 1024), name="x"), te.placeholder((1024, 1024), name="w")
    func = te.create_prim_func([x, w, topi.nn.dense(x, w)])
    sch = Matmul().apply(func, Target("llvm -mcpu=cascadelake"))
    loops = []
    post_order_visit(sch.mod["main"].body, lambda n: loops.append(n) if isinstance(n, For)
                     else None)
    # The weight's panel is packed inside the parallel task that reads it ...
    assert any(n.kind == ForKind.PARALLEL and "_global" in n.body.script() for n in loops)
    annotated = [n for n in loops if PREFETCH_ANNOTATION in (n.annotations or {})]
    # ... and the k loop over it is the one annotated.
    assert [n.loop_var.name for n in annotated] == ["k"]
    assert annotated[0].body.kind == ForKind.UNROLLED
