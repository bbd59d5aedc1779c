"""A store converts its value to the buffer's element type (``T.Cast``), as TVM's parser
does: it never reinterprets the bits of another dtype."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench.ir import assert_structural_equal
from mlcbench.script import from_source, tir as T
from mlcbench.tir import expr as E


@T.prim_func
def int_into_float(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            A[vi] = B[vi]


@T.prim_func
def float64_constant(A: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("b"):
            vi = T.axis.spatial(4, i)
            A[vi] = T.float64(2.5)


@T.prim_func
def float_into_int(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float64")):
    for i in range(8):
        with T.block("b"):
            vi = T.axis.spatial(8, i)
            A[vi] = B[vi]


@T.prim_func
def vector_int_into_float(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32")):
    for i in range(2):
        A[i * 4:i * 4 + 4] = B[i * 4:i * 4 + 4]


def _value(func):
    return func.body.block.body.body.block.body.value


def test_parser_inserts_the_cast():
    assert isinstance(_value(int_into_float), E.Cast) and _value(int_into_float).dtype == "float32"
    assert 'A[vi] = T.Cast("float32", B[vi])' in int_into_float.script()
    assert 'A[vi] = T.Cast("float32", T.float64(2.5))' in float64_constant.script()


@pytest.mark.parametrize("func", [int_into_float, float64_constant, float_into_int,
                                  vector_int_into_float])
def test_printed_script_reparses_to_the_same_program(func):
    assert_structural_equal(from_source(func.script()), func)


def test_int_stored_into_float_is_its_value():
    a, b = np.zeros(4, "float32"), np.arange(5, 9, dtype="int32")
    tvm.build(int_into_float)["main"](a, b)
    np.testing.assert_array_equal(a, b.astype("float32"))


def test_float64_constant_stored_into_float32():
    a = np.zeros(4, "float32")
    tvm.build(float64_constant)["main"](a)
    np.testing.assert_array_equal(a, np.full(4, 2.5, "float32"))


def test_float_stored_into_int_truncates_like_numpy():
    b = np.array([2.7, -2.7, 0.5, -0.5, 7.0, 1e3, -1e3, 3.99])
    a = np.zeros(8, "int32")
    tvm.build(float_into_int)["main"](a, b)
    np.testing.assert_array_equal(a, b.astype("int32"))


def test_vector_store_converts_every_lane():
    a, b = np.zeros(8, "float32"), np.arange(-3, 5, dtype="int32")
    tvm.build(vector_int_into_float)["main"](a, b)
    np.testing.assert_array_equal(a, b.astype("float32"))
