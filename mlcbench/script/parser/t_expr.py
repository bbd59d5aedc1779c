"""The expression half of the ``T`` namespace: typed literals, buffers, vector nodes.

These work in plain Python too, which is how helpers outside TVMScript use them::

    T.int32(5)                      # IntImm("int32", 5)
    T.float32(0.5)                  # FloatImm("float32", 0.5)
    T.int64(i)                      # Cast("int64", i) (constants are folded)
    n = T.int32()                   # a fresh Var (named after the assignment in a script)
    A = T.Buffer((128,), "float32") # a tir.Buffer
"""
from __future__ import annotations

from ...ir.dtype import dtype as as_dtype
from ...ir.errors import ParseError
from ...tir import expr as E
from ...tir.buffer import Buffer as _TirBuffer
from .builder import current_builder, name_hint


class DTypeFunc:
    """``T.int32`` and friends: a type annotation, a literal maker and a cast.

    ``T.int32(5)`` is a constant, ``T.int32(x)`` a cast, ``T.int32()`` a new variable,
    and ``n: T.int32`` annotates a scalar parameter or a let binding.
    """

    def __init__(self, dtype: str):
        self.dtype = as_dtype(dtype)
        self.__name__ = str(dtype)

    def __call__(self, value=None, *, is_size_var: bool = False):
        if value is None:
            cls = E.SizeVar if is_size_var else E.Var
            return cls(name_hint("v"), self.dtype)
        if isinstance(value, str):
            if not self.dtype.is_float:
                raise ParseError(f"T.{self.dtype}({value!r}): a string is only accepted for "
                                 "float constants such as 'inf' or 'nan'")
            value = float(value)
        if isinstance(value, E.PrimExpr):
            return E.cast(self.dtype, value)
        return E.const(value, self.dtype)

    def __repr__(self):
        return f"T.{self.dtype}"


class HandleFunc(DTypeFunc):
    """``a: T.handle`` (a pointer parameter) and ``T.handle("float32", "global")``."""

    def __init__(self):
        super().__init__("handle")

    def __call__(self, dtype=None, storage_scope: str = "global", *, is_size_var=False):
        annotation = (as_dtype(dtype), storage_scope) if dtype is not None else None
        return E.Var(name_hint("handle"), "handle", type_annotation=annotation)


def var(dtype, name: str = "") -> E.Var:
    """``n = T.var("int32")``: a scalar variable (a symbolic shape, say)."""
    return E.Var(name or name_hint("v"), as_dtype(dtype))


def size_var(dtype="int32", name: str = "") -> E.SizeVar:
    return E.SizeVar(name or name_hint("n"), as_dtype(dtype))


def _shape_tuple(shape) -> tuple:
    if isinstance(shape, (list, tuple)):
        return tuple(shape)
    return (shape,)


def make_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None,
                scope="global", align=0, offset_factor=0, buffer_type="",
                axis_separators=None, name: str | None = None) -> _TirBuffer:
    """A Buffer with TVMScript's defaults, named after the variable it is assigned to."""
    del buffer_type  # "auto_broadcast" has no meaning here; accepted for compatibility
    return _TirBuffer(name or name_hint("buffer"), _shape_tuple(shape), as_dtype(dtype), data,
                      tuple(strides or ()), elem_offset, scope, tuple(axis_separators or ()),
                      max(int(align), 0), int(offset_factor) or 1)


class BufferType:
    """``T.Buffer``: declares a buffer (``T.Buffer((m, n), "float32")``) or, in a
    parameter annotation, the buffer a handle points to. The older spelling
    ``T.Buffer[(m, n), "float32"]`` is accepted too."""

    def __call__(self, shape, dtype="float32", data=None, strides=None, elem_offset=None,
                 scope="global", align=0, offset_factor=0, buffer_type="",
                 axis_separators=None) -> _TirBuffer:
        builder = current_builder()
        if builder is not None and data is not None and data in builder.allocations:
            allocated = builder.allocations[data]
            if same_layout(allocated, shape, dtype, scope, strides, elem_offset):
                return allocated
        buffer = make_buffer(shape, dtype, data, strides, elem_offset, scope, align,
                             offset_factor, buffer_type, axis_separators)
        if builder is not None:
            builder.declare_buffer(buffer)
        return buffer

    def __getitem__(self, key) -> _TirBuffer:
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
            return self(key[0], key[1])
        return self(key)

    def __repr__(self):
        return "T.Buffer"


