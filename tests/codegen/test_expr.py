"""Every expression kind, scalar and 16-lane vector, checked against numpy.

Each case is ``out[i] = expr(A[i], B[i])``. All cases compile into one module (one
LLVM compile for the whole file); the vector variant indexes with ``Ramp(c*16, 1, 16)``.
"""
import math

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from helpers.codegen_helpers import compile_kernels, flat, kernel, ramp

from mlcbench import tir
from mlcbench.tir import (BufferStore, Cast, For, Let, Not, Select, Var, call_extern, const)
from mlcbench.tir.expr import Div, FloorDiv, FloorMod, Mod, binary

N, LANES = 64, 16
_erf = np.vectorize(math.erf, otypes=[np.float32])


def _like(element: str, expr) -> str:
    """``element`` with as many lanes as ``expr`` ("int32" or "int32x16")."""
    lanes = expr.dtype.lanes
    return element if lanes == 1 else f"{element}x{lanes}"


def _let(value_fn):
    def make(a, b):
        v = Var("v", a.dtype)
        return Let(v, value_fn(a, b), v * v + v)
    return make


FLOAT_CASES = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b * 2.0, lambda a, b: a - b * 2),
    "mul_add": (lambda a, b: a * b + a, lambda a, b: a * b + a),
    "div": (lambda a, b: a / b, lambda a, b: a / b),
    "floordiv": (lambda a, b: binary(FloorDiv, a, b), lambda a, b: np.floor(a / b)),
    "floormod": (lambda a, b: binary(FloorMod, a, b), lambda a, b: a - np.floor(a / b) * b),
    "truncmod": (lambda a, b: binary(Mod, a, b), lambda a, b: np.fmod(a, b)),
    "min": (lambda a, b: tir.min(a, b), np.minimum),
    "max": (lambda a, b: tir.max(a, 0.0), lambda a, b: np.maximum(a, 0)),
    "exp": (lambda a, b: tir.exp(a), lambda a, b: np.exp(a)),
    "exp2": (lambda a, b: tir.exp2(a), lambda a, b: np.exp2(a)),
    "log": (lambda a, b: tir.log(b), lambda a, b: np.log(b)),
    "log2": (lambda a, b: tir.log2(b), lambda a, b: np.log2(b)),
    "sqrt": (lambda a, b: tir.sqrt(b), lambda a, b: np.sqrt(b)),
    "rsqrt": (lambda a, b: tir.rsqrt(b), lambda a, b: 1 / np.sqrt(b)),
    "tanh": (lambda a, b: tir.tanh(a), lambda a, b: np.tanh(a)),
    "sigmoid": (lambda a, b: tir.sigmoid(a), lambda a, b: 1 / (1 + np.exp(-a))),
    "erf": (lambda a, b: tir.erf(a), lambda a, b: _erf(a)),
    "pow": (lambda a, b: tir.pow(b, a), lambda a, b: np.power(b, a)),
    "fabs": (lambda a, b: tir.abs(a), lambda a, b: np.abs(a)),
    "floor": (lambda a, b: tir.floor(a), lambda a, b: np.floor(a)),
    "ceil": (lambda a, b: tir.ceil(a), lambda a, b: np.ceil(a)),
    "round": (lambda a, b: tir.round(a * 2.0), lambda a, b: np.round(a * 2)),
    "trunc": (lambda a, b: tir.trunc(a), lambda a, b: np.trunc(a)),
    "sin_cos": (lambda a, b: tir.sin(a) + tir.cos(b), lambda a, b: np.sin(a) + np.cos(b)),
    "fma": (lambda a, b: tir.fma(a, b, a), lambda a, b: a * b + a),
    "select": (lambda a, b: Select(a > b, a, b), lambda a, b: np.where(a > b, a, b)),
    "if_then_else": (lambda a, b: tir.if_then_else(a > 0.0, a, b), lambda a, b: np.where(a > 0, a, b)),
    "let": (_let(lambda a, b: a + b), lambda a, b: (a + b) ** 2 + (a + b)),
    "cast_roundtrip": (lambda a, b: Cast(a.dtype, Cast(_like("int32", a), a * 10.0)),
                       lambda a, b: np.trunc(a * 10)),
    "compare_logic": (lambda a, b: Select((a < b) & Not(a < 0.0) | (a == b), a, b * 0.0),
                      lambda a, b: np.where(((a < b) & ~(a < 0)) | (a == b), a, 0)),
    "isnan": (lambda a, b: Select(tir.isnan(a / a), b, a), lambda a, b: np.where(np.isnan(a / a), b, a)),
}

