"""Buffer.access_ptr: the address an extern function receives (course chapter 8)."""
import pytest

from mlcbench import tir
from mlcbench.ir import IRError
from mlcbench.script import tir as T


def test_access_ptr_carries_dtype_data_offset_extent_and_mask():
    A = T.Buffer((16, 16), "float32")
    ptr = A.access_ptr("rw", offset=4)
    assert ptr.op == "tir.tvm_access_ptr" and ptr.dtype == "handle"
    ptype, data, offset, extent, mask = ptr.args
    assert ptype.op == "tir.type_annotation" and ptype.dtype == "float32"
    assert data is A.data
    assert (offset.value, extent.value, mask.value) == (4, 256, 3)


def test_access_ptr_of_a_strided_buffer_spans_its_rows():
    sa = tir.Var("sa", "int32")
    A = tir.decl_buffer((16, 16), "float32", "A", strides=(sa, 1))
    assert str(A.access_ptr("r").args[3]) == str(16 * sa)


@pytest.mark.parametrize("mask", ["x", "", 0, 4, True])
def test_access_ptr_refuses_an_unknown_mask(mask):
    with pytest.raises(IRError, match="access_ptr: expected the access mask"):
        T.Buffer((4,), "float32").access_ptr(mask)


def test_call_extern_takes_the_dtype_first_or_as_a_keyword():
    A = T.Buffer((4,), "float32")
    old = T.call_extern("tmm16", A.access_ptr("w"), 1, dtype="int32")
    new = T.call_extern("int32", "tmm16", A.access_ptr("w"), 1)
    assert str(old) == str(new) and old.dtype == "int32"
    with pytest.raises(IRError, match="expected the function name"):
        T.call_extern("int32", 5)
