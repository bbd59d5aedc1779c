"""The statement half of the ``T`` namespace: loops, blocks, buffers, attributes.

Loop and block helpers (``T.grid``, ``T.serial``, ``T.block``, ``T.init``) return small
descriptions the parser turns into ``For``/``Block`` nodes. Declarations (``T.reads``,
``T.axis.spatial``, ``T.alloc_buffer``, ``T.func_attr``) add to the function or block
being parsed through :func:`~.builder.current_builder`::

    for i, j in T.grid(128, 128):          # LoopSpec of two serial loops
        with T.block("C"):                 # BlockSpec("C")
            vi = T.axis.spatial(128, i)    # adds IterVar vi bound to i to block "C"
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.dtype import dtype as as_dtype
from ...ir.errors import ParseError
from ...tir import stmt as S
from ...tir.buffer import Buffer, MatchBufferRegion
from ...tir.expr import FloatImm, IntImm, PrimExpr, Range, StringImm, Var, const, convert
from .builder import current_builder, name_hint, name_hints, require_builder
from .linear import extent_between
from .regions import as_region, flatten_regions
from .t_expr import make_buffer, same_layout


def plain_value(value):
    """Attribute values as Python values: ``T.bool(True)`` -> True, ``T.int32(4)`` -> 4."""
    if isinstance(value, IntImm):
        return bool(value.value) if value.dtype.is_bool else value.value
    if isinstance(value, FloatImm):
        return value.value
    if isinstance(value, StringImm):
        return value.value
    if isinstance(value, dict):
        return {plain_value(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(plain_value(v) for v in value)
    return value


# -- loops ------------------------------------------------------------------------------

@dataclass(frozen=True)
class LoopDim:
    kind: S.ForKind
    min: PrimExpr
    extent: PrimExpr
    annotations: dict = field(default_factory=dict)
    thread: str | None = None


@dataclass(frozen=True)
class LoopSpec:
    """What ``for ... in T.grid(...)`` iterates: one LoopDim per loop variable."""
    dims: tuple


def _loop_dim(kind, start, stop, annotations=None, thread=None) -> LoopDim:
    if stop is None:
        start, stop = 0, start
    for bound in (start, stop):
        _check_loop_bound(bound)
    extent = extent_between(start, stop) if not _is_zero(start) else convert(stop)
    if isinstance(extent, IntImm) and extent.value < 0:
        raise ParseError(f"a loop extent must not be negative, found {extent.value}")
    start = convert(start, extent.dtype if isinstance(extent, PrimExpr) else None)
    if start.dtype != extent.dtype:
        wide = start.dtype if start.dtype.bits >= extent.dtype.bits else extent.dtype
        start, extent = _to(start, wide), _to(extent, wide)
    return LoopDim(S.ForKind(kind), start, extent, plain_value(dict(annotations or {})), thread)


def _check_loop_bound(value) -> None:
    """Loop bounds are integers; a Python int beyond int32 is a mistake (write
    ``T.int64(...)`` for a loop that really needs a 64-bit variable)."""
    if isinstance(value, (bool, float)) or (
            isinstance(value, PrimExpr) and not value.dtype.is_integer):
        dtype = value.dtype if isinstance(value, PrimExpr) else type(value).__name__
        raise ParseError(f"a loop bound must be an integer, found {value!r} ({dtype})")
    if isinstance(value, int) and not -2**31 <= value < 2**31:
        raise ParseError(f"a loop bound must fit the int32 loop variable, found {value}; "
                         "write T.int64(...) for a 64-bit loop")


def _is_zero(value) -> bool:
    return (isinstance(value, int) and value == 0) or (isinstance(value, IntImm)
                                                       and value.value == 0)


def _to(value: PrimExpr, dtype) -> PrimExpr:
    from ...tir.expr import cast
    return value if value.dtype == dtype else cast(dtype, value)


def serial(start, stop=None, *, annotations=None) -> LoopSpec:
    """``for i in T.serial(128)`` / ``T.serial(2, 10)``: an ordinary loop."""
    return LoopSpec((_loop_dim(S.ForKind.SERIAL, start, stop, annotations),))


def parallel(start, stop=None, *, annotations=None) -> LoopSpec:
    """A loop whose iterations run on several threads."""
    return LoopSpec((_loop_dim(S.ForKind.PARALLEL, start, stop, annotations),))


def vectorized(start, stop=None, *, annotations=None) -> LoopSpec:
    """A loop turned into vector instructions."""
    return LoopSpec((_loop_dim(S.ForKind.VECTORIZED, start, stop, annotations),))


def unroll(start, stop=None, *, annotations=None) -> LoopSpec:
    """A loop unrolled by the compiler."""
    return LoopSpec((_loop_dim(S.ForKind.UNROLLED, start, stop, annotations),))


def thread_binding(start, stop=None, thread: str | None = None, *, annotations=None) -> LoopSpec:
    """``T.thread_binding(0, 128, thread="threadIdx.x")``: a loop bound to a GPU thread."""
    if thread is None and isinstance(stop, str):
        stop, thread = None, stop
    if not thread:
        raise ParseError("T.thread_binding needs thread=, e.g. thread=\"threadIdx.x\"")
    return LoopSpec((_loop_dim(S.ForKind.THREAD_BINDING, start, stop, annotations, thread),))


def grid(*extents) -> LoopSpec:
    """``for i, j, k in T.grid(128, 128, 128)``: nested serial loops starting at 0."""
    if not extents:
        raise ParseError("T.grid needs at least one extent")
    return LoopSpec(tuple(_loop_dim(S.ForKind.SERIAL, e, None) for e in extents))


def thread_iter_var(min_value, extent, thread: str, dtype) -> S.IterVar:
    """The IterVar a thread-bound loop records (``For.thread_binding``)."""
    return S.IterVar(Range(min_value, extent), Var(thread, dtype), S.IterType.THREAD_INDEX,
                     thread)


# -- blocks -----------------------------------------------------------------------------

@dataclass(frozen=True)
class BlockSpec:
    """``with T.block("name"):``"""
    name: str = ""
    no_realize: bool = False


@dataclass(frozen=True)
class InitSpec:
    """``with T.init():`` -- the statement that initialises a reduction."""


@dataclass(frozen=True)
class LetSpec:
    """``with T.LetStmt(value) as x:``"""
    value: PrimExpr
    var: Var | None = None


def block(name: str = "", no_realize: bool = False) -> BlockSpec:
    return BlockSpec(name, no_realize)


def init() -> InitSpec:
    return InitSpec()


def LetStmt(value, type_annotation=None, *, var=None) -> LetSpec:  # noqa: N802
    value = convert(value)
    if var is None and type_annotation is not None:
        var = Var(name_hint("v"), getattr(type_annotation, "dtype", type_annotation))
    return LetSpec(value, var)


def _as_domain(dom) -> Range:
    if isinstance(dom, Range):
        return dom
    if isinstance(dom, (list, tuple)):
        if len(dom) != 2:
            raise ParseError(f"an axis domain is an extent or a (min, max) pair, found {dom!r}")
        start = convert(dom[0])
        return Range(start, convert(extent_between(start, dom[1]), start.dtype))
    extent = convert(dom)
    return Range(const(0, extent.dtype), extent)


def _push_axis(kind: S.IterType, dom, binding, dtype, who: str) -> Var:
    frame = require_builder(who).innermost_block(who)
    dom = _as_domain(dom)
    base = as_dtype(dtype)
    bits = max(dom.min.dtype.bits, dom.extent.dtype.bits, base.bits)
    var = Var(name_hint("v"), as_dtype(f"{base.code}{bits}"))
    frame.iter_vars.append(S.IterVar(dom, var, kind, ""))
    frame.iter_values.append(convert(binding, var.dtype))
    return var


class _Axis:
    """``T.axis``: declares a block's iteration variables and their bindings."""

    def spatial(self, dom, binding, dtype="int32") -> Var:
        """``vi = T.axis.spatial(128, i)``: a data-parallel iteration variable."""
        return _push_axis(S.IterType.DATA_PAR, dom, binding, dtype, "T.axis.spatial")

    def reduce(self, dom, binding, dtype="int32") -> Var:
        """``vk = T.axis.reduce(128, k)``: a reduction iteration variable."""
        return _push_axis(S.IterType.COMM_REDUCE, dom, binding, dtype, "T.axis.reduce")

    def scan(self, dom, binding, dtype="int32") -> Var:
        return _push_axis(S.IterType.ORDERED, dom, binding, dtype, "T.axis.scan")

    def opaque(self, dom, binding, dtype="int32") -> Var:
        return _push_axis(S.IterType.OPAQUE, dom, binding, dtype, "T.axis.opaque")

    S, R = spatial, reduce

    def remap(self, kinds: str, bindings, dtype="int32"):
        """``vi, vj, vk = T.axis.remap("SSR", [i, j, k])``: one axis per loop variable,
        with the loop's range as domain ("S" spatial, "R" reduction). One kind gives one
        variable: ``vi = T.axis.remap("S", [i])``."""
        builder = require_builder("T.axis.remap")
        frame = builder.innermost_block("T.axis.remap")
        bindings = list(bindings) if isinstance(bindings, (list, tuple)) else [bindings]
        if len(kinds) != len(bindings):
            raise ParseError(f"T.axis.remap: {len(kinds)} iterator kinds {kinds!r} but "
                             f"{len(bindings)} loop variables")
        names = name_hints(len(bindings)) if len(bindings) > 1 else [name_hint("v")]
        result = []
        for kind, binding, name in zip(kinds, bindings, names):
            iter_type = {"S": S.IterType.DATA_PAR, "R": S.IterType.COMM_REDUCE}.get(kind)
            if iter_type is None:
                raise ParseError(f"T.axis.remap: unknown iterator kind {kind!r}; use 'S' "
                                 "(spatial) or 'R' (reduction)")
            if binding not in builder.loop_ranges:
                raise ParseError(f"T.axis.remap binds loop variables only, found "
                                 f"`{convert(binding).script()}`; use T.axis.spatial instead")
            var = Var(name, binding.dtype)
            frame.iter_vars.append(S.IterVar(builder.loop_ranges[binding], var, iter_type, ""))
            frame.iter_values.append(binding)
            result.append(var)
        return result[0] if len(result) == 1 else result


