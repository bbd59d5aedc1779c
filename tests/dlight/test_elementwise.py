"""The Elementwise rule: fused, vectorized, parallel when large."""
import re

import numpy as np
from hypothesis import given, settings, strategies as st
import pytest

from mlcbench import te, topi
from mlcbench.dlight.cpu import Elementwise
from mlcbench.dlight.cpu.common import choose_vector_tile

from mlcbench.target import Target

TARGET = Target("llvm")


def test_applies_to_injective_and_not_to_reductions(rule_for):
    x = te.placeholder((7, 13), name="x")
    assert rule_for([x], topi.nn.relu(topi.exp(x))) == "Elementwise"
    assert Elementwise().apply(te.create_prim_func([x, topi.sum(x, axis=1)]), TARGET) is None


def test_small_kernels_stay_on_one_thread(default_schedule):
    x = te.placeholder((7, 13), name="x")
    text = default_schedule(te.create_prim_func([x, topi.exp(x)])).script()
    assert "T.parallel" not in text and "T.vectorized" in text


@pytest.mark.parametrize("shape, parallel", [((1, 272, 14, 14), True), ((1, 64, 8, 8), False)])
def test_injective_kernels_of_16k_elements_are_parallel(shape, parallel, default_schedule,
                                                        named_target):
    """A concat, add and relu of ShuffleNet's 1x272x14x14 maps reads what a parallel
    convolution wrote, half of it in the other core's cache: on two threads it took 22 us
    per call in the model, on one 41. A 4K-element kernel stays on one thread."""
    parts = [te.placeholder((shape[0], shape[1] // 2, *shape[2:]), name=f"x{k}")
             for k in range(2)]
    y = topi.nn.relu(topi.concatenate(parts, axis=1))
    text = default_schedule(te.create_prim_func([*parts, y]), named_target).script()
    assert ("T.parallel" in text) == parallel, text
    assert "T.vectorized" in text


def test_reductions_of_16k_elements_stay_on_one_thread(default_schedule, named_target):
    """Only injective kernels take the lower threshold: a row sum keeps its own."""
    x = te.placeholder((128, 256), name="x")
    text = default_schedule(te.create_prim_func([x, topi.sum(x, axis=1)]), named_target).script()
    assert "T.parallel" not in text, text


def test_large_kernels_are_parallel_and_fused(default_schedule):
    x = te.placeholder((512, 512), name="x")
    y = topi.nn.relu(topi.add(x, x))
    text = default_schedule(te.create_prim_func([x, y])).script()
    assert "T.parallel" in text and 'T.block("T_add")' not in text


@pytest.mark.parametrize("shape", [(1000,), (7, 13), (3, 5, 1000)])
def test_broadcast_chain_matches_numpy(shape, run_te, rng):
    a = rng.standard_normal(shape).astype("float32")
    b = rng.standard_normal(shape[-1:]).astype("float32")
    x, y = te.placeholder(shape, name="x"), te.placeholder(shape[-1:], name="y")
    out = topi.sigmoid(topi.multiply(topi.add(x, y), y))
    np.testing.assert_allclose(run_te([x, y], out, [a, b]), 1 / (1 + np.exp(-(a + b) * b)),
                               rtol=1e-5, atol=1e-6)


def test_transpose_of_large_odd_tensor(run_te, rng):
    a = rng.standard_normal((257, 301)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    np.testing.assert_array_equal(run_te([x], topi.transpose(x), [a]), a.T)


@pytest.mark.parametrize("extent, tile", [(1024, 32), (48, 16), (56, 8), (13, 13), (1000, 8),
                                          (37, 16), (28, 14), (20, 10), (30, 15), (17, 17)])
def test_vector_tile_prefers_whole_registers(extent, tile):
    assert choose_vector_tile(extent, 16) == tile


@pytest.mark.parametrize("extent, tile", [(28, 4), (14, 14), (13, 13), (56, 8)])
def test_vector_tile_with_eight_lanes(extent, tile):
    """AVX2 keeps a whole short row: a 14-lane tile measured faster than 7 there."""
    assert choose_vector_tile(extent, 8) == tile


@settings(max_examples=40, deadline=None)
@given(extent=st.integers(1, 200), lanes=st.sampled_from([4, 8, 16]))
def test_vector_tile_is_a_divisor_or_a_register(extent, lanes):
    """A tile either divides the loop (no tail) or is one register (a predicated tail),
    or covers a loop of at most two registers whole."""
    tile = choose_vector_tile(extent, lanes)
    assert 1 <= tile <= max(extent, lanes)
    assert extent % tile == 0 or tile == lanes or tile == extent


def test_padded_copy_vectorizes_its_last_axis_alone(default_schedule):
    """Fused with the outer loops, a pad's window index needs a division per element
    and stays scalar; its own last axis vectorizes with affine indices."""
    x = te.placeholder((1, 64, 56, 56), name="x")
    func = te.create_prim_func([x, topi.nn.pad(x, (0, 0, 1, 1), (0, 0, 1, 1))])
    text = default_schedule(func).script()
    assert re.search(r"for i0_i1_fused in T.parallel\(64\):\s*for i2, i3_0 in T.grid\(58, \d+\):"
                     r"\s*for i3_1 in T.vectorized\(\d+\)", text), text


@pytest.mark.parametrize("shape, loops", [
    ((1, 272, 14, 14), ["T.parallel(272)", "range(14)", "T.vectorized(14)"]),
    ((8, 64, 28, 28), ["T.parallel(512)", "T.grid(28, 2)", "T.vectorized(14)"]),
    ((2, 3, 5, 7, 400), ["T.parallel(210)", "range(25)", "T.vectorized(16)"])])
def test_a_task_holds_whole_rows_once_there_are_enough_tasks(default_schedule, shape, loops):
    """The fewest outer loops that give ``MIN_PARALLEL_TASKS`` tasks run in parallel and
    the rest serially inside each task: one short row per task spent more on the loop
    than on the row (ShuffleNet's 1x272x14x14 join of groups, add and relu: 14.5 -> 7.9
    us alone on a 2-core Zen 4). Fewer than that many planes (2 x 3 x 5) take rows too."""
    a, b = te.placeholder(shape, name="a"), te.placeholder(shape, name="b")
    text = default_schedule(te.create_prim_func([a, b, topi.nn.relu(topi.add(a, b))])).script()
    assert re.findall(r"for [\w, ]+ in (.*):", text) == loops, text


@settings(max_examples=15, deadline=None)
@given(shape=st.sampled_from([(1, 7, 13), (2, 3, 16, 17), (1000, 13), (13, 1000)]),
       pad=st.integers(0, 3))
def test_pad_matches_numpy(run_te, shape, pad):
    a = np.random.default_rng(len(shape)).standard_normal(shape).astype("float32")
    x = te.placeholder(shape, name="x")
    before = [0] * (len(shape) - 1) + [pad]
    after = [0] * (len(shape) - 2) + [pad, 1]
    want = np.pad(a, list(zip(before, after)))
    np.testing.assert_array_equal(run_te([x], topi.nn.pad(x, before, after), [a]), want)


@pytest.mark.parametrize("shape, row", [((1, 272, 14, 14), 14), ((2, 40, 14, 1), 14),
                                        ((3, 10), 10)])
def test_a_short_row_is_vectorized_by_itself(shape, row, default_schedule, named_target):
    """A last axis shorter than two vectors (14x14 maps) is vectorized alone, with the
    unit axes after it, under the fused outer loops: fused with them, every index
    divides the counter per element (1x272x14x14 add and relu: 1.2 ms, now 0.011)."""
    x = te.placeholder(shape, name="x")
    func = te.create_prim_func([x, topi.nn.relu(topi.add(x, x))])
    text = default_schedule(func, named_target).script()
    assert re.search(rf"for \w+ in T\.vectorized\({row}\):\s*with T\.block", text), text
    if shape[-1] > 1:      # the row's index is its loop variable, not a division
        assert re.search(rf"T\.axis\.spatial\({row}, \w+\)\n|T\.axis\.remap", text), text


@pytest.mark.parametrize("target", ["llvm -mcpu=znver4", "llvm -mcpu=skylake-avx512"])
def test_maps_narrower_than_half_a_vector_are_vectorized_per_channel(target, default_schedule):
    """A 7x7 map against 16 lanes: the map's 49 pixels are one vectorized run under the
    channel loop, so channel-dependent indices (a concatenation's branches, a per-channel
    bias) stay uniform across the vector; fused across channels they took 210-227 us
    instead of 4-7 for ShuffleNet's concat, add and relu of 544 such maps (AVX-512 Xeon)."""
    parts = [te.placeholder((1, 136, 7, 7), name=f"x{k}") for k in range(4)]
    bias = te.placeholder((1, 544, 1, 1), name="b")
    y = topi.nn.relu(topi.add(topi.concatenate(parts, axis=1), bias))
    text = default_schedule(te.create_prim_func([*parts, bias, y]), Target(target)).script()
    assert re.search(r"for \w+ in T\.parallel\(544\):\s*for \w+ in range\(4\):\s*"
                     r"for \w+ in T\.vectorized\(16\)", text), text
    assert re.search(r"T\.axis\.spatial\(544, \w+ % 544\)", text), text


@settings(max_examples=10, deadline=None)
@given(c=st.integers(1, 20), h=st.integers(1, 9), w=st.integers(1, 9))
def test_small_maps_with_concatenation_match_numpy(c, h, w, run_te):
    rng = np.random.default_rng(c * 100 + h * 10 + w)
    arrays = [rng.standard_normal((1, c, h, w)).astype("float32") for _ in range(2)]
    bias = rng.standard_normal((1, 2 * c, 1, 1)).astype("float32")
    parts = [te.placeholder((1, c, h, w), name=f"x{k}") for k in range(2)]
    b = te.placeholder((1, 2 * c, 1, 1), name="b")
    y = topi.nn.relu(topi.add(topi.concatenate(parts, axis=1), b))
    expected = np.maximum(np.concatenate(arrays, axis=1) + bias, 0)
    np.testing.assert_allclose(run_te([*parts, b], y, [*arrays, bias]), expected, rtol=1e-6)


@pytest.mark.parametrize("shape", [(1, 5, 3), (4, 1)])
def test_rows_shorter_than_half_a_vector_are_still_fused(shape, default_schedule,
                                                        named_target):
    x = te.placeholder(shape, name="x")
    text = default_schedule(te.create_prim_func([x, topi.exp(x)]), named_target).script()
    assert "_fused" in text and f"T.vectorized({shape[-1]})" not in text, text


@settings(max_examples=12, deadline=None)
@given(dims=st.lists(st.integers(1, 20), min_size=2, max_size=4), seed=st.integers(0, 99))
def test_channel_shuffle_and_broadcast_match_numpy_for_any_shape(dims, seed, run_te):
    """A broadcast add, then ShuffleNet's reshape-transpose-reshape over the first axis
    split in two groups."""
    shape = [2 * dims[0], *dims[1:]]
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype("float32")
    b = rng.standard_normal(shape[-1:]).astype("float32")
    x, y = te.placeholder(shape, name="x"), te.placeholder(shape[-1:], name="y")
    split = topi.reshape(topi.add(x, y), (2, dims[0], *dims[1:]))
    order = (1, 0, *range(2, len(shape) + 1))
    out = topi.reshape(topi.transpose(split, order), shape)
    expected = (a + b).reshape(2, dims[0], *dims[1:]).transpose(order).reshape(shape)
    np.testing.assert_allclose(run_te([x, y], out, [a, b]), expected, rtol=1e-6)
