"""Tensor intrinsics for ``Schedule.tensorize`` (see :mod:`.registry`, :mod:`.cpu`)."""
from .registry import TensorIntrin