axis = _Axis()


def reads(*regions) -> None:
    """``T.reads(A[vi, 0:128], B[0:128, vj])``: the regions a block reads."""
    frame = require_builder("T.reads").innermost_block("T.reads")
    if frame.reads is not None:
        raise ParseError(f"block {frame.name!r} declares T.reads twice")
    frame.reads = flatten_regions(regions)


def writes(*regions) -> None:
    """``T.writes(C[vi, vj])``: the regions a block writes."""
    frame = require_builder("T.writes").innermost_block("T.writes")
    if frame.writes is not None:
        raise ParseError(f"block {frame.name!r} declares T.writes twice")
    frame.writes = flatten_regions(regions)


def where(predicate) -> None:
    """``T.where(i * 4 + j < 100)``: execute the block only where the predicate holds."""
    frame = require_builder("T.where").innermost_block("T.where")
    frame.predicate = convert(predicate)


def block_attr(attrs: dict) -> None:
    """``T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})``."""
    frame = require_builder("T.block_attr").innermost_block("T.block_attr")
    frame.annotations.update(plain_value(dict(attrs)))


def func_attr(attrs: dict) -> None:
    """``T.func_attr({"global_symbol": "main", "tir.noalias": True})``."""
    require_builder("T.func_attr").func.attrs.update(plain_value(dict(attrs)))


