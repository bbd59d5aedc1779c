"""Struct info: construction, symbolic dimensions, comparison and derivation."""
import pytest

import mlcbench as tvm
from mlcbench import relax, tir
from mlcbench.ir import IRError
from mlcbench.relax.struct_info import struct_info_equal, unify
from mlcbench.script import relax as R


def test_tensor_struct_info_fields():
    sinfo = relax.TensorStructInfo((1, 784), "float32")
    assert sinfo.ndim == 2 and sinfo.dtype == "float32"
    assert sinfo.static_shape() == (1, 784)
    assert [int(d) for d in sinfo.shape] == [1, 784]
    unknown = relax.TensorStructInfo(dtype="float32", ndim=3)
    assert unknown.shape is None and unknown.static_shape() is None
    with pytest.raises(IRError, match="has 2 dimensions, but ndim=3"):
        relax.TensorStructInfo((1, 2), "float32", ndim=3)


def test_symbolic_dimensions_are_shared_within_a_function_only():
    n = tir.Var("n", "int64")
    a = relax.TensorStructInfo((n, 4), "float32")
    assert a.static_shape() is None and a.dims[0] is n
    assert struct_info_equal(a, relax.TensorStructInfo((n, 4), "float32"))
    m = tir.Var("n", "int64")
    assert not struct_info_equal(a, relax.TensorStructInfo((m, 4), "float32"))


def test_derived_struct_info_of_expressions():
    x = relax.Var("x", R.Tensor((2, 3), "float32"))
    tup = relax.Tuple([x, relax.const(1, "int64")])
    assert isinstance(tup.struct_info, relax.TupleStructInfo)
    assert tup[1].struct_info.dtype == "int64"
    assert relax.ShapeExpr([2, 3]).struct_info.ndim == 2
    assert relax.PrimValue(3).struct_info.dtype == "int64"
    with pytest.raises(IRError, match="index 2 is out of range for a tuple of 2"):
        relax.TupleGetItem(tup, 2)


def test_unify_keeps_what_both_sides_agree_on():
    a = relax.TensorStructInfo((2, 3), "float32")
    b = relax.TensorStructInfo((4, 3), "float32")
    joined = unify(a, b)
    assert joined.shape is None and joined.ndim == 2 and joined.dtype == "float32"
    assert unify(a, a) is a
    assert isinstance(unify(a, relax.ShapeStructInfo([1])), relax.ObjectStructInfo)


def test_struct_infos_compare_structurally():
    tvm.ir.assert_structural_equal(R.Tensor((1, 2), "float32"),
                                   relax.TensorStructInfo((1, 2), "float32"))
    assert not tvm.ir.structural_equal(R.Tensor((1, 2), "float32"), R.Tensor((2, 1), "float32"))
    func_sinfo = R.Callable([R.Tensor((2,), "float32")], R.Tensor((2,), "float32"))
    assert isinstance(func_sinfo, relax.FuncStructInfo) and len(func_sinfo.params) == 1
