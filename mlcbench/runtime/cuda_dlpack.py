"""DLPack for arrays in a real GPU's memory: out (``__dlpack__`` of a CUDANDArray, read
by ``torch.from_dlpack`` or CuPy without a copy) and in (``mlcbench.nd.from_dlpack`` of
a CUDA tensor: an NDArray over the same device memory).

numpy cannot hold device memory, so the capsule is built here with ctypes, following
the DLPack C ABI (``DLManagedTensor`` in a ``"dltensor"`` PyCapsule, renamed
``"used_dltensor"`` by whoever consumes it, who then calls its deleter).
"""
from __future__ import annotations

import ctypes
import sys
import weakref

import numpy as np

from ..ir.dtype import dtype as as_dtype
from .device import Device, kDLCUDA
from .errors import ArgumentValueError


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _DELETER)]

_CODES = {"int": 0, "uint": 1, "float": 2, "bool": 6}
_KINDS = {code: kind for kind, code in _CODES.items()}
_alive: dict = {}     # address of a DLManagedTensor we made -> (array, it, shape, capsule)

# Private function objects, so that the argument types set here are nobody else's.
_api = ctypes.PyDLL(None)
_new_capsule = _api.PyCapsule_New
_new_capsule.restype, _new_capsule.argtypes = ctypes.py_object, [
    ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_is_valid = _api.PyCapsule_IsValid
_is_valid.restype, _is_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_get_pointer = _api.PyCapsule_GetPointer
_get_pointer.restype, _get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                ctypes.c_char_p]
_set_name = _api.PyCapsule_SetName
_set_name.restype, _set_name.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]


@_DELETER
def _release(managed) -> None:
    _alive.pop(ctypes.addressof(managed.contents), None)


def _prune() -> None:
    """Forget the tensors of capsules that nobody consumed and nobody holds.

    The capsules have no destructor: one written in Python would run while a failed
    consumer's exception is pending (numpy refusing device memory) and lose it.
    Instead each export forgets the abandoned ones of earlier exports."""
    for address, (_, _, _, capsule) in list(_alive.items()):
        # held by the entry, by this loop and by getrefcount's argument: no one else
        if sys.getrefcount(capsule) <= 3 and _is_valid(capsule, b"dltensor"):
            del _alive[address]
        del capsule


def to_dlpack_capsule(array):
    """A ``"dltensor"`` capsule over ``array``'s device memory (queued work finished)."""
    from .cuda_driver import context
    context().synchronize()
    dtype = as_dtype(array.dtype)
    kind = "bool" if dtype.is_bool else "float" if dtype.is_float else (
        "uint" if str(dtype).startswith("uint") else "int")
    shape = (ctypes.c_int64 * max(len(array.shape), 1))(*array.shape)
    managed = DLManagedTensor()
    managed.dl_tensor = DLTensor(array.data_ptr, DLDevice(kDLCUDA, array.device.device_id),
                                 len(array.shape), DLDataType(_CODES[kind], dtype.bits, 1),
                                 shape, None, 0)
    managed.deleter = _release
    _prune()
    capsule = _new_capsule(ctypes.addressof(managed), b"dltensor", None)
    _alive[ctypes.addressof(managed)] = (array, managed, shape, capsule)
    return capsule


def from_dlpack_capsule(capsule, device: Device):
    """A CUDANDArray over the device memory of a ``"dltensor"`` capsule (no copy); the
    producer's deleter runs when the array is collected."""
    from .cuda_ndarray import borrowed_array
    address = _get_pointer(capsule, b"dltensor")
    managed = DLManagedTensor.from_address(address)
    tensor = managed.dl_tensor
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    code = _KINDS.get(tensor.dtype.code)
    if code is None or tensor.dtype.lanes != 1:
        raise ArgumentValueError(f"from_dlpack: DLPack dtype (code {tensor.dtype.code}, "
                                 f"{tensor.dtype.bits} bits, {tensor.dtype.lanes} lanes) "
                                 "has no NDArray dtype")
    np_dtype = np.dtype("bool" if code == "bool" else f"{code}{tensor.dtype.bits}")
    if tensor.strides and [tensor.strides[i] for i in range(tensor.ndim)] != _compact(shape):
        raise ArgumentValueError(f"from_dlpack: the CUDA tensor of shape {shape} is not "
                                 "C-contiguous; make it so first (.contiguous())")
    _set_name(capsule, b"used_dltensor")
    deleter = managed.deleter
    array = borrowed_array((tensor.data or 0) + tensor.byte_offset, shape, np_dtype, device)
    array._finalizer = weakref.finalize(array, _call_deleter, deleter, address)
    return array


def _compact(shape: tuple) -> list:
    """The strides, in elements, of a C-contiguous array of ``shape``."""
    strides, step = [], 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= extent
    return strides


def _call_deleter(deleter, address: int) -> None:
    if deleter:
        deleter(ctypes.cast(address, ctypes.POINTER(DLManagedTensor)))
