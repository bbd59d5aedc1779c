"""relax.op.clip, nn.leakyrelu, nn.silu against numpy."""
import numpy as np
import pytest

from mlcbench import relax
from mlcbench.ir.errors import IRError
from mlcbench.relax import op


@pytest.mark.parametrize("build, reference", [
    (lambda x: op.clip(x, -0.5, 0.25), lambda a: np.clip(a, -0.5, 0.25)),
    (lambda x: op.nn.leakyrelu(x, 0.2), lambda a: np.where(a > 0, a, 0.2 * a)),
    (op.nn.leakyrelu, lambda a: np.where(a > 0, a, 0.01 * a)),
    (op.nn.silu, lambda a: a / (1 + np.exp(-a))),
], ids=["clip", "leakyrelu", "leakyrelu_default", "silu"])
def test_matches_numpy(run_relax, rng, build, reference):
    a = rng.standard_normal((3, 5)).astype("float32")
    np.testing.assert_allclose(run_relax(build, a), reference(a), rtol=1e-5, atol=1e-6)


def test_clip_refuses_min_above_max_and_silu_integers():
    x = relax.Var("x", relax.TensorStructInfo((2,), "float32"))
    with pytest.raises(IRError, match="above max"):
        relax.BlockBuilder().normalize(op.clip(x, 1, 0))
    i = relax.Var("i", relax.TensorStructInfo((2,), "int32"))
    with pytest.raises(IRError, match="floating-point"):
        relax.BlockBuilder().normalize(op.nn.silu(i))
