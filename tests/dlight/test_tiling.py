"""The matmul register tile's rows (``tiling.choose_rows``): up to 12 accumulators on
AVX2's 16 registers (a 6 x 16 tile), 16 on AVX-512's 32 (8 x 32), the fullest tiles on
average, a divisor of the rows where two tie."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench
from mlcbench import dlight, te, topi
from mlcbench.dlight.cpu.tiling import MAX_ROWS, accumulator_budget, choose_rows, rows_within
from mlcbench.target import Target


@pytest.mark.parametrize("registers, budget", [(16, 12), (32, 16), (8, 4)])
def test_accumulator_budget_keeps_room_for_the_operands(registers, budget):
    assert accumulator_budget(registers) == budget


@pytest.mark.parametrize("extent, col_vectors, registers, rows", [
    (1024, 2, 16, 6),     # AVX2: 171 tiles of 6 rather than 256 of the divisor 4
    (1024, 2, 32, 8),     # AVX-512: 8 x 32
    (14, 2, 32, 7),       # two tiles either way: the divisor 7, not 8 + 6
    (12, 2, 16, 6),
    (5, 2, 16, 5),        # fewer rows than the budget: all of them
    (64, 1, 16, 12),      # one vector per row: 12 accumulators
])
def test_choose_rows(extent, col_vectors, registers, rows):
    assert choose_rows(extent, col_vectors, registers) == rows


@given(extent=st.integers(1, 3000), col_vectors=st.integers(1, 4),
       registers=st.sampled_from([16, 32]))
def test_rows_never_add_a_tile_and_prefer_a_divisor(extent, col_vectors, registers):
    budget = max(1, min(MAX_ROWS, accumulator_budget(registers) // col_vectors))
    rows = choose_rows(extent, col_vectors, registers)
    assert 1 <= rows <= budget
    fewest = -(-extent // budget)
    assert -(-extent // rows) == fewest
    divisors = [r for r in range(max(1, budget // 2), budget + 1)
                if extent % r == 0 and -(-extent // r) == fewest]
    assert not divisors or extent % rows == 0 or extent <= budget


def test_rows_within_is_the_largest_divisor_down_to_half_the_budget():
    assert rows_within(56, 10) == 8
    assert rows_within(13, 8) == 8          # no divisor from 8 down to 4: a partial tile
    assert rows_within(6, 8) == 6


def _scheduled(m, k, n, target):
    x, w = te.placeholder((m, k), name="A"), te.placeholder((k, n), name="B")
    mod = mlcbench.IRModule({"main": te.create_prim_func([x, w, topi.nn.matmul(x, w)])})
    with target:
        return dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(mod)


@pytest.mark.parametrize("mcpu, rows, cols", [("haswell", 6, 16), ("znver3", 6, 16),
                                              ("znver4", 8, 32)])
def test_1024_matmul_gets_the_wide_register_tile(mcpu, rows, cols):
    text = _scheduled(1024, 1024, 1024, Target(f"llvm -mcpu={mcpu}"))["main"].script()
    assert f"for i_1 in T.unroll({rows}):\n" in text, text
    assert f"for j_1 in T.vectorized({cols}):\n" in text, text


@settings(max_examples=8, deadline=None)
@given(m=st.integers(7, 40), k=st.integers(1, 40), n=st.sampled_from([16, 32, 48]))
def test_partial_row_tiles_built_for_avx2_match_numpy(m, k, n):
    """Built for ``haswell`` (runs on every AVX2 or AVX-512 host): a last row tile of
    fewer than 6 rows writes only its rows."""
    rng = np.random.default_rng(m * 1000 + k * 7 + n)
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    target = Target("llvm -mcpu=haswell")
    lib = mlcbench.build(_scheduled(m, k, n, target), target=target)
    c = np.zeros((m, n), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
