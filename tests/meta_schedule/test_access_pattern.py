"""Access analysis of flat indices: interval bounds, strides, region sizes, reuse."""
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from mlcbench.meta_schedule.access_pattern import (Access, Loop, bounds, cache_misses,
                                                   contiguous_elements, find_reuse,
                                                   index_variables, loop_strides, region_numel)
from mlcbench.tir import Var, floordiv, floormod


def affine_access(coefficients, extents, offset=0):
    loops = [Loop(Var(f"i{n}"), 0, e, "serial") for n, e in enumerate(extents)]
    index = offset
    for loop, c in zip(loops, coefficients):
        if c:                       # as after Simplify: a loop with no effect is absent
            index = index + loop.var * c
    access = Access(key="A", name="A", dtype_bytes=4, kind="read", indices=[index])
    access.variables = index_variables(index)
    return access, loops


def brute_force_region(coefficients, extents, level):
    """Distinct index values when loops ``level..`` run and outer loops sit at 0."""
    ranges = [range(1) if n < level else range(e) for n, e in enumerate(extents)]
    return len({sum(c * x for c, x in zip(coefficients, point))
                for point in itertools.product(*ranges)})


def test_bounds_of_div_and_mod():
    i = Var("i")
    assert bounds(floordiv(i, 4) * 16 + floormod(i, 4), {i: (0, 31)}) == (0, 115)
    assert bounds(floormod(i, 8), {i: (8, 11)}) == (0, 3)
    assert bounds(i * -2, {i: (1, 3)}) == (-6, -2)


def test_strides_region_and_contiguity_of_a_matmul_read():
    # A[i * 32 + k] under (i, k, j): j leaves A alone, k walks it densely
    access, loops = affine_access([32, 1, 0], [8, 32, 16])
    strides = loop_strides(access, loops)
    assert strides == [32, 1, 0]
    assert [region_numel(access, loops, level, strides) for level in range(3)] == [256, 32, 1]
    assert contiguous_elements(loops, strides) == 256
    reuse = find_reuse(access, loops, {}, {"A": 4}, innermost_bytes=4)
    assert (reuse.kind, reuse.count, reuse.distance_iters) == ("loop", 16, 1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 6)), min_size=1, max_size=4),
       st.data())
def test_region_bounds_the_true_count_from_above(loops_spec, data):
    coefficients, extents = zip(*loops_spec)
    access, loops = affine_access(coefficients, extents, offset=7)
    strides = loop_strides(access, loops)
    level = data.draw(st.integers(0, len(loops) - 1))
    exact = brute_force_region(coefficients, extents, level)
    assert region_numel(access, loops, level, strides) >= exact


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.randoms())
def test_region_is_exact_for_row_major_tiles(extents, rnd):
    # loops visiting a dense row-major block, in any order: the count is exact
    sizes = list(extents)
    coefficients = [1] * len(sizes)
    for n in range(len(sizes) - 2, -1, -1):
        coefficients[n] = coefficients[n + 1] * sizes[n + 1]
    order = list(range(len(sizes)))
    rnd.shuffle(order)
    coefficients = [coefficients[n] for n in order]
    sizes = [sizes[n] for n in order]
    access, loops = affine_access(coefficients, sizes)
    strides = loop_strides(access, loops)
    for level in range(len(loops)):
        assert region_numel(access, loops, level, strides) == \
            brute_force_region(coefficients, sizes, level)


def test_cache_misses_refetch_what_does_not_fit():
    # A[i * 32 + k] under (i, k, j): 256 floats (1 KiB, 16 lines) in all, 32 per i
    access, loops = affine_access([32, 1, 0], [8, 32, 16])
    strides = loop_strides(access, loops)
    numels = [[region_numel(access, loops, level, strides) for level in range(3)]]
    assert cache_misses([access], loops, [strides], numels, 4096, 64) == 16
    # 64 bytes of cache: not even one row of k (128 B) fits, so every (i, k) iteration
    # fetches a line: 8 * 32 lines
    assert cache_misses([access], loops, [strides], numels, 64, 64) == 8 * 32
