"""placeholder / compute: shapes, naming of axes, indexing, errors."""
import pytest

from mlcbench import te, tir
from mlcbench.ir.errors import IRError


def test_shapes_compare_as_bools():
    A = te.placeholder((4, 6), name="A")
    B = te.placeholder((6, 5), name="B")
    assert A.shape[1] == B.shape[0]
    assert not (A.shape[0] == B.shape[0])
    assert int(A.shape[0]) == 4 and A.ndim == 2 and A.dtype == "float32"
    assert A.shape[1] == 6


def test_lambda_argument_names_become_axis_names():
    A = te.placeholder((2, 3, 4), name="A")
    B = te.compute(A.shape, lambda n, *rest: A[(n,) + rest], name="B")
    assert [iv.var.name for iv in B.op.axis] == ["n", "i1", "i2"]
    C = te.compute(shape=(2,), fcompute=lambda *i: 1.0)
    assert [iv.var.name for iv in C.op.axis] == ["i0"]


def test_indexing_builds_a_load_and_records_inputs():
    A = te.placeholder((3,), "int32", name="A")
    load = A[1]
    assert isinstance(load, tir.BufferLoad) and load.dtype == "int32"
    B = te.compute((3,), lambda i: A[i] + A[2 - i], name="B")
    assert B.op.input_tensors == (A,)


def test_wrong_rank_is_refused():
    A = te.placeholder((3, 3), name="A")
    with pytest.raises(IRError, match="has 2 dimensions"):
        A[1]
    with pytest.raises(IRError, match="fcompute takes 1 indices"):
        te.compute((3, 3), lambda i: A[i, i])


def test_nested_reduction_is_refused():
    A = te.placeholder((3, 3), name="A")
    k = te.reduce_axis((0, 3), name="k")
    with pytest.raises(IRError, match="must be the whole body"):
        te.compute((3,), lambda i: te.sum(A[i, k], axis=k) + 1.0)


def test_axis_arithmetic_and_reduce_axis_range():
    A = te.placeholder((8,), name="A")
    k = te.reduce_axis((2, 5), name="k")
    assert int(k.dom.min) == 2 and int(k.dom.extent) == 3
    B = te.compute((3,), lambda i: te.sum(A[i + k], axis=k), name="B")
    assert "A[v_i + v_k]" in te.create_prim_func([A, B]).script()


def test_multiple_outputs():
    A = te.placeholder((3,), name="A")
    lo, hi = te.compute((3,), lambda i: (A[i] - 1.0, A[i] + 1.0), name="pair")
    assert lo.op is hi.op and (lo.name, hi.name) == ("pair_v0", "pair_v1")
