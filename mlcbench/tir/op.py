"""Intrinsics and helpers used as ``T.exp``, ``T.max``, ``tir.if_then_else`` ...

Math intrinsics are ``Call`` nodes named ``tir.<fn>``; codegen maps them to LLVM
intrinsics or libm. ``min``/``max`` build ``Min``/``Max`` nodes.
"""
from __future__ import annotations

from ..ir.errors import IRError
from .expr import (Call, IntImm, Max, Min, PrimExpr, Select, StringImm, binary, cast, const,
                   convert)

MATH_INTRINSICS = ("exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "tanh", "sigmoid",
                   "erf", "fabs", "floor", "ceil", "round", "trunc", "sin", "cos", "tan",
                   "pow", "fma", "nearbyint", "abs", "isnan", "popcount")
BINARY_INTRINSICS = ("pow",)


def _float_arg(x) -> PrimExpr:
    x = convert(x)
    return x


def _unary(name):
    def fn(x, span=None):
        x = _float_arg(x)
        return Call(x.dtype if name != "isnan" else "bool", f"tir.{name}", (x,))
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of a scalar expression (an LLVM intrinsic or libm call)."
    return fn


exp = _unary("exp")
exp2 = _unary("exp2")
log = _unary("log")
log2 = _unary("log2")
log10 = _unary("log10")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
erf = _unary("erf")
floor = _unary("floor")
ceil = _unary("ceil")
round = _unary("round")
trunc = _unary("trunc")
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
nearbyint = _unary("nearbyint")
isnan = _unary("isnan")


def fabs(x, span=None):
    return abs(x)


def abs(x, span=None):  # noqa: A001 -- TVMScript spells it T.abs
    x = convert(x)
    return Call(x.dtype, "tir.fabs" if x.dtype.is_float else "tir.abs", (x,))


def pow(x, y, span=None):  # noqa: A001
    x, y = convert(x), convert(y, convert(x).dtype)
    return Call(x.dtype, "tir.pow", (x, cast(x.dtype, y)))


def fma(a, b, c):
    a = convert(a)
    return Call(a.dtype, "tir.fma", (a, convert(b, a.dtype), convert(c, a.dtype)))


def max(a, b, span=None):  # noqa: A001
    """The larger of ``a`` and ``b`` (a ``Max`` node).

    Floats follow numpy's ``np.maximum``: a NaN in either operand gives NaN. +0.0 counts
    as larger than -0.0 (IEEE 754-2019 ``maximum``; numpy returns either zero, by operand
    order). So ``T.max(x, T.float32(0))`` (ReLU) keeps a NaN, and a max
    reduction (max-pool, softmax's row max) over data holding a NaN gives NaN. For the
    larger non-NaN operand, test with ``T.isnan`` first. TVM lowers max to
    ``a > b ? a : b`` instead, which gives 0 for ``max(NaN, 0)``.

    >>> T.max(T.float32(float("nan")), T.float32(0))
    T.float32("nan")
    """
    return binary(Max, a, b)


def min(a, b, span=None):  # noqa: A001
    """The smaller of ``a`` and ``b`` (a ``Min`` node); floats follow ``np.minimum``:
    NaN in either operand gives NaN, and -0.0 counts as smaller than +0.0 (see
    :func:`max`)."""
    return binary(Min, a, b)


def if_then_else(cond, t, f, span=None):
    """``cond ? t : f`` where only the taken side is evaluated (unlike Select)."""
    t, f = convert(t), convert(f)
    if t.dtype != f.dtype:
        f = cast(t.dtype, f)
    return Call(t.dtype, "tir.if_then_else", (convert(cond), t, f))


def Select_(cond, t, f):
    t, f = convert(t), convert(f)
    return Select(convert(cond), t, cast(t.dtype, f) if f.dtype != t.dtype else f)


def reinterpret(dtype, value, span=None):
    """``value``'s bits read as ``dtype`` (as wide, lane for lane): a bit cast, not a
    conversion. ``T.reinterpret("int32", T.float32(1))`` is 0x3F800000.

    >>> T.reinterpret("float32", T.shift_left(T.int32(130), 23))   # 2.0 ** 3
    """
    from ..ir.dtype import dtype as as_dtype
    from ..ir.errors import IRError
    value = convert(value)
    target = as_dtype(dtype).with_lanes(value.dtype.lanes)
    if target.element.bits != value.dtype.element.bits:
        raise IRError(f"reinterpret: {value.dtype} has {value.dtype.element.bits}-bit lanes, "
                      f"{dtype} has {target.element.bits}: the bits are kept, so the widths "
                      "must match")
    return Call(target, "tir.reinterpret", (value,))


