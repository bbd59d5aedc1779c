"""Buffers of every supported dtype, and symbolic shapes passed as int64."""
import numpy as np
import pytest
from helpers.codegen_helpers import compile_kernels, flat, kernel, ramp

from mlcbench.tir import BufferStore, Cast, For, Not, Var, const

N = 32


def _double(dtype):
    """out[i] = A[i] + A[i] (wrapping for small ints, as numpy)."""
    A, out = flat("A", N, dtype), flat("out", N, dtype)
    i = Var("i", "int64")
    return kernel(f"double_{dtype}", [A, out],
                  For(i, 0, N, "serial", BufferStore(out, A[i] + A[i], (i,))))


def _negate_bool(vector):
    A, out = flat("A", N, "bool"), flat("out", N, "bool")
    i = Var("i")
    if vector:
        index = ramp(i * 16, 16)
        return kernel("not_bool_vec", [A, out], For(i, 0, N // 16, "serial",
                      BufferStore(out, Not(A.vload((index,))), (index,))))
    return kernel("not_bool", [A, out], For(i, 0, N, "serial", BufferStore(out, Not(A[i]), (i,))))


def _widen():
    """uint8 -> float64 and bool -> int32 conversions."""
    A, flags, out = flat("A", N, "uint8"), flat("flags", N, "bool"), flat("out", N, "float64")
    i = Var("i")
    value = Cast("float64", A[i]) + Cast("float64", Cast("int32", flags[i]))
    return kernel("widen", [A, flags, out], For(i, 0, N, "serial", BufferStore(out, value, (i,))))


def _symbolic(dim_dtype):
    """out[i] = A[i] * 2 for i < n, n only known at call time."""
    n = Var("n", dim_dtype)
    A, out = flat("A", n), flat("out", n)
    i = Var("i", dim_dtype)
    return kernel(f"symbolic_{dim_dtype}", [A, out],
                  For(i, const(0, dim_dtype), n, "serial", BufferStore(out, A[i] * 2.0, (i,))))


DTYPES = ["int8", "uint8", "int16", "int32", "int64", "uint32", "float16", "float32", "float64"]


@pytest.fixture(scope="module")
def lib():
    return compile_kernels(*[_double(d) for d in DTYPES], _negate_bool(False),
                           _negate_bool(True), _widen(), _symbolic("int32"), _symbolic("int64"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_buffer_dtypes(lib, dtype):
    rng = np.random.default_rng(0)
    if dtype.startswith("float"):
        a = rng.uniform(-100, 100, N).astype(dtype)
    else:
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, N, endpoint=True).astype(dtype)
    out = np.zeros(N, dtype)
    lib[f"double_{dtype}"](a, out)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, a + a)


@pytest.mark.parametrize("name", ["not_bool", "not_bool_vec"])
def test_bool_buffers(lib, name):
    a = np.random.default_rng(1).random(N) > 0.5
    out = np.zeros(N, bool)
    lib[name](a, out)
    np.testing.assert_array_equal(out, ~a)
    assert set(out.view(np.uint8)) <= {0, 1}, "bools are stored as bytes 0 and 1"


def test_conversions(lib):
    a = np.arange(200, 232, dtype="uint8")
    flags = np.arange(N) % 3 == 0
    out = np.zeros(N, "float64")
    lib["widen"](a, flags, out)
    np.testing.assert_array_equal(out, a.astype("float64") + flags)


@pytest.mark.parametrize("dim_dtype", ["int32", "int64"])
@pytest.mark.parametrize("n", [1, 17, 300])
def test_symbolic_shape(lib, dim_dtype, n):
    a = np.arange(n, dtype="float32")
    out = np.zeros(n, "float32")
    lib[f"symbolic_{dim_dtype}"](a, out)
    np.testing.assert_array_equal(out, 2 * a)


def test_symbolic_dim_is_an_int64_parameter(lib):
    ir_text = lib.get_source("ll")
    header = next(line for line in ir_text.splitlines() if "@mlc_symbolic_int32(" in line)
    assert "captures(none) %out, i64 %n)" in header
