"""relax.op.strided_slice: shape rule (numpy's clamping), errors, and numeric results."""
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from mlcbench import relax
from mlcbench.ir.errors import IRError
from mlcbench.relax import op


def sinfo_of(expr):
    return relax.BlockBuilder().normalize(expr).struct_info


def x_var(shape, dtype="float32"):
    return relax.Var("x", relax.TensorStructInfo(shape, dtype))


@given(extent=st.integers(1, 9), begin=st.integers(-12, 12), end=st.integers(-12, 12),
       stride=st.integers(-3, 3).filter(bool))
def test_shape_rule_counts_what_numpy_selects(extent, begin, end, stride):
    sinfo = sinfo_of(op.strided_slice(x_var((2, extent)), [1], [begin], [end], [stride]))
    assert sinfo.static_shape() == np.zeros((2, extent))[:, begin:end:stride].shape


def test_refusals_name_the_problem():
    x = x_var((4, 5))
    with pytest.raises(IRError, match="stride 0"):
        sinfo_of(op.strided_slice(x, [0], [0], [2], [0]))
    with pytest.raises(IRError, match="one length"):
        op.strided_slice(x, [0, 1], [0], [2])
    with pytest.raises(IRError, match="out of range"):
        sinfo_of(op.strided_slice(x, [2], [0], [2]))
    with pytest.raises(IRError, match="repeat"):
        op.strided_slice(x, [1, 1], [0, 0], [2, 2])


@settings(max_examples=8, deadline=None)
@given(begin=st.integers(-6, 6), end=st.integers(-6, 7), stride=st.sampled_from([-2, -1, 1, 3]))
def test_matches_numpy(run_relax, begin, end, stride):
    a = np.arange(2 * 6 * 3, dtype="float32").reshape(2, 6, 3)
    assume(len(range(6)[begin:end:stride]) > 0)
    got = run_relax(lambda x: op.strided_slice(x, [1, 2], [begin, 0], [end, 3], [stride, 2]), a)
    np.testing.assert_array_equal(got, a[:, begin:end:stride, 0:3:2])
