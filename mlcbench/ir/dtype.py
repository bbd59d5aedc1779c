"""Data types as TVM spells them: ``"float32"``, ``"int64"``, ``"bool"``, ``"float32x16"``.

A :class:`DataType` *is* a ``str`` (so ``dtype == "float32"`` just works and it prints
as itself) with the parsed parts attached: ``code`` ("int", "uint", "float", "bool",
"handle"), ``bits`` and ``lanes`` (vector width, 1 for scalars).
"""
from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from .errors import InvalidTypeError, InvalidValueError

_PATTERN = re.compile(r"^(int|uint|float|bfloat|bool|handle)(\d*)(?:x(\d+))?$")
_SUPPORTED = {
    ("bool", 1), ("int", 8), ("int", 16), ("int", 32), ("int", 64), ("uint", 8),
    ("uint", 16), ("uint", 32), ("uint", 64), ("float", 16), ("float", 32), ("float", 64),
    ("handle", 64),
}


class DataType(str):
    """A scalar or vector element type. Construct with :func:`dtype`."""

    code: str
    bits: int
    lanes: int

    def __new__(cls, text: str):
        match = _PATTERN.match(text)
        if not match:
            raise InvalidValueError(
                f"unknown dtype {text!r}: expected e.g. 'float32', 'int64', 'bool'")
        code, bits, lanes = match.group(1), match.group(2), match.group(3)
        nbits = {"bool": 1, "handle": 64}.get(code) if not bits else int(bits)
        if nbits is None or (code, nbits) not in _SUPPORTED:
            raise InvalidValueError(
                f"unsupported dtype {text!r}: supported are bool, int8/16/32/64, "
                "uint8/16/32/64, float16/32/64")
        self = super().__new__(cls, text)
        self.code, self.bits, self.lanes = code, nbits, int(lanes) if lanes else 1
        return self

    # -- classification ---------------------------------------------------------------
    @property
    def is_float(self) -> bool:
        return self.code == "float"

    @property
    def is_int(self) -> bool:
        return self.code == "int"

    @property
    def is_uint(self) -> bool:
        return self.code == "uint"

    @property
    def is_bool(self) -> bool:
        return self.code == "bool"

    @property
    def is_integer(self) -> bool:
        """Signed or unsigned integer (not bool)."""
        return self.code in ("int", "uint")

    @property
    def is_handle(self) -> bool:
        return self.code == "handle"

    @property
    def is_vector(self) -> bool:
        return self.lanes > 1

    @property
    def element(self) -> "DataType":
        """The scalar type of one lane."""
        return self if self.lanes == 1 else dtype(self.split("x")[0])

    @property
    def itemsize(self) -> int:
        """Bytes per scalar element as stored in memory (bool takes one byte)."""
        return max(self.bits, 8) // 8

    def with_lanes(self, lanes: int) -> "DataType":
        base = self.element
        return base if lanes == 1 else dtype(f"{base}x{lanes}")

    def to_numpy(self) -> np.dtype:
        if self.is_handle or self.lanes != 1:
            raise InvalidValueError(f"{self} has no numpy equivalent")
        return np.dtype("bool" if self.is_bool else str(self))

    def min_value(self):
        if self.is_float:
            return -np.inf
        if self.is_bool:
            return False
        return int(np.iinfo(self.to_numpy()).min)

    def max_value(self):
        if self.is_float:
            return np.inf
        if self.is_bool:
            return True
        return int(np.iinfo(self.to_numpy()).max)

    def __reduce__(self):
        return (dtype, (str(self),))


@lru_cache(maxsize=None)
def _cached(text: str) -> DataType:
    return DataType(text)


def dtype(value) -> DataType:
    """Normalize a dtype given as str, numpy dtype or DataType."""
    if isinstance(value, DataType):
        return value
    if isinstance(value, str):
        return _cached(value)
    if value is bool:
        return _cached("bool")
    if value is int:
        return _cached("int32")
    if value is float:
        return _cached("float32")
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        raise InvalidTypeError(f"expected a dtype (str or numpy dtype), found {value!r}") from None
    return _cached("bool" if np_dtype == np.bool_ else np_dtype.name)


bool_ = dtype("bool")
int32 = dtype("int32")
int64 = dtype("int64")
float32 = dtype("float32")
handle = dtype("handle")
