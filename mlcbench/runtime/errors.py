"""Runtime errors that are also the matching Python built-in error.

A wrong argument to a compiled function is both an :class:`~mlcbench.ir.errors.RuntimeError_`
(so ``except MLCBenchError`` catches everything mlcbench raises) and a ``TypeError`` /
``ValueError`` (so code written for TVM or numpy that catches those keeps working).

>>> try:
...     raise ArgumentTypeError("add_one: parameter A: expected an NDArray, found str")
... except TypeError as err:
...     print(err)
add_one: parameter A: expected an NDArray, found str
"""
from __future__ import annotations

from ..ir.errors import RuntimeError_


class ArgumentTypeError(RuntimeError_, TypeError):
    """An argument of the wrong kind (a str where an array was expected, ...)."""


class ArgumentValueError(RuntimeError_, ValueError):
    """An argument of the right kind with a wrong value (shape, dtype, count, ...)."""
