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
whole slab alive (``slab_bytes``, or 16 arrays up to 1 MiB, or one larger array):
keeping one array of every few hundred keeps more memory than the arrays themselves.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .device import cpu
from .ndarray import ALIGNMENT, NDArray, address_of, supported_datatype

SLAB_BYTES = 16384
"""Bytes per slab for small arrays (a (1, 10) float32 output comes 256 to a slab)."""

SLOTS_PER_SLAB = 16
"""Larger arrays come at least this many to a slab while the slab stays under
``MAX_SLAB_BYTES``: making a slab costs about 5 us, and a (1, 784) input copied into
slabs of 16 KiB (5 arrays each) paid 1 us of it on every call."""

MAX_SLAB_BYTES = 1 << 20


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
    # Each slot rounded up to the alignment, so every array starts 64-byte aligned.
    stride = max(-(-nbytes // ALIGNMENT) * ALIGNMENT, ALIGNMENT)
    per_slab = max(1, slab_bytes // stride, min(SLOTS_PER_SLAB, MAX_SLAB_BYTES // stride))
    datatype, device = supported_datatype(np_dtype), cpu()
    element_strides = _c_strides(shape, np_dtype.itemsize)
    counter, current = itertools.count(), [(-1, None, 0)]

    def new_slab(number: int) -> tuple:
        # One alignment's worth of slack to shift the first slot onto a 64-byte boundary.
        raw = np.empty(per_slab * stride + ALIGNMENT, dtype=np.uint8)
        start = address_of(raw)
        offset = (-start) % ALIGNMENT
        # np.ndarray over the buffer: one C call, where as_strided costs about 10 us
        slots = np.ndarray((per_slab, *shape), np_dtype, buffer=raw, offset=offset,
                           strides=(stride, *element_strides))
        slab = (number, slots, start + offset)
        current[0] = slab
        return slab

    def allocate() -> NDArray:
        number, slot = divmod(next(counter), per_slab)
        slab = current[0]
        # A slot number past the current slab starts a new one: a slab serves only its own numbers.
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
