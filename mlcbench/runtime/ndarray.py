"""NDArray: the arrays that compiled functions read and write (``mlcbench.nd``).

An :class:`NDArray` owns (or borrows, via DLPack) C-contiguous host memory. Arrays made by
:func:`array` and :func:`empty` start on a 64-byte boundary, so generated code may use
aligned vector loads on them. Data moves in and out by copy, as in TVM:

>>> import numpy as np
>>> a = array(np.arange(4, dtype="float32").reshape(2, 2))
>>> a
<mlcbench.nd.NDArray shape=(2, 2), cpu(0)>
array([[0., 1.],
       [2., 3.]], dtype=float32)
>>> a.numpy()[0, 0] = 9      # a copy: the NDArray is unchanged
>>> float(a.numpy()[0, 0])
0.0

Zero-copy exchange goes through DLPack: ``np.from_dlpack(a)`` and :func:`from_dlpack`.
"""
from __future__ import annotations

import ctypes
import math

import numpy as np

from ..ir.dtype import dtype as as_dtype
from ..ir.errors import RuntimeError_
from .device import (NO_GPU_MESSAGE, Device, as_device, gpu_backend, kDLCPU, kDLCUDA,
                     require_gpu)
from .errors import ArgumentTypeError, ArgumentValueError

ALIGNMENT = 64
"""Byte alignment of the storage that :func:`array` and :func:`empty` allocate."""


def address_of(data: np.ndarray) -> int:
    """The address of ``data``'s first element.

    ``data.ctypes.data`` builds a ctypes helper object in Python (3 to 5 us here, more than
    a small kernel's whole run); a ctypes view of the buffer gives the same address in
    under 1 us. Read-only and empty arrays cannot be viewed that way and take the slow path.
    """
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(data))
    except (TypeError, ValueError, BufferError):
        return data.ctypes.data


def _aligned_empty(shape: tuple, np_dtype: np.dtype) -> tuple[np.ndarray, int]:
    """An uninitialized C-contiguous array whose data starts on an ``ALIGNMENT`` boundary,
    and that address.

    numpy only promises 16 bytes, so we over-allocate a byte buffer and take an aligned
    view of it; the view keeps the buffer alive.
    """
    nbytes = math.prod(shape) * np_dtype.itemsize     # math.prod: np.prod costs microseconds
    raw = np.empty(nbytes + ALIGNMENT, dtype=np.uint8)
    start = address_of(raw)
    offset = (-start) % ALIGNMENT
    return raw[offset:offset + nbytes].view(np_dtype).reshape(shape), start + offset


_DATATYPES: dict = {}


def _datatype_of(np_dtype: np.dtype):
    """``as_dtype(np_dtype)``, memoized: numpy's ``dtype.name`` is computed in Python and
    costs microseconds, which every NDArray made by the VM would pay."""
    found = _DATATYPES.get(np_dtype)
    if found is None:
        found = _DATATYPES[np_dtype] = as_dtype(np_dtype)
    return found


def _require_host_memory(dev: Device, what: str) -> Device:
    """The CPU, or the simulated GPU (whose arrays live in host memory too)."""
    if dev.device_type != kDLCPU:
        return require_gpu(dev, what)
    return dev


def _on_real_gpu(dev: Device) -> bool:
    """Whether arrays on ``dev`` live in a real GPU's memory (not the simulator's)."""
    return dev.device_type == kDLCUDA and gpu_backend() == "cuda"


def _numpy_dtype(dtype) -> np.dtype:
    try:
        return as_dtype(dtype).to_numpy()
    except (ValueError, TypeError) as err:
        raise ArgumentValueError(f"NDArray dtype: {err}") from None


def supported_datatype(np_dtype: np.dtype):
    """The mlcbench dtype of a numpy dtype, or ArgumentValueError when it has none."""
    try:
        return _datatype_of(np_dtype)
    except (ValueError, TypeError):
        raise ArgumentValueError(f"NDArray: numpy dtype {np_dtype} has no mlcbench "
                                 "equivalent (supported: bool, int8-64, uint8-64, "
                                 "float16/32/64)") from None


