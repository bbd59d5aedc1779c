"""Workload arguments as TVM writes them: a tensor is ``("TENSOR", shape, dtype)``.

A task's workload is its template name followed by these arguments, so the records of
``dense_pack.x86`` on a (32, 64) x (128, 64) product read as in TVM::

    ('dense_pack.x86', ('TENSOR', (32, 64), 'float32'), ('TENSOR', (128, 64), 'float32'),
     None, 'float32')
"""
from __future__ import annotations

from ...ir.errors import TuningError
from ...te import placeholder


def tensor_arg(shape, dtype: str) -> tuple:
    """``("TENSOR", shape, dtype)`` with ``shape`` a tuple of ints."""
    return ("TENSOR", tuple(int(s) for s in shape), str(dtype))


def placeholder_of(arg, name: str, where: str):
    """The te placeholder a ``("TENSOR", shape, dtype)`` argument stands for."""
    if not (isinstance(arg, tuple) and len(arg) == 3 and arg[0] == "TENSOR"):
        raise TuningError(f"{where}: argument {name!r} must be ('TENSOR', shape, dtype), "
                          f"found {arg!r}")
    return placeholder(tuple(arg[1]), arg[2], name=name)
