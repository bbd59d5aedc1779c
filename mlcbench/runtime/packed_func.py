"""PackedFunc: a compiled function you call from Python with checked arguments.

Compiled code trusts its arguments completely, so every mistake a person can make is
caught here, before the machine code runs, and reported with the function and parameter
names instead of crashing the process:

>>> f(a_nd, b_nd)                                           # doctest: +SKIP
>>> f(a_nd)                                                 # doctest: +SKIP
ArgumentValueError: add_one: expected 2 arguments (A, B), found 1

Buffers accept an :class:`~mlcbench.runtime.ndarray.NDArray`, or a numpy array that is
C-contiguous and writeable (passed without copying). Scalars accept Python
``int``/``float``/``bool`` and numpy scalars. A symbolic dimension (a name in a
``ParamSpec.shape``) takes its value from the first buffer that has it, and every later
buffer must agree. Where a loop bound or an index comes from a scalar argument, the
index range it gives must lie inside its buffer (:mod:`.access_checks`).
"""
from __future__ import annotations

import ctypes

import numpy as np

from ..ir.errors import RuntimeError_
from .access_checks import check_accesses
from .errors import ArgumentTypeError, ArgumentValueError
from .metadata import KernelSpec, ParamSpec
from .ndarray import NDArray, address_of

_SCALAR_CTYPES = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16,
    "int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float, "float64": ctypes.c_double,
}


def _fail(exc_type, func: str, param: str, message: str):
    raise exc_type(f"{func}: parameter {param}: {message}")


def _bind_dim(func: str, param: str, axis, name: str, value: int, dims: dict) -> None:
    """Bind symbolic dim ``name`` to ``value`` or check it against its earlier binding."""
    bound = dims.get(name)
    if bound is None:
        dims[name] = (value, param)
    elif bound[0] != value:
        where = "its value" if axis is None else f"dim {axis}"
        _fail(ArgumentValueError, func, param,
              f"{where} is {name}={bound[0]} from parameter {bound[1]}, found {value}")


_NUMPY_DTYPE_NAMES: dict = {}


def _numpy_dtype_name(dtype: np.dtype) -> str:
    """``dtype.name``, memoized: numpy computes it in Python (about 6 us here, more than
    a small kernel's run)."""
    name = _NUMPY_DTYPE_NAMES.get(dtype)
    if name is None:
        name = _NUMPY_DTYPE_NAMES[dtype] = dtype.name
    return name


def _buffer_facts(func: str, param: ParamSpec, arg):
    """(shape, dtype, address) of an NDArray or an acceptable numpy array."""
    if isinstance(arg, NDArray):
        if arg._array is None:       # device memory: the CPU would read a device address
            _fail(ArgumentValueError, func, param.name,
                  f"the NDArray is in the memory of {arg.device}, but {func} runs on the "
                  "CPU; copy it with x.copyto(mlcbench.cpu())")
        return arg.shape, arg.dtype, arg.data_ptr
    if isinstance(arg, np.ndarray):
        if not arg.flags.c_contiguous:
            _fail(ArgumentValueError, func, param.name,
                  "the numpy array is not C-contiguous; pass np.ascontiguousarray(x) "
                  "or mlcbench.nd.array(x)")
        if not arg.flags.writeable:
            _fail(ArgumentValueError, func, param.name,
                  "the numpy array is read-only; pass a writeable copy (np.array(x))")
        return arg.shape, _numpy_dtype_name(arg.dtype), address_of(arg)
    _fail(ArgumentTypeError, func, param.name,
          f"expected an NDArray (or a C-contiguous numpy array) of dtype {param.dtype}, "
          f"found {type(arg).__name__}")


def _shape_text(shape: tuple) -> str:
    """``("n", 4)`` -> ``(n, 4)``: symbolic dims shown by name, not quoted."""
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def _buffer_checker(func: str, param: ParamSpec):
    """A function (arg, dims) -> address that validates one buffer argument."""
    want_shape, want_dtype = param.shape, param.dtype
    is_static = all(isinstance(d, int) for d in want_shape)

    def check(arg, dims):
        shape, dtype, address = _buffer_facts(func, param, arg)
        if dtype != want_dtype:
            _fail(ArgumentValueError, func, param.name,
                  f"expected dtype {want_dtype}, found {dtype}")
        # The usual case first: an exact match needs no per-dimension checks.
        if shape == want_shape:
            return address
        if len(shape) != len(want_shape) or is_static:
            _fail(ArgumentValueError, func, param.name,
                  f"expected shape {_shape_text(want_shape)}, found {tuple(shape)}")
        for axis, (want, got) in enumerate(zip(want_shape, shape)):
            if isinstance(want, str):
                _bind_dim(func, param.name, axis, want, int(got), dims)
            elif want != got:
                _fail(ArgumentValueError, func, param.name,
                      f"dim {axis}: expected {want}, found {got} (shape {tuple(shape)})")
        return address

    return check