class NDArray:
    """An n-dimensional array on a device; see the module docstring for an example.

    Do not construct directly: use :func:`array`, :func:`empty` or :func:`from_dlpack`.
    ``shape`` is a tuple of ints, ``dtype`` a str like ``"float32"``, ``handle`` /
    ``data_ptr`` the address of the first element (what compiled code receives).
    """

    __slots__ = ("_array", "shape", "dtype", "device", "data_ptr", "__weakref__")

    def __init__(self, data: np.ndarray, device: Device):
        if not data.flags.c_contiguous:
            raise ArgumentValueError("NDArray storage must be C-contiguous")
        self.dtype = supported_datatype(data.dtype)
        self._array = data
        self.shape = data.shape         # numpy's shape is already a tuple of Python ints
        self.device = device
        self.data_ptr = address_of(data)

    @classmethod
    def _trusted(cls, data: np.ndarray, dtype, device: Device, data_ptr: int) -> "NDArray":
        """An NDArray over ``data`` whose facts the caller already knows: C-contiguous,
        ``dtype`` (:func:`~mlcbench.ir.dtype.dtype` of its numpy dtype) and its address.
        For allocators that make the same kind of array on every call (the VM's outputs),
        where the checks of ``__init__`` would cost more than the allocation."""
        array = object.__new__(cls)
        array._array, array.shape, array.dtype = data, data.shape, dtype
        array.device, array.data_ptr = device, data_ptr
        return array

    # -- facts ------------------------------------------------------------------------
    @property
    def handle(self) -> int:
        """Address of the first element, as passed to compiled functions."""
        return self.data_ptr

    @property
    def ctx(self) -> Device:
        """The device, under the name the older TVM API gave it."""
        return self.device

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_contiguous(self) -> bool:
        """Always ``True``: NDArrays are dense row-major (non-contiguous data is copied in)."""
        return bool(self._array.flags.c_contiguous)

    # -- moving data ------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A numpy copy of the contents (changing it does not change the NDArray)."""
        return self._array.copy()

    asnumpy = numpy  # the 2022 spelling

    def __array__(self, dtype=None, copy=None):
        result = self.numpy()
        return result if dtype is None else result.astype(dtype)

    def host_view(self) -> np.ndarray:
        """The elements as a numpy array in host memory: this array's own storage (an
        array in a real GPU's memory gives a copy)."""
        return self._array

    def copyfrom(self, source) -> "NDArray":
        """Copy ``source`` (numpy array, list, or NDArray) into this array; returns self.

        Shapes must match exactly. A numpy array or NDArray must also have the same dtype
        (convert first, e.g. ``x.astype("float32")``); lists and scalars take this dtype.
        """
        if isinstance(source, NDArray):
            source = source.host_view()
        elif not isinstance(source, np.ndarray):
            source = np.asarray(source, dtype=self._array.dtype)
        if tuple(source.shape) != self.shape:
            raise ArgumentValueError(
                f"copyfrom: shape mismatch: this NDArray has shape {self.shape}, "
                f"the source has shape {tuple(source.shape)}")
        if source.dtype != self._array.dtype:
            raise ArgumentValueError(
                f"copyfrom: dtype mismatch: this NDArray is {self.dtype}, the source is "
                f"{as_dtype(source.dtype)}; convert it first with .astype({str(self.dtype)!r})")
        np.copyto(self._array, source)
        return self

    def copyto(self, target):
        """Copy into ``target``: an NDArray (filled in place) or a Device (a new NDArray)."""
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        if isinstance(target, Device):
            return array(self.host_view(), device=target)
        raise ArgumentTypeError(f"copyto: expected an NDArray or a Device, found {type(target).__name__}")

    def __setitem__(self, index, value) -> None:
        """``a[:] = value`` copies ``value`` in (TVM supports only the full slice)."""
        if not (isinstance(index, slice) and index == slice(None)):
            raise ArgumentValueError("NDArray only supports a[:] = value; use .numpy() to index")
        self.copyfrom(value)

    # -- DLPack -----------------------------------------------------------------------
    def __dlpack__(self, *args, **kwargs):
        """Share this array's memory without copying (``np.from_dlpack(a)``)."""
        return self._array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        """Where the bytes are. Arrays of the simulated GPU live in host memory, so they
        go out as CPU tensors (numpy and torch read them in place)."""
        if self.device.device_type == kDLCUDA:
            return (kDLCPU, 0)
        return self.device._dlpack()

    to_dlpack = __dlpack__

    # -- printing ---------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"<mlcbench.nd.NDArray shape={self.shape}, {self.device}>\n{self._array!r}"

    def __str__(self) -> str:
        return str(self._array)

    def same_as(self, other) -> bool:
        """Whether both NDArrays view the same memory with the same shape and dtype."""
        return (isinstance(other, NDArray) and other.data_ptr == self.data_ptr
                and other.shape == self.shape and other.dtype == self.dtype)


def device_or_ctx(device, ctx, where: str):
    """``device``, or ``ctx`` as the older TVM API named it; both only when they agree."""
    if ctx is None:
        return device
    if device is not None and as_device(device) != as_device(ctx):
        raise ArgumentValueError(f"{where}: device={device} and ctx={ctx} disagree; ctx is "
                                 "the older name of device, give one of them")
    return ctx


