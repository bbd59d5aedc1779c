"""softmax and log_softmax along any axis."""
import numpy as np
import pytest

from mlcbench import te, topi
from mlcbench.topi import testing as ref


@pytest.mark.parametrize("shape, axis", [((3, 13), -1), ((7, 4, 5), 1), ((2, 7), 0)])
def test_softmax_and_log_softmax(shape, axis, run_te, rng):
    a = (rng.standard_normal(shape) * 5).astype("float32")
    x = te.placeholder(shape, name="x")
    soft, logsoft = run_te([x], [topi.nn.softmax(x, axis), topi.nn.log_softmax(x, axis)], [a])
    np.testing.assert_allclose(soft, ref.softmax_python(a, axis), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(logsoft, ref.log_softmax_python(a, axis), rtol=1e-5, atol=1e-5)


def test_softmax_stages_named_like_tvm():
    x = te.placeholder((2, 3), name="x")
    text = te.create_prim_func([x, topi.nn.softmax(x)]).script()
    for block in ("T_softmax_maxelem", "T_softmax_exp", "T_softmax_expsum", "T_softmax_norm"):
        assert f'with T.block("{block}"):' in text
    assert "for i0, k in T.grid(2, 3):" in text
