"""Index ranges that depend on scalar arguments, checked before the machine code runs.

A kernel whose loop bound is a scalar parameter accesses as many elements as the
caller asks for: ``for i in range(n): A[i] = ...`` on a 16-element ``A`` writes past its
end when ``n=20``. Shape checks cannot see that, so code generation describes each
such access with an :class:`AccessCheck` (the index range as a formula of the scalar
arguments and symbolic dims) and the compiled function evaluates it with the actual
arguments::

    f(a16, 20)
    ArgumentValueError: f: parameter n=20: the kernel writes A at indices [0, 19],
    but A has 16 elements (shape (16,))

Formulas are JSON data, never code: an int, a parameter or dim name, or
``[op, operand, ...]`` with ``op`` one of ``+ - * // % min max`` (``//`` and ``%`` floor).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.errors import RuntimeError_
from .errors import ArgumentValueError

_OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b if b != 0 else None,
    "%": lambda a, b: a % b if b != 0 else None,
    "min": min,
    "max": max,
}


def evaluate(formula, values: dict):
    """The integer ``formula`` denotes under ``values`` ({name: int}); None when it
    divides by zero (the kernel would not get as far as that access)."""
    if isinstance(formula, bool) or not isinstance(formula, (int, str, list, tuple)):
        raise RuntimeError_(f"access check: {formula!r} is not a formula")
    if isinstance(formula, int):
        return formula
    if isinstance(formula, str):
        if formula not in values:
            raise RuntimeError_(f"access check: no argument or dim called {formula!r}")
        return int(values[formula])
    op, *operands = formula
    if op not in _OPS or len(operands) != 2:
        raise RuntimeError_(f"access check: unknown operation {formula!r}")
    a, b = (evaluate(x, values) for x in operands)
    return None if a is None or b is None else _OPS[op](a, b)


def _validate(formula) -> None:
    """Refuse anything but ints, names and known operations (metadata is read from files)."""
    if isinstance(formula, tuple):
        if len(formula) != 3 or formula[0] not in _OPS:
            raise RuntimeError_(f"access check: unknown operation {_listed(formula)!r}")
        for operand in formula[1:]:
            _validate(operand)
    elif isinstance(formula, bool) or not isinstance(formula, (int, str)):
        raise RuntimeError_(f"access check: {formula!r} is not a formula")


@dataclass(frozen=True)
class AccessCheck:
    """Buffer parameter ``buffer`` is accessed (``kind``: "reads" or "writes") at flat
    indices ``[low, high]`` whenever every formula of ``nonempty`` is positive (the
    extents of the loops around the access); ``uses`` names the scalars and dims the
    range depends on."""

    buffer: str
    kind: str
    low: object
    high: object
    uses: tuple
    nonempty: tuple = ()

    def __post_init__(self):
        if self.kind not in ("reads", "writes"):
            raise RuntimeError_(f"AccessCheck of {self.buffer!r}: kind must be 'reads' or "
                                f"'writes', found {self.kind!r}")
        object.__setattr__(self, "low", _frozen(self.low))
        object.__setattr__(self, "high", _frozen(self.high))
        object.__setattr__(self, "uses", tuple(str(u) for u in self.uses))
        object.__setattr__(self, "nonempty", tuple(_frozen(f) for f in self.nonempty))
        for formula in (self.low, self.high, *self.nonempty):
            _validate(formula)

    def to_json(self) -> dict:
        return {"buffer": self.buffer, "kind": self.kind, "low": _listed(self.low),
                "high": _listed(self.high), "uses": list(self.uses),
                "nonempty": [_listed(f) for f in self.nonempty]}

    @staticmethod
    def from_json(entry: dict) -> "AccessCheck":
        return AccessCheck(entry["buffer"], entry["kind"], entry["low"], entry["high"],
                           tuple(entry["uses"]), tuple(entry.get("nonempty", ())))


def _frozen(formula):
    if isinstance(formula, list):
        return tuple(_frozen(x) for x in formula)
    return formula


def _listed(formula):
    if isinstance(formula, tuple):
        return [_listed(x) for x in formula]
    return formula


def flat_extent(shape: tuple, values: dict) -> int:
    """Elements of a buffer of ``shape`` (ints and dim names) under ``values``."""
    count = 1
    for dim in shape:
        count *= int(values[dim]) if isinstance(dim, str) else dim
    return count


def check_accesses(func: str, checks, shapes: dict, values: dict) -> None:
    """Raise ArgumentValueError for the first access outside its buffer.

    ``shapes`` maps buffer parameter names to their spec shapes, ``values`` every scalar
    argument and symbolic dim to its value in this call.
    """
    for check in checks:
        if any((evaluate(f, values) or 0) <= 0 for f in check.nonempty):
            continue
        low, high = evaluate(check.low, values), evaluate(check.high, values)
        if low is None or high is None or low > high:
            continue
        extent = flat_extent(shapes[check.buffer], values)
        if low < 0 or high >= extent:
            raise ArgumentValueError(_message(func, check, low, high, extent,
                                              shapes[check.buffer], values))


def _message(func, check, low, high, extent, shape, values) -> str:
    given = ", ".join(f"{name}={values[name]}" for name in check.uses)
    which = "parameter" if len(check.uses) == 1 else "parameters"
    dims = ", ".join(str(d) for d in shape)
    shape_text = f"({dims},)" if len(shape) == 1 else f"({dims})"
    return (f"{func}: {which} {given}: the kernel {check.kind} {check.buffer} at indices "
            f"[{low}, {high}], but {check.buffer} has {extent} elements (shape {shape_text})")