# -- buffers ----------------------------------------------------------------------------

def alloc_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None,
                 scope="global", align=-1, offset_factor=0, buffer_type="default",
                 axis_separators=None) -> Buffer:
    """``Y = T.alloc_buffer((128, 128), "float32")``: an intermediate buffer of the
    enclosing block (or of the function's root block)."""
    buffer = make_buffer(shape, dtype, data, strides, elem_offset, scope, align,
                         offset_factor, "", axis_separators)
    builder = current_builder()
    if builder is not None:
        builder.add_alloc_buffer(buffer)
    return buffer


def match_buffer(param, shape=None, dtype=None, data=None, strides=None, elem_offset=None,
                 scope="global", align=-1, offset_factor=0, buffer_type="default",
                 axis_separators=None) -> Buffer:
    """``A = T.match_buffer(a, (128, 128), "float32")`` binds a handle parameter to a
    buffer; inside a block, ``T.match_buffer(A[vi, 0:16], (16,))`` views a region."""
    builder = require_builder("T.match_buffer")
    if isinstance(param, Var):
        return _match_param(builder, param, shape, dtype or "float32", data, strides,
                            elem_offset, scope, align, offset_factor, axis_separators)
    region = as_region(param)
    if shape is None:
        shape = tuple(r.extent for r in region.region)
    buffer = make_buffer(shape, dtype or region.buffer.dtype, data, strides, elem_offset,
                         scope, align, offset_factor, "", axis_separators)
    frame = builder.innermost_block("T.match_buffer of a region")
    frame.match_buffers.append(MatchBufferRegion(buffer, region))
    builder.declare_buffer(buffer)
    return buffer