def empty(shape, dtype="float32", device=None, *, ctx=None) -> NDArray:
    """An uninitialized, 64-byte aligned NDArray: ``empty((2, 3), "int32")``."""
    device = device_or_ctx(device, ctx, "nd.empty")
    dev = _require_host_memory(as_device(device), "nd.empty")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ArgumentValueError(f"nd.empty: shape must be non-negative, found {shape}")
    np_dtype = _numpy_dtype(dtype)
    if _on_real_gpu(dev):
        from .cuda_ndarray import cuda_empty
        return cuda_empty(shape, np_dtype, dev)
    data, address = _aligned_empty(shape, np_dtype)
    return NDArray._trusted(data, supported_datatype(np_dtype), dev, address)


def _to_numpy_source(obj, dtype) -> np.ndarray:
    """View what the user passed as a numpy array (a copy only when it must convert)."""
    if isinstance(obj, NDArray):
        obj = obj.host_view()
    elif not isinstance(obj, np.ndarray) and hasattr(obj, "__dlpack__"):
        obj = _numpy_from_dlpack(obj)
    if dtype is not None:
        return np.asarray(obj, dtype=_numpy_dtype(dtype))
    return np.asarray(obj)  # a list of Python floats stays float64, as in TVM


def array(obj, device=None, dtype=None, *, ctx=None) -> NDArray:
    """Copy ``obj`` (numpy array, list, NDArray or DLPack tensor) into a new NDArray.
    ``ctx=`` is accepted as the older name of ``device``.

    >>> array([1, 2, 3], dtype="int64").shape
    (3,)
    """
    device = device_or_ctx(device, ctx, "nd.array")
    dev = _require_host_memory(as_device(device), "nd.array")
    source = _to_numpy_source(obj, dtype)
    if _on_real_gpu(dev):
        from .cuda_ndarray import cuda_array
        supported_datatype(source.dtype)
        return cuda_array(source, dev)
    data, address = _aligned_empty(source.shape, source.dtype)
    result = NDArray._trusted(data, supported_datatype(source.dtype), dev, address)
    np.copyto(data, source)
    return result


def _numpy_from_dlpack(obj) -> np.ndarray:
    if hasattr(obj, "__dlpack_device__"):
        dev_type, _ = obj.__dlpack_device__()
        if _real_gpu_tensor(obj):
            return from_dlpack(obj).host_view()
        if int(dev_type) != kDLCPU:
            raise RuntimeError_(NO_GPU_MESSAGE.format(what="a tensor on DLPack device type "
                                                       f"{int(dev_type)}"))
    try:
        return np.from_dlpack(obj)
    except (TypeError, ValueError, RuntimeError, BufferError) as err:
        raise ArgumentValueError(f"from_dlpack: cannot read {type(obj).__name__}: {err}") from None


def _real_gpu_tensor(obj) -> bool:
    """Whether ``obj`` is a DLPack tensor in CUDA memory that a real cuda(0) can hold."""
    if not hasattr(obj, "__dlpack_device__"):
        return False
    return int(obj.__dlpack_device__()[0]) == kDLCUDA and gpu_backend() == "cuda"


def from_dlpack(obj) -> NDArray:
    """Wrap a DLPack tensor (torch, numpy, another NDArray) without copying when possible.

    The memory is shared when the tensor is C-contiguous; otherwise it is copied into a
    fresh aligned array. Borrowed memory keeps only the element alignment of its owner.
    A CUDA tensor becomes an array on a real ``cuda(0)`` over the same device memory.
    """
    if isinstance(obj, NDArray):
        return obj
    if _real_gpu_tensor(obj):
        from .cuda_dlpack import from_dlpack_capsule
        dev = require_gpu(Device(kDLCUDA, int(obj.__dlpack_device__()[1])), "from_dlpack")
        return from_dlpack_capsule(obj.__dlpack__(), dev)
    data = _numpy_from_dlpack(obj)
    if data.flags.c_contiguous and data.flags.writeable:
        return NDArray(data, as_device(None))
    return array(data)


def numpyasarray(np_data: np.ndarray) -> NDArray:
    """View a C-contiguous numpy array as an NDArray without copying (the memory is shared)."""
    if not isinstance(np_data, np.ndarray):
        raise ArgumentTypeError(f"numpyasarray: expected a numpy array, found {type(np_data).__name__}")
    if not np_data.flags.c_contiguous:
        raise ArgumentValueError("numpyasarray: the array is not C-contiguous; "
                                 "use np.ascontiguousarray(x) or nd.array(x) to copy it")
    return NDArray(np_data, as_device(None))
