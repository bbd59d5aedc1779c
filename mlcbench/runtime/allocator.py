"""Fresh NDArrays of one shape and dtype, cheaply: what the VM allocates on every call.

A model's outputs (and the copies of numpy arguments) are fresh arrays on every call, so
each call pays for the allocation. Through :func:`~mlcbench.runtime.ndarray.empty` a
(1, 10) float32 array costs several microseconds, most of it asking numpy where the
memory is; the digits MLP's two kernels at batch 1 take about 2 us each. An allocator
made by :func:`fixed_shape_allocator` cuts its arrays from *slabs*: one numpy
allocation and one address lookup per slab, then each array is the next slot, whose
address is known by arithmetic.

>>> allocate = fixed_shape_allocator((2, 3), "float32")
>>> a, b = allocate(), allocate()
>>> a.shape, str(a.dtype), a.data_ptr % 64, b.data_ptr - a.data_ptr
((2, 3), 'float32', 0, 64)

Every slot is handed out once and starts on a 64-byte boundary. An array keeps its
whole slab alive (at most ``slab_bytes``, or one array when arrays are larger): keeping
one array of every few hundred keeps more memory than the arrays themselves.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .device import cpu
from .ndarray import ALIGNMENT, NDArray, address_of, supported_datatype

SLAB_BYTES = 16384
"""Bytes per slab: small outputs come 256 to a slab; larger ones fewer, at least one."""


def fixed_shape_allocator(shape: tuple, dtype, slab_bytes: int = SLAB_BYTES):
    """``allocate() -> NDArray``: an uninitialized, 64-byte aligned array of ``shape``
    and ``dtype`` on the CPU, a different one on every call.

    Safe to call from several threads: slot numbers come from one counter (atomic under
    the GIL), and a slab serves only the slot numbers that belong to it, so two calls
    never share a slot, even when both start a new slab at the same moment.
    """
    np_dtype = np.dtype(dtype)
    shape = tuple(int(d) for d in shape)
    nbytes = math.prod(shape) * np_dtype.itemsize
    stride = max(-(-nbytes // ALIGNMENT) * ALIGNMENT, ALIGNMENT)
    per_slab = max(1, slab_bytes // stride)
    datatype, device = supported_datatype(np_dtype), cpu()
    element_strides = _c_strides(shape, np_dtype.itemsize)
    counter, current = itertools.count(), [(-1, None, 0)]

    def new_slab(number: int) -> tuple:
        raw = np.empty(per_slab * stride + ALIGNMENT, dtype=np.uint8)
        start = address_of(raw)
        offset = (-start) % ALIGNMENT
        typed = raw[offset:offset + per_slab * stride].view(np_dtype)
        slots = as_strided(typed, shape=(per_slab, *shape), strides=(stride, *element_strides))
        slab = (number, slots, start + offset)
        current[0] = slab
        return slab

    def allocate() -> NDArray:
        number, slot = divmod(next(counter), per_slab)
        slab = current[0]
        if slab[0] != number:
            slab = new_slab(number)
        # [slot, ...]: a view even for 0-d arrays, where [slot] gives a numpy scalar
        return NDArray._trusted(slab[1][slot, ...], datatype, device, slab[2] + slot * stride)

    return allocate


def _c_strides(shape: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


__all__ = ["SLAB_BYTES", "fixed_shape_allocator"]