INT_CASES = {
    "add": (lambda a, b: a + b * 3, lambda a, b: a + b * 3),
    "truncdiv": (lambda a, b: binary(Div, a, b), lambda a, b: np.trunc(a / b).astype(np.int32)),
    "truncmod": (lambda a, b: binary(Mod, a, b), lambda a, b: np.fmod(a, b)),
    "floordiv": (lambda a, b: binary(FloorDiv, a, b), lambda a, b: a // b),
    "floormod": (lambda a, b: binary(FloorMod, a, b), lambda a, b: a % b),
    "min_max": (lambda a, b: tir.max(tir.min(a, b), -3), lambda a, b: np.maximum(np.minimum(a, b), -3)),
    "abs": (lambda a, b: tir.abs(a), lambda a, b: np.abs(a)),
    "select_ne": (lambda a, b: Select(a != b, a - b, a), lambda a, b: np.where(a != b, a - b, a)),
    "cast_int8": (lambda a, b: Cast(a.dtype, Cast(_like("int8", a), a * 7)),
                  lambda a, b: (a * 7).astype(np.int8).astype(np.int32)),
}


def _make_case(name, dtype, expr_fn, vector):
    A, B, out = flat("A", N, dtype), flat("B", N, dtype), flat("out", N, dtype)
    if vector:
        c = Var("c")
        index = ramp(c * LANES, LANES)
        body = For(c, 0, N // LANES, "serial",
                   BufferStore(out, expr_fn(A.vload((index,)), B.vload((index,))), (index,)))
    else:
        i = Var("i")
        body = For(i, 0, N, "serial", BufferStore(out, expr_fn(A[i], B[i]), (i,)))
    return kernel(name, [A, B, out], body)


def _all_kernels():
    funcs = []
    for suffix, vector in (("scalar", False), ("vector", True)):
        for name, (fn, _) in FLOAT_CASES.items():
            funcs.append(_make_case(f"f_{name}_{suffix}", "float32", fn, vector))
        for name, (fn, _) in INT_CASES.items():
            funcs.append(_make_case(f"i_{name}_{suffix}", "int32", fn, vector))
    return funcs


@pytest.fixture(scope="module")
def lib():
    return compile_kernels(*_all_kernels())


def _float_inputs():
    rng = np.random.default_rng(0)
    a = rng.uniform(-3, 3, N).astype("float32")
    b = rng.uniform(0.5, 3, N).astype("float32")
    a[:4] = [0.0, 1.0, -1.0, 2.5]
    b[:4] = [0.5, 1.0, 1.5, 2.5]            # a == b at index 1 and 3
    return a, b


def _int_inputs():
    rng = np.random.default_rng(1)
    a = rng.integers(-50, 50, N).astype("int32")
    b = rng.integers(1, 8, N).astype("int32") * rng.choice([-1, 1], N).astype("int32")
    return a, b


@pytest.mark.parametrize("vector", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("name", sorted(FLOAT_CASES))
def test_float_expression(lib, name, vector):
    a, b = _float_inputs()
    out = np.zeros(N, "float32")
    lib[f"f_{name}_{'vector' if vector else 'scalar'}"](a, b, out)
    with np.errstate(all="ignore"):
        expected = FLOAT_CASES[name][1](a, b).astype("float32")
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("vector", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("name", sorted(INT_CASES))
def test_int_expression(lib, name, vector):
    a, b = _int_inputs()
    out = np.zeros(N, "int32")
    lib[f"i_{name}_{'vector' if vector else 'scalar'}"](a, b, out)
    np.testing.assert_array_equal(out, INT_CASES[name][1](a, b).astype("int32"))


def test_vector_code_uses_vector_types(lib):
    ir_text = lib.get_source("ll")
    assert "<16 x float>" in ir_text and "<16 x i32>" in ir_text


def test_call_extern_reaches_libm():
    A, out = flat("A", 8), flat("out", 8)
    i = Var("i")
    body = For(i, 0, 8, "serial", BufferStore(out, call_extern("float32", "expm1f", A[i]), (i,)))
    lib = compile_kernels(kernel("expm1", [A, out], body))
    a, result = np.linspace(-1, 1, 8, dtype="float32"), np.zeros(8, "float32")
    lib["expm1"](a, result)
    np.testing.assert_allclose(result, np.expm1(a), rtol=1e-6)


def test_strided_ramp_gathers_and_scatters():
    A, out = flat("A", 32), flat("out", 32)
    c = Var("c")
    even = tir.Ramp(c, 2, 8)                   # lanes read A[c], A[c+2], ... A[c+14]
    body = For(c, 0, 2, "serial", BufferStore(out, A.vload((even,)) + const(1.0), (even,)))
    lib = compile_kernels(kernel("strided", [A, out], body))
    a, result = np.arange(32, dtype="float32"), np.zeros(32, "float32")
    lib["strided"](a, result)
    np.testing.assert_array_equal(result[:16], a[:16] + 1)
    np.testing.assert_array_equal(result[16:], 0)


int32_arrays = hnp.arrays(np.int32, N, elements=st.integers(-10**6, 10**6))
divisor_arrays = hnp.arrays(np.int32, N, elements=st.integers(-1000, 1000).filter(bool))


@settings(max_examples=25, deadline=None)
@given(a=int32_arrays, b=divisor_arrays, vector=st.booleans())
def test_integer_division_matches_python(lib, a, b, vector):
    suffix = "vector" if vector else "scalar"
    for name, expected in (("floordiv", a // b), ("floormod", a % b),
                           ("truncdiv", np.trunc(a / b)), ("truncmod", np.fmod(a, b))):
        out = np.zeros(N, "int32")
        lib[f"i_{name}_{suffix}"](a, b, out)
        np.testing.assert_array_equal(out, expected.astype("int32"), err_msg=name)
