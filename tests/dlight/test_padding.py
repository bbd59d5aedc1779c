"""Convolutions whose channel count is no multiple of a 16-lane vector keep whole vectors:
the last column tile runs over zero-padded weight panels, only the write-back tests the
bound (``mlcbench.dlight.cpu.padding``)."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench
from mlcbench import te, topi
from mlcbench.dlight.cpu.padding import padded_extent
from mlcbench.target import Target
from mlcbench.topi import testing as ref

AVX512 = Target("llvm -mcpu=znver4")      # 16 float lanes: the schedules are checked for it
AVX2 = Target("llvm -mcpu=znver3")


@pytest.mark.parametrize("extent, lanes, padded", [
    (1000, 16, 1008), (72, 16, 80), (136, 16, 144),
    (64, 16, None),          # already whole vectors
    (20, 16, None),          # under two vectors: half a vector stays
    (40, 16, None),          # 48 would be a fifth more work
    (1000, 8, None),         # AVX2: half a vector is half of a 256-bit register
])
def test_padded_extent(extent, lanes, padded):
    assert padded_extent(extent, lanes) == padded


def _conv(c_in, c_out, size, kernel, bias=True):
    x = te.placeholder((1, c_in, size, size), name="x")
    w = te.placeholder((c_out, c_in, kernel, kernel), name="w")
    out = topi.nn.conv2d_nchw(x, w, 1, kernel // 2, 1)
    if not bias:
        return [x, w], out
    b = te.placeholder((c_out, 1, 1), name="b")
    return [x, w, b], topi.nn.relu(topi.add(out, b))


def test_1000_channels_run_whole_vectors_and_only_the_write_back_tests_the_bound(
        default_schedule):
    inputs, out = _conv(32, 1000, 13, 1)
    text = default_schedule(te.create_prim_func(inputs + [out]), AVX512).script()
    assert 'T.alloc_buffer((1, 13, 13, 1008), scope="local")' in text, text
    assert "T.alloc_buffer((63, 32, 1, 1, 16))" in text, text        # 63 panels of 16
    update = text[text.index('T.block("conv2d_nchw_update")'):]
    update = update[:update.index("conv2d_nchw_local[v_nn, v_yy, v_xx, v_ff] =")]
    assert "T.where" not in update, text
    assert re.search(r"for \w+ in T\.vectorized\(16\):\s*with T\.block\(\"conv2d_nchw_update",
                     text), text
    # the panel's lanes past channel 999 are zeros, written by the packing
    assert "T.if_then_else(v0 < 1000, w[v0, v1, v2, v3], T.float32(0))" in text, text
    writeback = text[text.rindex("with T.block"):]
    assert re.search(r"T\.where\(.* (<= 999|< 1000)\)", writeback), text


def test_avx2_and_whole_channel_counts_are_not_padded(default_schedule):
    inputs, out = _conv(32, 1000, 13, 1)
    text = default_schedule(te.create_prim_func(inputs + [out]), AVX2).script()
    assert "1008" not in text and "T.if_then_else(v0 < 1000" not in text, text
    inputs, out = _conv(32, 64, 13, 1)
    text = default_schedule(te.create_prim_func(inputs + [out]), AVX512).script()
    assert "T.if_then_else" not in text, text


@settings(max_examples=8, deadline=None)
@given(c_out=st.sampled_from([34, 72, 100, 136, 200]), c_in=st.integers(1, 12),
       size=st.integers(3, 15), kernel=st.sampled_from([1, 3]), bias=st.booleans())
def test_padded_schedules_match_numpy(default_schedule, c_out, c_in, size, kernel, bias):
    """Scheduled for 16 lanes, built for this host (its vectors split as need be)."""
    inputs, out = _conv(c_in, c_out, size, kernel, bias)
    func = default_schedule(te.create_prim_func(inputs + [out]), AVX512)
    rng = np.random.default_rng(c_out * size + kernel)
    arrays = [rng.standard_normal([int(d) for d in t.shape]).astype("float32") for t in inputs]
    got = np.full([int(d) for d in out.shape], np.nan, "float32")
    mlcbench.build(func, target="llvm")["main"](*arrays, got)
    want = ref.conv2d_nchw_python(arrays[0], arrays[1], 1, (kernel // 2,) * 4)
    if bias:
        want = np.maximum(want + arrays[2], 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_a_count_no_half_vector_divides_is_padded_too(default_schedule):
    """100 channels: without padding a 16-lane tile would test its bound on every lane."""
    inputs, out = _conv(8, 100, 7, 3, bias=False)
    text = default_schedule(te.create_prim_func(inputs + [out]), AVX512).script()
    assert 'T.alloc_buffer((1, 7, 7, 112), scope="local")' in text, text
