"""relax.op.broadcast_to: shape rule, refusals, numeric result."""
import numpy as np
import pytest

from mlcbench import relax
from mlcbench.ir.errors import IRError
from mlcbench.relax import op


def var(shape):
    return relax.Var("v", relax.TensorStructInfo(shape, "float32"))


def test_broadcast_to_result_and_shape(run_relax, rng):
    a = rng.standard_normal((3, 1)).astype("float32")
    got = run_relax(lambda x: op.broadcast_to(x, (2, 3, 4)), a)
    np.testing.assert_array_equal(got, np.broadcast_to(a, (2, 3, 4)))


@pytest.mark.parametrize("source, target, message", [
    ((3, 2), (3, 4), "do not broadcast"),
    ((2, 3), (3,), "lower-rank"),
    ((1, 4), (1, 1), "not to"),
])
def test_broadcast_to_refuses(source, target, message):
    with pytest.raises(IRError, match=message):
        relax.BlockBuilder().normalize(op.broadcast_to(var(source), target))
