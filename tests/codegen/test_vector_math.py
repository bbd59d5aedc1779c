"""Inline exp/log/tanh/sigmoid/erf: accuracy against float64 references, special
values, and identical results from the scalar and the 16-lane vector code."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import tir
from mlcbench.tir import BufferStore, For, Var

from helpers.codegen_helpers import compile_kernels, flat, kernel, ramp

N = 1 << 16
LANES = 16
IEEE = "llvm -flush-denormals=0"
_erf64 = np.vectorize(math.erf, otypes=[np.float64])

FUNCTIONS = {
    "exp": (tir.exp, np.exp),
    "log": (tir.log, np.log),
    "tanh": (tir.tanh, np.tanh),
    "sigmoid": (tir.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
    "erf": (tir.erf, _erf64),
}


def _kernels(name, dtype, suffix=""):
    """``name_scalar`` (a serial loop) and ``name_vector`` (16-lane Ramp loads)."""
    fn = FUNCTIONS[name][0]
    a, out = flat("A", N, dtype), flat("out", N, dtype)
    i = Var("i", "int32")
    scalar = kernel(f"{name}_scalar{suffix}", [a, out],
                    For(i, 0, N, "serial", BufferStore(out, fn(a[i]), (i,))))
    index = ramp(i * LANES, LANES)
    vector = kernel(f"{name}_vector{suffix}", [a, out],
                    For(i, 0, N // LANES, "serial",
                        BufferStore(out, fn(a.vload((index,))), (index,))))
    return [scalar, vector]


@pytest.fixture(scope="module")
def lib():
    """Built with IEEE denormals: the references produce and take denormals."""
    singles = [f for name in FUNCTIONS for f in _kernels(name, "float32")]
    doubles = [f for name in ("exp", "log", "tanh") for f in _kernels(name, "float64", "_f64")]
    return (compile_kernels(*singles, target=IEEE), compile_kernels(*doubles, target=IEEE))


def _inputs(name, dtype):
    """Many values over the interesting range plus edge cases, N in all."""
    rng = np.random.default_rng(1)
    specials = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e-45,
                88.7, 88.72, 88.73, 89.5, 100.0, -87.3, -100.0, -103.9, -104.5, -1000.0,
                0.54, 0.55, 0.56, 0.999, 1.0001, 3.9, 4.1, 10.0, -10.0, 1e30, -1e30,
                np.finfo(dtype).tiny, np.finfo(dtype).max, 709.7, 709.8, -745.0]
    if name == "log":
        body = np.concatenate([np.exp(rng.uniform(-80, 80, N // 2)),
                               rng.uniform(0.5, 2.0, N // 4), 10.0 ** rng.uniform(-44, 38, N)])
    elif name == "exp":
        body = np.concatenate([rng.uniform(-104, 89, N // 2), rng.uniform(-2, 2, N)])
    else:
        body = np.concatenate([rng.uniform(-10, 10, N // 2), rng.uniform(-1.5, 1.5, N // 2),
                               10.0 ** rng.uniform(-30, 1, N)])
    values = np.concatenate([specials, body])[:N]
    return values.astype(dtype)


def _run(lib, symbol, a):
    out = np.zeros_like(a)
    lib[symbol](a, out)
    return out


def _ulp_error(got, reference, dtype):
    """|got - ref| in units of the float spacing at ref (subnormal spacing below)."""
    ref = reference.astype(dtype)
    spacing = np.spacing(np.abs(ref)).astype(np.float64)
    return np.abs(got.astype(np.float64) - reference) / spacing


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_float32_accuracy_and_scalar_equals_vector(lib, name):
    a = _inputs(name, "float32")
    scalar = _run(lib[0], f"{name}_scalar", a)
    vector = _run(lib[0], f"{name}_vector", a)
    np.testing.assert_array_equal(scalar, vector)
    with np.errstate(all="ignore"):
        reference = FUNCTIONS[name][1](a.astype(np.float64))
    finite = np.isfinite(reference) & (np.abs(reference) < np.finfo("float32").max)
    with np.errstate(over="ignore"):
        rounded = reference.astype("float32")          # beyond float32's range: inf
    np.testing.assert_array_equal(np.isnan(scalar), np.isnan(rounded))
    if name in ("exp", "log"):
        assert _ulp_error(scalar[finite], reference[finite], "float32").max() <= 1.0
    else:
        rel = np.abs(scalar[finite] - reference[finite]) / np.maximum(
            np.abs(reference[finite]), np.finfo("float32").tiny)
        assert rel.max() <= 1e-6, a[finite][rel.argmax()]
    inf = ~finite & ~np.isnan(reference)
    np.testing.assert_array_equal(scalar[inf], rounded[inf])


@pytest.mark.parametrize("name", ["exp", "log", "tanh"])
def test_float64_accuracy(lib, name):
    a = _inputs(name, "float64")
    got = _run(lib[1], f"{name}_scalar_f64", a)
    np.testing.assert_array_equal(got, _run(lib[1], f"{name}_vector_f64", a))
    with np.errstate(all="ignore"):
        reference = FUNCTIONS[name][1](a)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(reference))
    finite = np.isfinite(reference)
    np.testing.assert_array_equal(got[~finite], reference[~finite])
    bound = 1.0 if name != "tanh" else 3.0
    assert _ulp_error(got[finite], reference[finite], "float64").max() <= bound


@pytest.mark.parametrize("name, x, expected", [
    ("exp", -np.inf, 0.0), ("exp", np.inf, np.inf), ("exp", 1000.0, np.inf),
    ("exp", -1000.0, 0.0), ("exp", 0.0, 1.0), ("log", 0.0, -np.inf), ("log", -0.0, -np.inf),
    ("log", np.inf, np.inf), ("log", 1.0, 0.0), ("tanh", np.inf, 1.0),
    ("tanh", -np.inf, -1.0), ("sigmoid", -np.inf, 0.0), ("sigmoid", np.inf, 1.0),
    ("erf", np.inf, 1.0), ("erf", -np.inf, -1.0), ("erf", 0.0, 0.0),
])
def test_special_values(lib, name, x, expected):
    got = _run(lib[0], f"{name}_scalar", np.full(N, x, "float32"))
    assert got[0] == expected


@pytest.mark.parametrize("name", ["log", "sigmoid", "tanh", "exp", "erf"])
def test_nan_and_negative_log(lib, name):
    got = _run(lib[0], f"{name}_vector", np.full(N, np.nan, "float32"))
    assert np.isnan(got).all()
    if name == "log":
        assert np.isnan(_run(lib[0], "log_vector", np.full(N, -2.0, "float32"))).all()


@settings(max_examples=20, deadline=None)
@given(x=st.floats(-120, 120, width=32))
def test_exp_any_float32(lib, x):
    got = _run(lib[0], "exp_vector", np.full(N, x, "float32"))[0]
    reference = math.exp(x) if x < 88.8 else math.inf
    if reference > np.finfo("float32").max:
        assert got == np.inf
    else:
        assert abs(got - reference) <= np.spacing(np.float32(reference))


def test_vector_code_calls_no_libm(lib):
    source = lib[0].get_source("ll")
    for symbol in ("expf", "logf", "tanhf", "erff", "llvm.exp.", "llvm.log."):
        assert symbol not in source


@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sigmoid", "erf"])
def test_float16_computes_in_float32(name):
    funcs = _kernels(name, "float16", "_f16")
    lib16 = compile_kernels(*funcs)
    a = np.linspace(0.01 if name == "log" else -8, 8, N).astype("float16")
    got = _run(lib16, f"{name}_vector_f16", a)
    np.testing.assert_array_equal(got, _run(lib16, f"{name}_scalar_f16", a))
    expected = FUNCTIONS[name][1](a.astype(np.float64)).astype("float16")
    np.testing.assert_allclose(got.astype(np.float64), expected, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("extreme", [-103.5, -87.0, 88.5, np.nan, -np.inf])
def test_exp_vector_with_one_extreme_lane(lib, extreme):
    """A vector whose lanes all give normal results scales by exponent bits; one lane
    that overflows, turns subnormal or is NaN sends the whole vector the careful way.
    Either way every lane equals the scalar code and the reference."""
    a = np.tile(np.linspace(-3, 3, LANES, dtype="float32"), N // LANES)
    a[5::LANES * 7] = extreme
    vector, scalar = _run(lib[0], "exp_vector", a), _run(lib[0], "exp_scalar", a)
    np.testing.assert_array_equal(vector, scalar)
    with np.errstate(over="ignore"):
        reference = np.exp(a.astype(np.float64)).astype("float32")
    np.testing.assert_allclose(vector, reference, rtol=1.2e-7, atol=1e-45)
