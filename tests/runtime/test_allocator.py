"""fixed_shape_allocator: fresh, aligned, never-shared arrays cut from slabs."""
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcbench.runtime import ndarray as nd
from mlcbench.runtime.allocator import fixed_shape_allocator
from mlcbench.runtime.errors import ArgumentValueError


def _spans(arrays) -> list:
    return sorted((a.data_ptr, a.data_ptr + a._array.nbytes) for a in arrays)


def _assert_disjoint(arrays) -> None:
    spans = _spans(arrays)
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert end <= start, "two arrays share memory"


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 9), min_size=0, max_size=3).map(tuple),
       dtype=st.sampled_from(["float32", "float64", "int8", "int64", "bool", "float16"]),
       count=st.integers(1, 40), slab_bytes=st.sampled_from([1, 200, 4096]))
def test_arrays_are_fresh_aligned_and_describe_their_memory(shape, dtype, count, slab_bytes):
    allocate = fixed_shape_allocator(shape, dtype, slab_bytes=slab_bytes)
    arrays = [allocate() for _ in range(count)]       # crosses slabs when they are small
    for a in arrays:
        assert a.shape == shape and str(a.dtype) == dtype
        assert a.data_ptr % nd.ALIGNMENT == 0
        assert a.data_ptr == a._array.ctypes.data     # the address the kernels receive
        assert a._array.flags.c_contiguous and a._array.flags.writeable
    _assert_disjoint(arrays)
    for value, a in enumerate(arrays):
        a._array[...] = value % 2
    assert all((a.numpy() == value % 2).all() for value, a in enumerate(arrays))


def test_an_array_keeps_its_slab_alive():
    allocate = fixed_shape_allocator((4,), "float32", slab_bytes=256)
    kept = allocate()
    kept._array[:] = [1, 2, 3, 4]
    for _ in range(100):                              # the slab of `kept` is left behind
        allocate()._array[:] = 0
    np.testing.assert_array_equal(kept.numpy(), [1, 2, 3, 4])


def test_threads_never_get_the_same_array():
    allocate = fixed_shape_allocator((3,), "float32", slab_bytes=128)   # 2 per slab
    results, barrier = [[] for _ in range(4)], threading.Barrier(4)

    def work(out):
        barrier.wait()
        out.extend(allocate() for _ in range(500))

    threads = [threading.Thread(target=work, args=(out,)) for out in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _assert_disjoint([a for out in results for a in out])


def test_a_dtype_without_an_mlcbench_equivalent_is_refused_when_made():
    with pytest.raises(ArgumentValueError, match="no mlcbench equivalent"):
        fixed_shape_allocator((2,), "complex64")
