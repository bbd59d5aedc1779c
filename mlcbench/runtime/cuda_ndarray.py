"""NDArrays in the memory of a real CUDA device (``cuda(0)`` when a device is present).

Made by ``mlcbench.nd.array(x, mlcbench.cuda(0))`` and ``nd.empty(..., cuda(0))``; the
bytes live in device memory (``cuMemAlloc``) and move by copy: ``numpy()`` and
``copyfrom`` go through ``cuMemcpyDtoH``/``HtoD``. ``handle``/``data_ptr`` is the device
address that kernels receive. The memory is freed when the array is collected.
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from . import cuda_driver
from .device import Device
from .errors import ArgumentValueError
from .ndarray import NDArray, address_of, supported_datatype


class CUDANDArray(NDArray):
    """An NDArray whose elements are in device memory (``_array`` is None)."""

    __slots__ = ("nbytes", "_np_dtype", "_finalizer")

    def numpy(self) -> np.ndarray:
        host = np.empty(self.shape, dtype=self._np_dtype)
        cuda_driver.copy_to_host(address_of(host), self.data_ptr, self.nbytes)
        return host

    asnumpy = numpy

    def host_view(self) -> np.ndarray:
        """What ``copyfrom`` of another array reads: a host copy here."""
        return self.numpy()

    def copyfrom(self, source) -> "CUDANDArray":
        """Copy ``source`` (numpy array, list, NDArray) into device memory; shapes and
        dtypes must match as for any NDArray."""
        if isinstance(source, NDArray):
            source = source.host_view()
        elif not isinstance(source, np.ndarray):
            source = np.asarray(source, dtype=self._np_dtype)
        if tuple(source.shape) != self.shape:
            raise ArgumentValueError(
                f"copyfrom: shape mismatch: this NDArray has shape {self.shape}, "
                f"the source has shape {tuple(source.shape)}")
        if source.dtype != self._np_dtype:
            raise ArgumentValueError(
                f"copyfrom: dtype mismatch: this NDArray is {self.dtype}, the source is "
                f"{source.dtype}; convert it first with .astype({str(self.dtype)!r})")
        source = np.ascontiguousarray(source)
        cuda_driver.copy_to_device(self.data_ptr, address_of(source), self.nbytes)
        return self

    @property
    def is_contiguous(self) -> bool:
        return True

    def __dlpack__(self, *args, **kwargs):
        from .cuda_dlpack import to_dlpack_capsule
        return to_dlpack_capsule(self)

    to_dlpack = __dlpack__

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device._dlpack()

    def __repr__(self) -> str:
        return f"<mlcbench.nd.NDArray shape={self.shape}, {self.device}>\n{self.numpy()!r}"

    def __str__(self) -> str:
        return str(self.numpy())


def borrowed_array(address: int, shape: tuple, np_dtype: np.dtype, device: Device):
    """An array over device memory at ``address`` that someone else frees."""
    array = object.__new__(CUDANDArray)
    array._array, array.shape, array.device = None, tuple(shape), device
    array.dtype, array._np_dtype = supported_datatype(np_dtype), np_dtype
    array.data_ptr, array.nbytes = address, math.prod(shape) * np_dtype.itemsize
    array._finalizer = None
    return array


def cuda_empty(shape: tuple, np_dtype: np.dtype, device: Device) -> CUDANDArray:
    """An uninitialized array of ``shape`` in the memory of device 0."""
    supported_datatype(np_dtype)
    owner = cuda_driver.driver()
    address = cuda_driver.mem_alloc(math.prod(shape) * np_dtype.itemsize)
    array = borrowed_array(address, shape, np_dtype, device)
    array._finalizer = weakref.finalize(array, cuda_driver.mem_free, address, owner)
    return array


def cuda_array(source: np.ndarray, device: Device) -> CUDANDArray:
    """A device copy of the host array ``source``."""
    result = cuda_empty(source.shape, source.dtype, device)
    return result.copyfrom(source)
