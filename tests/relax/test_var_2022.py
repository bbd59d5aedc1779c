"""The 2022 course's Var(name, shape, DynTensorType(ndim, dtype)), expr.shape_ and
expr._checked_type_ (course chapter 9's dense+add fusion builds parameters from them)."""
import numpy as np
import pytest

from mlcbench import relax
from mlcbench.ir.errors import IRError


def test_three_argument_var_is_a_tensor_var():
    x = relax.Var("x", (1, 784), relax.DynTensorType(2, "float32"))
    assert x.struct_info.static_shape() == (1, 784) and x.struct_info.dtype == "float32"
    assert x.name_hint == "x"
    d = relax.DataflowVar("d", [3], relax.DynTensorType(1, "int32"))
    assert isinstance(d, relax.DataflowVar) and d.struct_info.static_shape() == (3,)
    unknown = relax.Var("u", None, relax.DynTensorType(2, "float16"))
    assert (unknown.struct_info.shape, unknown.struct_info.ndim) == (None, 2)


def test_old_attributes_rebuild_a_parameter_of_the_same_type():
    w = relax.const(np.ones((128, 784), "float32"))
    assert [int(d) for d in w.shape_.values] == [128, 784]
    assert (w._checked_type_.ndim, w._checked_type_.dtype) == (2, "float32")
    assert w._checked_type_.shape is None          # a type has no extents
    param = relax.Var("w", w.shape_, w._checked_type_)
    assert param.struct_info.static_shape() == (128, 784)
    call = relax.op.add(param, param)
    assert call.shape_.values == param.struct_info.shape.values


def test_non_tensors_have_no_shape_and_keep_their_struct_info():
    t = relax.Tuple([relax.const(np.ones(2, "float32"))])
    assert t.shape_ is None and t._checked_type_ == t.struct_info


@pytest.mark.parametrize("shape, type_, message", [
    ((1, 784, 3), relax.DynTensorType(2, "float32"), "3 dimensions, but ndim=2"),
    ((1, 784), "float32", "DynTensorType"),
    ("1x784", relax.DynTensorType(2, "float32"), "tuple of extents"),
])
def test_bad_three_argument_forms_name_the_variable(shape, type_, message):
    with pytest.raises(IRError, match=message) as err:
        relax.Var("x", shape, type_)
    assert "Var 'x'" in str(err.value)