def _match_param(builder, param, shape, dtype, data, strides, elem_offset, scope, align,
                 offset_factor, axis_separators) -> Buffer:
    if param not in builder.func.params:
        raise ParseError(f"T.match_buffer: {param.name} is not a parameter of the function")
    if param in builder.func.buffer_map:
        raise ParseError(f"T.match_buffer: parameter {param.name} is already bound to buffer "
                         f"{builder.func.buffer_map[param].name}")
    if shape is None:
        raise ParseError(f"T.match_buffer({param.name}, ...) needs a shape")
    buffer = make_buffer(shape, dtype, data, strides, elem_offset, scope, align,
                         offset_factor, "", axis_separators)
    builder.func.buffer_map[param] = buffer
    builder.declare_buffer(buffer)
    return buffer


def decl_buffer(shape, dtype="float32", data=None, strides=None, elem_offset=None,
                scope="global", align=-1, offset_factor=0, buffer_type="default",
                axis_separators=None) -> Buffer:
    """``B = T.decl_buffer((128,), "float32", data=ptr)``: a buffer over existing memory
    for the rest of the body (without ``data=`` it allocates its own)."""
    builder = current_builder()
    allocated = builder.allocations.get(data) if builder is not None and data is not None \
        else None
    if allocated is not None and same_layout(allocated, shape, dtype, scope, strides,
                                             elem_offset):
        buffer = allocated            # Allocate(buf, DeclBuffer(buf, ...)) as printed
    else:
        buffer = make_buffer(shape, dtype, data, strides, elem_offset, scope, align,
                             offset_factor, "", axis_separators)
    if builder is not None:
        builder.declare_buffer(buffer)
        if data is None:
            builder.emit_wrapper(lambda rest: S.Allocate(buffer, S.DeclBuffer(buffer, rest)))
        else:
            builder.emit_wrapper(lambda rest: S.DeclBuffer(buffer, rest))
    return buffer


def allocate(extents, dtype, scope="global", condition=True, annotations=None) -> Var:
    """``ptr = T.allocate([128], "float32", "global")``: storage for the rest of the body;
    a later ``T.Buffer((128,), "float32", data=ptr)`` views it."""
    builder = require_builder("T.allocate")
    buffer = make_buffer(extents, dtype, scope=scope)
    builder.allocations[buffer.data] = buffer
    builder.declare_buffer(buffer)
    attrs = plain_value(dict(annotations or {}))
    builder.emit_wrapper(lambda rest: S.Allocate(buffer, rest, attrs))
    return buffer.data


for _fn in (reads, writes, match_buffer):
    _fn.takes_regions = True     # the evaluator keeps A[0:4] a region for these


# -- plain statements -------------------------------------------------------------------

def evaluate(value):
    """``T.evaluate(expr)``: run an expression for its effect."""
    stmt = S.Evaluate(convert(value))
    builder = current_builder()
    if builder is None:
        return stmt
    builder.emit(stmt)
    return None


def Assert(condition, message) -> None:  # noqa: N802
    """``T.Assert(cond, "message")``: check ``cond`` before the rest of the body."""
    builder = require_builder("T.Assert")
    condition = convert(condition)
    message = message.value if isinstance(message, StringImm) else str(message)
    builder.emit_wrapper(lambda rest: S.AssertStmt(condition, message, rest))