def same_layout(buffer, shape, dtype, scope, strides, elem_offset) -> bool:
    """Is ``T.Buffer(shape, dtype, data=ptr)`` just the buffer ``T.allocate`` made?"""
    from ...ir.structural import structural_equal
    shape = tuple(E.convert(s) for s in _shape_tuple(shape))
    return (structural_equal(buffer.shape, shape, map_free_vars=False)
            and buffer.dtype == as_dtype(dtype) and buffer.scope == scope
            and not strides and elem_offset is None)


# -- expression constructors ------------------------------------------------------------

def Cast(dtype, value) -> E.PrimExpr:  # noqa: N802 -- TVMScript spelling
    """``T.Cast("float32", x)``: always a Cast node unless ``x`` already has that type."""
    value = E.convert(value)
    return value if value.dtype == as_dtype(dtype) else E.Cast(as_dtype(dtype), value)


def cast(value, dtype) -> E.PrimExpr:
    """``T.cast(x, "float32")`` (constants are folded)."""
    return E.cast(dtype, value)


def Select(condition, true_value, false_value) -> E.PrimExpr:  # noqa: N802
    true_value, false_value = E.convert(true_value), E.convert(false_value)
    if false_value.dtype != true_value.dtype:
        false_value = E.cast(true_value.dtype, false_value)
    return E.Select(E.convert(condition), true_value, false_value)


def Ramp(base, stride, lanes) -> E.Ramp:  # noqa: N802
    base = E.convert(base)
    return E.Ramp(base, E.convert(stride, base.dtype), int(lanes))


def Broadcast(value, lanes) -> E.Broadcast:  # noqa: N802
    return E.Broadcast(E.convert(value), int(lanes))


def Let(*args, where=None) -> E.Let:  # noqa: N802
    """``T.Let(body, where={x: value})`` as TVM prints it, or ``T.Let(x, value, body)``."""
    if where is not None:
        (body,) = args
        result = E.convert(body)
        for var_, value in reversed(list(where.items())):
            result = E.Let(var_, E.convert(value, var_.dtype), result)
        return result
    var_, value, body = args
    return E.Let(var_, E.convert(value, var_.dtype), E.convert(body))


def StringImm(value: str) -> E.StringImm:  # noqa: N802
    return E.StringImm(value)


def call_intrin(dtype, op: str, *args) -> E.Call:
    """``T.call_intrin("float32", "tir.exp", x)``: any intrinsic by name."""
    return E.Call(as_dtype(dtype), op if "." in op else f"tir.{op}", args)


def likely(cond) -> E.Call:
    return E.Call("bool", "tir.likely", (E.convert(cond),))


def _binary_node(cls):
    def build(a, b):
        return E.binary(cls, a, b)
    build.__name__ = cls.__name__
    build.__doc__ = f"``T.{cls.__name__}(a, b)``: a {cls.__name__} node (types promoted)."
    return build


Add, Sub, Mul, Div, Mod = (_binary_node(c) for c in (E.Add, E.Sub, E.Mul, E.Div, E.Mod))
FloorDiv, FloorMod = _binary_node(E.FloorDiv), _binary_node(E.FloorMod)
Min, Max = _binary_node(E.Min), _binary_node(E.Max)
EQ, NE, LT, LE, GT, GE = (_binary_node(c) for c in (E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE))
And, Or = _binary_node(E.And), _binary_node(E.Or)


def Not(a) -> E.Not:  # noqa: N802
    return E.Not(E.convert(a))
