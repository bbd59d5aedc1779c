import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import mlcbench.runtime as rt
from mlcbench.ir.errors import RuntimeError_
from mlcbench.runtime import ndarray as nd

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"]


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(st.sampled_from(DTYPES), hnp.array_shapes(min_dims=0, max_dims=4, max_side=5)))
def test_array_round_trips_any_dtype_and_shape(data):
    arr = nd.array(data)
    assert arr.shape == data.shape and arr.dtype == str(data.dtype)
    assert arr.data_ptr % 64 == 0 and arr.handle == arr.data_ptr
    np.testing.assert_array_equal(arr.numpy(), data)


def test_numpy_returns_a_copy():
    arr = nd.array(np.zeros(3, "float32"))
    arr.numpy()[0] = 5
    assert arr.numpy()[0] == 0


def test_array_copies_its_source():
    source = np.ones(4, "int32")
    arr = nd.array(source)
    source[:] = 7
    assert arr.numpy().tolist() == [1, 1, 1, 1]


def test_array_from_list_nd_and_dtype_and_device():
    assert nd.array([1.5, 2.5]).dtype == "float64"
    assert nd.array([1, 2], rt.cpu(), dtype="float32").dtype == "float32"
    copy = nd.array(nd.array([[1, 2]], dtype="int64"))
    assert copy.shape == (1, 2) and copy.dtype == "int64"
    assert nd.array(np.arange(3), device="llvm").device == rt.cpu()


def test_array_makes_non_contiguous_input_contiguous():
    source = np.arange(12, dtype="float32").reshape(3, 4).T
    arr = nd.array(source)
    assert arr.is_contiguous and arr.data_ptr % 64 == 0
    np.testing.assert_array_equal(arr.numpy(), source)


def test_empty_shape_dtype_alignment():
    arr = nd.empty((2, 3), "int32")
    assert (arr.shape, arr.dtype, arr.ndim, arr.data_ptr % 64) == ((2, 3), "int32", 2, 0)
    assert nd.empty(5).shape == (5,) and nd.empty(5).dtype == "float32"
    assert nd.empty((0, 4)).shape == (0, 4) and nd.empty(()).shape == ()


def test_empty_rejects_bad_shape_and_dtype():
    with pytest.raises(ValueError, match="non-negative"):
        nd.empty((-1, 2))
    with pytest.raises(ValueError, match="dtype"):
        nd.empty((2,), "complex64")


def test_arrays_on_the_simulated_gpu_live_in_host_memory(monkeypatch):
    monkeypatch.setenv("MLCBENCH_GPU", "sim")
    a = nd.array(np.arange(4, dtype="float32"), rt.cuda())
    assert a.device == rt.cuda() and nd.empty((2,), device=rt.cuda()).device == rt.cuda()
    np.testing.assert_array_equal(a.numpy(), np.arange(4))
    a.copyfrom(np.ones(4, "float32"))
    np.testing.assert_array_equal(a.copyto(rt.cpu()).numpy(), np.ones(4))
    # DLPack says where the bytes are: host memory, which numpy reads in place.
    assert a.__dlpack_device__() == (rt.kDLCPU, 0)
    assert np.from_dlpack(a).ctypes.data == a.data_ptr
    with pytest.raises(RuntimeError_, match="cuda.1. does not exist"):
        nd.array([1], rt.cuda(1))


def test_repr_like_tvm():
    arr = nd.array(np.array([[1, 2], [3, 4]], "float32"))
    assert repr(arr) == ("<mlcbench.nd.NDArray shape=(2, 2), cpu(0)>\n"
                         "array([[1., 2.],\n       [3., 4.]], dtype=float32)")
    assert str(arr) == str(arr.numpy())


def test_copyfrom_numpy_list_and_ndarray():
    arr = nd.empty((2,), "float32")
    assert arr.copyfrom(np.array([1, 2], "float32")) is arr
    assert arr.numpy().tolist() == [1, 2]
    arr.copyfrom([3, 4])
    assert arr.numpy().tolist() == [3, 4]
    arr.copyfrom(nd.array(np.array([5, 6], "float32")))
    assert arr.numpy().tolist() == [5, 6]
    arr[:] = np.array([7, 8], "float32")
    assert arr.numpy().tolist() == [7, 8]


