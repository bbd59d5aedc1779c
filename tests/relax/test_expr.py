"""Relax expression nodes: Function attributes in the forms TVM accepts."""
import pytest

from mlcbench import relax
from mlcbench.ir import IRError


def _identity():
    x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
    return relax.Function([x], x)


def test_function_with_attr_takes_a_key_and_value_or_a_dict():
    func = _identity()
    assert func.with_attr("Primitive", 1).attrs["Primitive"] == 1
    both = func.with_attr({"Primitive": 1, "global_symbol": "f"})
    assert (both.attrs["Primitive"], both.attrs["global_symbol"]) == (1, "f")
    assert "Primitive" not in func.attrs


def test_function_with_attr_without_a_value_is_refused():
    with pytest.raises(IRError, match="'Primitive' needs a value"):
        _identity().with_attr("Primitive")


def test_const_takes_the_2022_course_type_for_its_dtype():
    import numpy as np
    weight = np.ones((2, 3), "float64")
    c = relax.const(weight, relax.DynTensorType(2, "float32"))
    assert c.data.numpy().dtype == np.float32
    assert c.struct_info.static_shape() == (2, 3)
