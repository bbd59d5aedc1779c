"""relax.op.where: broadcasting of three operands, dtype rules, numeric result."""
import numpy as np
import pytest

from mlcbench import relax
from mlcbench.ir.errors import IRError
from mlcbench.relax import op


def var(shape, dtype="float32"):
    return relax.Var("v", relax.TensorStructInfo(shape, dtype))


def test_shape_is_the_broadcast_of_all_three():
    call = op.where(var((4, 1), "bool"), var((1, 5)), var((3, 1, 1)))
    assert relax.BlockBuilder().normalize(call).struct_info.static_shape() == (3, 4, 5)


def test_refuses_a_non_bool_condition_and_mixed_dtypes():
    with pytest.raises(IRError, match="condition must be bool"):
        relax.BlockBuilder().normalize(op.where(var((2,)), var((2,)), var((2,))))
    with pytest.raises(IRError, match="one dtype"):
        relax.BlockBuilder().normalize(op.where(var((2,), "bool"), var((2,)),
                                                var((2,), "int32")))


def test_matches_numpy(run_relax, rng):
    cond = rng.random((3, 1)) > 0.5
    x, y = rng.standard_normal((3, 4)).astype("float32"), rng.standard_normal(4).astype("float32")
    np.testing.assert_array_equal(run_relax(op.where, cond, x, y), np.where(cond, x, y))