def _scalar_value(func: str, param: ParamSpec, arg, bounds):
    """Python value of a scalar argument, with its kind and range checked."""
    if isinstance(arg, np.generic):
        arg = arg.item()
    # bool is a subclass of int: test it first, or True would pass as an integer.
    if isinstance(arg, bool) or param.dtype == "bool":
        if not isinstance(arg, (bool, int)):
            _fail(ArgumentTypeError, func, param.name, f"expected a bool, found {type(arg).__name__}")
        # A bool given for an integer parameter passes as 0 or 1.
        return int(arg) if param.dtype != "bool" else bool(arg)
    if param.dtype.startswith("float"):
        # An int is a valid float argument; numpy floats were unwrapped above.
        if not isinstance(arg, (int, float)):
            _fail(ArgumentTypeError, func, param.name,
                  f"expected a {param.dtype} scalar, found {type(arg).__name__}")
        return float(arg)
    if not isinstance(arg, int):
        _fail(ArgumentTypeError, func, param.name,
              f"expected an {param.dtype} scalar (int), found {type(arg).__name__} {arg!r}")
    if not bounds[0] <= arg <= bounds[1]:
        _fail(ArgumentValueError, func, param.name,
              f"{arg} does not fit in {param.dtype} [{bounds[0]}, {bounds[1]}]")
    return arg


def _scalar_checker(func: str, param: ParamSpec, dim_names: set):
    """A function (arg, dims) -> value; a scalar named like a symbolic dim must match it."""
    binds_dim = param.name in dim_names
    is_integer = param.dtype.startswith(("int", "uint"))
    bounds = (int(np.iinfo(param.dtype).min), int(np.iinfo(param.dtype).max)) if is_integer else None

    def check(arg, dims):
        value = _scalar_value(func, param, arg, bounds)
        if binds_dim:
            _bind_dim(func, param.name, None, param.name, int(value), dims)
        return value

    return check


def _argtypes(spec: KernelSpec) -> list:
    types = []
    for param in spec.params:
        if param.kind == "buffer":
            types.append(ctypes.c_void_p)
        elif param.dtype in _SCALAR_CTYPES:
            types.append(_SCALAR_CTYPES[param.dtype])
        else:
            raise RuntimeError_(f"{spec.name}: parameter {param.name}: scalar dtype "
                                f"{param.dtype} cannot be passed from Python")
    # Symbolic dimensions follow the parameters as int64, the kernel ABI's order.
    return types + [ctypes.c_int64] * len(spec.shape_vars)


class PackedFunc:
    """A callable compiled function: ``f(*args)`` checks the arguments, then runs the code.

    ``keepalive`` is whatever owns the machine code (a JIT engine, a loaded library); it
    is kept alive as long as this object lives.
    """

    __slots__ = ("spec", "_cfunc", "_keepalive", "_checkers", "_shape_vars", "_access_checks",
                 "_buffer_shapes", "_scalar_positions", "__weakref__")

    def __init__(self, spec: KernelSpec, address: int, keepalive=None):
        if not isinstance(address, int) or address == 0:
            raise RuntimeError_(f"{spec.name}: invalid function address {address!r}")
        self.spec = spec
        self._keepalive = keepalive
        # Typed once here: ctypes converts each argument by these types on every call.
        self._cfunc = ctypes.CFUNCTYPE(ctypes.c_int32, *_argtypes(spec))(address)
        dim_names = {d for p in spec.params for d in p.shape if isinstance(d, str)}
        bindable = dim_names | {p.name for p in spec.params if p.kind == "scalar"}
        unbound = [v for v in spec.shape_vars if v not in bindable]
        # A kernel whose dimension no argument can supply would read garbage: refuse it now.
        if unbound:
            raise RuntimeError_(f"{spec.name}: symbolic dims {unbound} appear in no "
                                "parameter, so no call could supply them")
        dim_names |= set(spec.shape_vars)
        self._checkers = tuple(
            _buffer_checker(spec.name, p) if p.kind == "buffer"
            else _scalar_checker(spec.name, p, dim_names) for p in spec.params)
        self._shape_vars = spec.shape_vars
        self._access_checks = spec.access_checks
        self._buffer_shapes = {p.name: p.shape for p in spec.params if p.kind == "buffer"}
        self._scalar_positions = tuple((k, p.name) for k, p in enumerate(spec.params)
                                       if p.kind == "scalar")

    @property
    def name(self) -> str:
        return self.spec.name

    def convert_args(self, args) -> tuple:
        """Check ``args`` and return what the C function receives (addresses, values, dims)."""
        if len(args) != len(self._checkers):
            names = ", ".join(p.name for p in self.spec.params)
            raise ArgumentValueError(f"{self.spec.name}: expected {len(self._checkers)} "
                                     f"arguments ({names}), found {len(args)}")
        dims: dict = {}
        converted = [check(arg, dims) for check, arg in zip(self._checkers, args)]
        if self._access_checks:
            self._check_access_ranges(converted, dims)
        converted.extend(dims[name][0] for name in self._shape_vars)
        return tuple(converted)

    def _check_access_ranges(self, converted: list, dims: dict) -> None:
        """Index ranges that scalar arguments decide must lie inside their buffers."""
        values = {name: value for name, (value, _) in dims.items()}
        values.update((name, converted[k]) for k, name in self._scalar_positions)
        check_accesses(self.spec.name, self._access_checks, self._buffer_shapes, values)

    def call_converted(self, converted: tuple) -> None:
        """Run the machine code on arguments already passed through :meth:`convert_args`."""
        status = self._cfunc(*converted)
        if status != 0:
            raise RuntimeError_(f"{self.spec.name}: compiled function failed with status {status}")

    def __call__(self, *args) -> None:
        self.call_converted(self.convert_args(args))

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.dtype}{list(p.shape) if p.kind == 'buffer' else ''}"
                           for p in self.spec.params)
        return f"PackedFunc({self.spec.name}({params}))"
