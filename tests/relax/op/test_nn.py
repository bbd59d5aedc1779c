"""relax.op.nn.conv2d with groups: legalized one convolution per group plus a concat."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax.op.nn import GROUP_CHANNEL_MULTIPLE, MAX_GROUPS_AS_AXIS
from mlcbench.topi import testing as ref
from helpers.relax_testing import conv2d_module


def _called(mod) -> list:
    """``(PrimFunc name without its number, shapes of constant arguments)`` of each
    call_tir in ``main``."""
    calls = []

    def visit(expr):
        if isinstance(expr, relax.Call) and getattr(expr.op, "name", "") == "relax.call_tir":
            constants = [tuple(a.data.shape) for a in expr.args[1].fields
                         if isinstance(a, relax.Constant)]
            calls.append((re.sub(r"\d+$", "", expr.args[0].name_hint), constants))
    relax.analysis.post_order_visit(mod["main"], visit)
    return calls


def test_groups_are_an_output_axis_of_one_convolution():
    """Four groups of 34 channels: one convolution whose constant weight holds the groups
    apart, each padded to 40 output channels, and one kernel that skips the padding."""
    weight = np.arange(136 * 34, dtype="float32").reshape(136, 34, 1, 1)
    mod = relax.transform.LegalizeOps()(conv2d_module((1, 136, 7, 7), weight, 4))
    calls = _called(mod)
    assert [name for name, _ in calls] == ["group_conv2d", "ungroup_channels"]
    assert calls[0][1] == [(4, 40, 34, 1, 1)]
    packed = next(c.data.numpy() for c in _constants(mod["main"]))
    np.testing.assert_array_equal(packed[:, :34], weight.reshape(4, 34, 34, 1, 1))
    assert not packed[:, 34:].any()


def _constants(func) -> list:
    found = []
    relax.analysis.post_order_visit(func, lambda e: found.append(e) if isinstance(
        e, relax.Constant) and e.data.numpy().ndim == 5 else None)
    return found


def test_a_parameter_weight_is_reshaped_not_padded():
    mod = relax.transform.LegalizeOps()(conv2d_module((1, 8, 5, 5), (6, 4, 3, 3), 2, 1))
    names = [name for name, _ in _called(mod)]
    assert names == ["reshape", "group_conv2d", "ungroup_channels"]


@pytest.mark.parametrize("channels, groups, weight", [
    (8, 8, (8, 1, 3, 3)),                                       # depthwise
    (MAX_GROUPS_AS_AXIS * 4 + 4, MAX_GROUPS_AS_AXIS + 1, (MAX_GROUPS_AS_AXIS + 1, 4, 1, 1))])
def test_depthwise_and_many_groups_stay_one_kernel(channels, groups, weight):
    mod = conv2d_module((1, channels, 5, 5), np.ones(weight, "float32"), groups, 1)
    assert [name for name, _ in _called(relax.transform.LegalizeOps()(mod))] == ["conv2d"]


def _run(mod, *arrays):
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    return vm["main"](*(tvm.nd.array(a) for a in arrays)).numpy()


@settings(max_examples=6, deadline=None)
@given(groups=st.integers(2, 4), in_per_group=st.integers(2, 5),
       out_per_group=st.integers(1, GROUP_CHANNEL_MULTIPLE + 3), kernel=st.sampled_from([1, 3]),
       stride=st.integers(1, 2), constant=st.booleans(), seed=st.integers(0, 2**16))
def test_grouped_conv2d_matches_numpy(groups, in_per_group, out_per_group, kernel, stride,
                                      constant, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((1, groups * in_per_group, 7, 7)).astype("float32")
    w = rng.standard_normal((groups * out_per_group, in_per_group, kernel, kernel)
                            ).astype("float32")
    pad = kernel // 2
    mod = conv2d_module(a.shape, w if constant else w.shape, groups, pad, stride)
    got = _run(mod, a) if constant else _run(mod, a, w)
    expected = ref.conv2d_nchw_python(a, w, stride, (pad,) * 4, 1, groups)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