def test_copyfrom_checks_shape_and_dtype():
    arr = nd.empty((2, 2), "float32")
    with pytest.raises(ValueError, match=r"shape mismatch.*\(2, 2\).*\(4,\)"):
        arr.copyfrom(np.zeros(4, "float32"))
    with pytest.raises(ValueError, match=r"dtype mismatch.*float32.*float64.*astype"):
        arr.copyfrom(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="a\\[:\\]"):
        arr[0] = 1


def test_copyto_ndarray_and_device():
    src = nd.array(np.arange(3, dtype="int16"))
    dst = nd.empty((3,), "int16")
    assert src.copyto(dst) is dst and dst.numpy().tolist() == [0, 1, 2]
    fresh = src.copyto(rt.cpu())
    assert fresh.data_ptr != src.data_ptr and fresh.numpy().tolist() == [0, 1, 2]
    with pytest.raises(TypeError):
        src.copyto("somewhere")


def test_dlpack_to_numpy_is_zero_copy():
    arr = nd.array(np.arange(6, dtype="float32").reshape(2, 3))
    view = np.from_dlpack(arr)
    assert view.ctypes.data == arr.data_ptr and arr.__dlpack_device__() == (1, 0)
    view[0, 0] = 42  # shared memory: the NDArray sees it
    assert arr.numpy()[0, 0] == 42


def test_from_dlpack_shares_contiguous_memory():
    source = np.arange(5, dtype="int32")
    arr = nd.from_dlpack(source)
    assert arr.data_ptr == source.ctypes.data
    source[0] = 9
    assert arr.numpy()[0] == 9
    assert nd.from_dlpack(arr) is arr


def test_from_dlpack_copies_non_contiguous():
    source = np.arange(10, dtype="float64")[::2]
    arr = nd.from_dlpack(source)
    assert arr.is_contiguous and arr.numpy().tolist() == [0, 2, 4, 6, 8]


def test_array_accepts_dlpack_objects():
    class Producer:  # any object with the DLPack protocol, like a torch tensor
        def __init__(self, data):
            self.data = data

        def __dlpack__(self, **kwargs):
            return self.data.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.data.__dlpack_device__()

    arr = nd.array(Producer(np.arange(4, dtype="uint8")))
    assert arr.dtype == "uint8" and arr.numpy().tolist() == [0, 1, 2, 3]


def test_from_dlpack_of_gpu_tensor_is_clear_error():
    class GpuTensor:
        def __dlpack__(self, **kwargs):
            raise AssertionError("must not be read")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(RuntimeError_, match="no GPU runtime"):
        nd.from_dlpack(GpuTensor())


def test_numpyasarray_shares_memory_and_needs_contiguity():
    source = np.zeros((2, 2), "float32")
    view = nd.numpyasarray(source)
    assert view.data_ptr == source.ctypes.data
    with pytest.raises(ValueError, match="C-contiguous"):
        nd.numpyasarray(source.T)
    with pytest.raises(TypeError):
        nd.numpyasarray([1, 2])


def test_same_as_and_np_asarray():
    arr = nd.array([1, 2, 3])
    assert arr.same_as(arr) and not arr.same_as(nd.array([1, 2, 3]))
    assert np.asarray(arr).tolist() == [1, 2, 3]
    assert arr.asnumpy().tolist() == [1, 2, 3]


def test_address_of_matches_numpy_for_writable_read_only_and_empty_arrays():
    writable = np.arange(6, dtype="float32").reshape(2, 3)
    read_only = np.frombuffer(b"\0" * 16, dtype="float32")
    for data in (writable, writable[1], read_only, np.empty((0,), "float32")):
        assert nd.address_of(data) == data.ctypes.data
    for made in (nd.array(writable), nd.empty((3, 5), "int8"), nd.array(read_only)):
        assert made.data_ptr == made._array.ctypes.data and made.data_ptr % nd.ALIGNMENT == 0