def shift_left(a, b, span=None):
    """``a << b`` on integers."""
    a = convert(a)
    return Call(a.dtype, "tir.shift_left", (a, convert(b, a.dtype)))


def shift_right(a, b, span=None):
    """``a >> b`` on integers (arithmetic for signed, logical for unsigned)."""
    a = convert(a)
    return Call(a.dtype, "tir.shift_right", (a, convert(b, a.dtype)))

def call_extern(*args, dtype=None, span=None):
    """Call a C function by name: ``T.call_extern("float32", "expf", x)``, or in the
    older spelling of course chapter 8, ``T.call_extern("tmm16", ptr, ..., dtype="int32")``."""
    from ..ir.errors import IRError
    if dtype is None:
        if len(args) < 2:
            raise IRError("call_extern: expected (dtype, function name, *args) or "
                          f"(function name, *args, dtype=...), found {len(args)} arguments")
        dtype, args = args[0], args[1:]
    if not args or not isinstance(args[0], str):
        raise IRError(f"call_extern: expected the function name (a str), found "
                      f"{args[0] if args else 'nothing'!r}")
    return Call(dtype, "tir.call_extern", tuple(args))


def tvm_storage_sync(scope) -> Call:
    """A barrier: every thread of the block waits here until all arrive, and writes to
    memory of ``scope`` (``"shared"``) made before it are visible to all threads after
    it. ``T.tvm_storage_sync("shared")`` is CUDA's ``__syncthreads()``."""
    from ..ir.errors import IRError
    text = scope.value if isinstance(scope, StringImm) else scope
    if text not in ("shared", "global", "warp"):
        raise IRError("tvm_storage_sync: expected the scope \"shared\", \"global\" or "
                      f"\"warp\", found {scope!r}")
    return Call("int32", "tir.tvm_storage_sync", (StringImm(text),))


def type_annotation(dtype) -> Call:
    """A value that only carries ``dtype``: the first argument of ``tvm_access_ptr``."""
    return Call(dtype, "tir.type_annotation", ())


def tvm_access_ptr(ptype, data, offset, extent, rw_mask) -> Call:
    """The address of element ``offset`` of the memory ``data`` (a buffer's pointer
    variable), whose elements have ``ptype``'s dtype; ``extent`` elements are accessed,
    for reading (``rw_mask`` 1), writing (2) or both (3). ``Buffer.access_ptr`` makes it."""
    return Call("handle", "tir.tvm_access_ptr", (ptype, data, offset, extent, rw_mask))


def prefetch(address, rw=0, locality=3, cache_type=1) -> Call:
    """A hint to load the cache line holding ``address`` (a ``tvm_access_ptr``): for
    reading (``rw`` 0) or writing (1), ``locality`` 0 (none) to 3 (keep in every level),
    ``cache_type`` 1 for data. It never faults; as LLVM's ``llvm.prefetch``."""
    args = []
    for name, value, top in (("rw", rw, 1), ("locality", locality, 3),
                             ("cache_type", cache_type, 1)):
        value = value.value if isinstance(value, IntImm) else value
        if not isinstance(value, int) or not 0 <= value <= top:
            raise IRError(f"prefetch: {name} is an integer constant from 0 to {top}, "
                          f"found {value!r}")
        args.append(IntImm("int32", value))
    return Call("handle", "tir.prefetch", (address, *args))


def max_value(dtype):
    from ..ir.dtype import dtype as as_dtype
    return const(as_dtype(dtype).max_value(), dtype)


def min_value(dtype):
    from ..ir.dtype import dtype as as_dtype
    return const(as_dtype(dtype).min_value(), dtype)


def floordiv(a, b):
    from .expr import FloorDiv
    return binary(FloorDiv, a, b)


def floormod(a, b):
    from .expr import FloorMod
    return binary(FloorMod, a, b)


def truncdiv(a, b):
    from .expr import Div
    return binary(Div, a, b)


def truncmod(a, b):
    from .expr import Mod
    return binary(Mod, a, b)


def all(*conds):  # noqa: A001
    from .expr import And
    result = convert(conds[0])
    for c in conds[1:]:
        result = binary(And, result, c)
    return result


def any(*conds):  # noqa: A001
    from .expr import Or
    result = convert(conds[0])
    for c in conds[1:]:
        result = binary(Or, result, c)
    return result
