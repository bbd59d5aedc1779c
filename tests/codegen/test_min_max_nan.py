"""Float T.max/T.min follow numpy's np.maximum/np.minimum: NaN propagates, -0.0 < +0.0.

Checked in scalar code, in explicitly vectorized code (also as the IR LLVM optimized for
an AVX-512 CPU, run on this host), in reductions (row max, max-pool), and in constant
folding, against numpy.
"""
import math

import numpy as np
import pytest
from helpers.codegen_helpers import host_module_from_optimized_ir
from hypothesis import given, settings
from hypothesis import strategies as st

import mlcbench as tvm
from mlcbench.script import from_source
from mlcbench.script import tir as T

SPECIAL = [float("nan"), -float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.5, -2.0]
N = 64


def _elementwise(op: str, loop: str):
    return from_source(f'''
@T.prim_func
def main(A: T.Buffer(({N},), "float32"), B: T.Buffer(({N},), "float32"),
         C: T.Buffer(({N},), "float32")):
    for io in range({N // 16}):
        for ii in {loop}(16):
            C[io * 16 + ii] = T.{op}(A[io * 16 + ii], B[io * 16 + ii])
''')


def _assert_same_as_numpy(got, expected):
    # assert_array_equal treats NaN as equal to NaN and -0.0 as equal to +0.0.
    np.testing.assert_array_equal(got, expected)


def _every_pair():
    pairs = [(x, y) for x in SPECIAL for y in SPECIAL]
    a = np.array([x for x, _ in pairs] + [0.0] * (N - len(pairs)), "float32")
    b = np.array([y for _, y in pairs] + [0.0] * (N - len(pairs)), "float32")
    return a, b


@pytest.mark.parametrize("op, reference", [("max", np.maximum), ("min", np.minimum)])
@pytest.mark.parametrize("loop", ["T.serial", "T.vectorized"])
def test_min_max_of_every_special_pair_matches_numpy(op, reference, loop):
    a, b = _every_pair()
    c = np.zeros(N, "float32")
    tvm.build(_elementwise(op, loop))["main"](a, b, c)
    _assert_same_as_numpy(c, reference(a, b))
    _assert_signed_zeros_ordered(op, a, b, c)


def _assert_signed_zeros_ordered(op, a, b, c):
    """max(-0.0, +0.0) is +0.0 and min is -0.0 in either order (numpy returns its second
    operand there, as the values compare equal)."""
    mixed = (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
    assert mixed.sum() == 2
    assert np.all(np.signbit(c[mixed]) == (op == "min"))


@pytest.mark.parametrize("op, reference", [("max", np.maximum), ("min", np.minimum)])
def test_vectorized_min_max_built_for_avx512_matches_numpy(op, reference):
    lib = tvm.build(_elementwise(op, "T.vectorized"), target="llvm -mcpu=znver4")
    a, b = _every_pair()
    c = np.zeros(N, "float32")
    host_module_from_optimized_ir(lib)["main"](a, b, c)
    _assert_same_as_numpy(c, reference(a, b))
    _assert_signed_zeros_ordered(op, a, b, c)


@pytest.mark.parametrize("op, constant", [("max", 0.0), ("max", -0.0), ("min", 0.0),
                                          ("min", -0.0), ("max", -1.5), ("min", 2.0)])
@pytest.mark.parametrize("loop", ["T.serial", "T.vectorized"])
def test_min_max_against_a_constant_matches_numpy(op, constant, loop):
    # ReLU's shape, T.max(x, 0), compiles to one compare and select: NaN must survive.
    lib = tvm.build(from_source(f'''
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for io in range(2):
        for ii in {loop}(8):
            C[io * 8 + ii] = T.{op}(A[io * 8 + ii], T.float32({constant!r}))
'''))
    a = np.resize(np.array(SPECIAL, "float32"), 16)
    c = np.zeros(16, "float32")
    lib["main"](a, c)
    expected = getattr(np, op + "imum")(a, np.float32(constant))
    np.testing.assert_array_equal(c, expected)
    if constant == 0:                      # +0.0 against -0.0: max gives +0.0, min -0.0
        mixed = (a == 0) & (np.signbit(a) != np.signbit(np.float32(constant)))
        assert mixed.any() and np.all(np.signbit(c[mixed]) == (op == "min"))


_FLOATS = st.sampled_from(SPECIAL) | st.floats(width=32, allow_nan=True)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(_FLOATS, _FLOATS), min_size=N, max_size=N))
def test_max_matches_numpy_on_any_floats(pairs):
    a = np.array([x for x, _ in pairs], "float32")
    b = np.array([y for _, y in pairs], "float32")
    c = np.zeros(N, "float32")
    _compiled("max", "T.serial")["main"](a, b, c)
    _assert_same_as_numpy(c, np.maximum(a, b))


