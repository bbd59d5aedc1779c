"""Run-time checks of values against struct info, and symbolic-dimension arithmetic.

A function's parameters (and each ``R.match_cast``) carry a *check spec* written by
:mod:`mlcbench.relax.vm_codegen`::

    ["tensor", dtype, ndim, [dim, ...] | None]   dim: ["bind", reg] | ["check", expr]
    ["tuple", [spec, ...]]   ["shape", ndim, [dim, ...] | None]   ["prim", dtype]   ["object"]

``make_checker`` turns one into ``check(value, env) -> value``: it raises an error that
names the function and the parameter, stores symbolic extents seen first
(``env[reg] = n``) and compares later ones. ``env`` is a dict while parameters are
checked and the register list for ``match_cast``: both are indexed by register.

>>> check = make_checker("main", "parameter x", ["tensor", "float32", 2, [["check", 1], ["bind", 5]]])
>>> env = {}
>>> check(np.zeros((1, 3), "float32"), env).shape, env
((1, 3), {5: 3})
"""
from __future__ import annotations

import operator

import numpy as np

from ..runtime import ndarray as nd
from ..runtime.allocator import fixed_shape_allocator
from ..runtime.errors import ArgumentTypeError, ArgumentValueError

_DIM_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
            "floordiv": operator.floordiv, "floormod": operator.mod, "min": min, "max": max}


def dim_function(code):
    """``f(env) -> int`` evaluating a dim code: an int, ``["var", reg]`` or ``[op, a, b]``."""
    if isinstance(code, (int, float)):
        return lambda env: code
    if code[0] == "var":
        reg = code[1]
        return lambda env: env[reg]
    op, lhs, rhs = _DIM_OPS[code[0]], dim_function(code[1]), dim_function(code[2])
    return lambda env: op(lhs(env), rhs(env))


def _shape_text(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def make_checker(function: str, what: str, spec):
    """``check(value, env) -> value`` for a check spec (see the module docstring)."""
    where = f"{function}: {what}"
    kind = spec[0]
    if kind == "tensor":
        return _tensor_checker(where, spec[1], spec[2], spec[3])
    if kind == "tuple":
        return _tuple_checker(where, [make_checker(function, f"{what}[{i}]", s)
                                      for i, s in enumerate(spec[1])])
    if kind == "shape":
        return _shape_checker(where, spec[1], spec[2])
    if kind == "prim":
        return _prim_checker(where, spec[1])
    return lambda value, env: value


def _numpy_converter(where: str, dtype: str, static):
    """``convert(value) -> NDArray`` for an argument that must be a tensor: NDArrays pass,
    numpy arrays of the right dtype are copied in (into a :func:`fixed_shape_allocator`'s
    array when the shape is static and matches: an ``nd.array`` copy of a (1, 64) input
    cost more than the digits MLP's kernels), anything else is refused."""
    np_dtype = np.dtype(dtype) if dtype else None
    allocate = fixed_shape_allocator(static, np_dtype) \
        if static is not None and np_dtype is not None else None

    def convert(value):
        if isinstance(value, nd.NDArray):
            return value
        if not isinstance(value, np.ndarray):
            raise ArgumentTypeError(f"{where}: expected a tensor (NDArray or numpy array), "
                                    f"found {type(value).__name__}")
        if np_dtype is not None and value.dtype != np_dtype:
            raise ArgumentValueError(f"{where}: expected dtype {dtype}, found "
                                     f"{value.dtype.name} (convert with .astype({dtype!r}))")
        if allocate is None or value.shape != static:
            return nd.array(value)
        copy = allocate()
        copy._array[...] = value
        return copy

    return convert


def _tensor_checker(where: str, dtype: str, ndim: int, dims):
    static = None
    if dims is not None and all(d[0] == "check" and isinstance(d[1], int) for d in dims):
        static = tuple(d[1] for d in dims)
    dim_checks = [(axis, d[0], d[1] if d[0] == "bind" else dim_function(d[1]))
                  for axis, d in enumerate(dims or ())]
    as_ndarray = _numpy_converter(where, dtype, static)

    def check(value, env):
        value = as_ndarray(value)
        if dtype and value.dtype != dtype:
            raise ArgumentValueError(f"{where}: expected dtype {dtype}, found {value.dtype}")
        shape = value.shape
        # The common case first: a static shape that matches needs no per-dimension checks.
        if shape == static:
            return value
        if static is not None or (ndim >= 0 and len(shape) != ndim):
            expected = _shape_text(static) if static is not None else f"{ndim} dimensions"
            raise ArgumentValueError(f"{where}: expected shape {expected}, found {shape}")
        for axis, kind, target in dim_checks:
            _check_extent(where, f"dim {axis}", kind, target, shape[axis], env)
        return value

    return check


def _check_extent(where: str, label: str, kind: str, target, extent: int, env) -> None:
    if kind == "bind":
        env[target] = extent
        return
    expected = target(env)
    if expected != extent:
        raise ArgumentValueError(f"{where}: {label}: expected {expected} (from the struct "
                                 f"info and earlier arguments), found {extent}")


def _tuple_checker(where: str, fields: list):
    def check(value, env):
        if not isinstance(value, (tuple, list)) or len(value) != len(fields):
            found = f"{len(value)} fields" if isinstance(value, (tuple, list)) \
                else type(value).__name__
            raise ArgumentValueError(f"{where}: expected a tuple of {len(fields)} fields, "
                                     f"found {found}")
        return tuple([c(v, env) for c, v in zip(fields, value)])

    return check


def _shape_checker(where: str, ndim: int, dims):
    dim_checks = [(axis, d[0], d[1] if d[0] == "bind" else dim_function(d[1]))
                  for axis, d in enumerate(dims or ())]

    def check(value, env):
        if not isinstance(value, (tuple, list)) or not all(
                isinstance(v, (int, np.integer)) for v in value):
            raise ArgumentTypeError(f"{where}: expected a shape (tuple of ints), found {value!r}")
        value = tuple(int(v) for v in value)
        if ndim >= 0 and len(value) != ndim:
            raise ArgumentValueError(f"{where}: expected a shape of {ndim} dimensions, "
                                     f"found {value}")
        for axis, kind, target in dim_checks:
            _check_extent(where, f"dim {axis}", kind, target, value[axis], env)
        return value

    return check


def _prim_checker(where: str, dtype: str):
    is_float = dtype.startswith("float")

    def check(value, env):
        # numpy scalars (np.float32(1)) are accepted as the Python numbers they hold.
        if isinstance(value, np.generic):
            value = value.item()
        # An int is a valid float scalar, a float is not a valid int one.
        ok = isinstance(value, (int, float)) if is_float else isinstance(value, (int, bool))
        if not ok:
            raise ArgumentTypeError(f"{where}: expected a {dtype} scalar, found "
                                    f"{type(value).__name__} {value!r}")
        return value

    return check


__all__ = ["dim_function", "make_checker"]
