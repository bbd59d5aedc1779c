"""PrimFunc attributes: ``with_attr`` in the forms TVM accepts (course chapters 2 and 3)."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import te
from mlcbench.ir import IRError


def _mm_relu():
    A = te.placeholder((8, 8), "float32", name="A")
    B = te.placeholder((8, 8), "float32", name="B")
    k = te.reduce_axis((0, 8), "k")
    Y = te.compute((8, 8), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((8, 8), lambda i, j: te.max(Y[i, j], 0), name="C")
    return te.create_prim_func([A, B, C])


def test_with_attr_takes_a_dict_as_course_chapter_3_writes_it():
    te_func = _mm_relu().with_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    assert te_func.attrs["global_symbol"] == "mm_relu" and te_func.attrs["tir.noalias"]
    lib = tvm.build(tvm.IRModule({"mm_relu": te_func}), target="llvm")
    a, b = np.random.rand(8, 8).astype("float32"), np.random.rand(8, 8).astype("float32")
    c = tvm.nd.empty((8, 8), "float32")
    lib["mm_relu"](tvm.nd.array(a), tvm.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), np.maximum(a @ b, 0), rtol=1e-5)


def test_with_attr_takes_a_key_and_a_value_and_leaves_the_original_alone():
    func = _mm_relu()
    named = func.with_attr("global_symbol", "mm_relu")
    assert named.attrs["global_symbol"] == "mm_relu"
    assert func.attrs["global_symbol"] == "main"
    assert named.with_attrs({"a": 1}).attrs == {**named.attrs, "a": 1}
    assert "a" not in named.with_attrs({"a": 1}).without_attr("a").attrs


@pytest.mark.parametrize("args, message", [
    (("global_symbol",), "'global_symbol' needs a value"),
    (({"global_symbol": "main"}, 1), "a key and a value, or one dict"),
    ((3, "x"), "attribute names are strings, found 3"),
])
def test_with_attr_refuses_malformed_arguments(args, message):
    with pytest.raises(IRError, match=message):
        _mm_relu().with_attr(*args)