_cache = {}


def _compiled(op, loop):
    """Built with IEEE denormals, as numpy computes: the strategy draws denormals too."""
    if (op, loop) not in _cache:
        _cache[op, loop] = tvm.build(_elementwise(op, loop), target="llvm -flush-denormals=0")
    return _cache[op, loop]


ROW_MAX = from_source('''
@T.prim_func
def main(A: T.Buffer((16, 256), "float32"), M: T.Buffer((16,), "float32")):
    for i in range(16):
        M[i] = T.float32(-3.0e38)
        for k in range(256):
            M[i] = T.max(M[i], A[i, k])
''')

MAX_POOL = from_source('''
@T.prim_func
def main(A: T.Buffer((16, 32), "float32"), P: T.Buffer((8, 16), "float32")):
    for i, jo in T.grid(8, 2):
        for ji in T.vectorized(8):
            P[i, jo * 8 + ji] = T.max(T.max(A[i * 2, jo * 16 + ji * 2],
                                            A[i * 2, jo * 16 + ji * 2 + 1]),
                                      T.max(A[i * 2 + 1, jo * 16 + ji * 2],
                                            A[i * 2 + 1, jo * 16 + ji * 2 + 1]))
''')


def _with_nans(shape, where):
    a = np.random.default_rng(0).standard_normal(shape).astype("float32")
    for index in where:
        a[index] = np.nan
    return a


@pytest.mark.parametrize("target", ["llvm", "llvm -mcpu=znver4"])
def test_row_max_of_a_row_holding_nan_is_nan(target):
    a = _with_nans((16, 256), [(3, 0), (7, 255), (8, 100)])
    m = np.zeros(16, "float32")
    lib = tvm.build(ROW_MAX, target=target)
    (lib if target == "llvm" else host_module_from_optimized_ir(lib))["main"](a, m)
    np.testing.assert_array_equal(m, a.max(axis=1))
    assert np.isnan(m).sum() == 3


@pytest.mark.parametrize("target", ["llvm", "llvm -mcpu=znver4"])
def test_max_pool_window_holding_nan_is_nan(target):
    a = _with_nans((16, 32), [(0, 0), (5, 31), (10, 17)])
    p = np.zeros((8, 16), "float32")
    lib = tvm.build(MAX_POOL, target=target)
    (lib if target == "llvm" else host_module_from_optimized_ir(lib))["main"](a, p)
    np.testing.assert_array_equal(p, a.reshape(8, 2, 16, 2).max(axis=(1, 3)))
    assert np.isnan(p).sum() == 3


@pytest.mark.parametrize("x, y", [(math.nan, 0.0), (0.0, math.nan), (-0.0, 0.0), (0.0, -0.0),
                                  (1.0, -1.0)])
def test_constant_folding_agrees_with_the_generated_code(x, y):
    a, b = np.array([x] * 16, "float32"), np.array([y] * 16, "float32")
    for op in ("max", "min"):
        c = np.zeros(N, "float32")
        _compiled(op, "T.vectorized")["main"](np.resize(a, N), np.resize(b, N), c)
        folded = getattr(T, op)(T.float32(x), T.float32(y)).value
        assert (math.isnan(folded) and math.isnan(c[0])) or folded == c[0]
        assert math.copysign(1.0, folded) == math.copysign(1.0, c[0]) or math.isnan(folded)
