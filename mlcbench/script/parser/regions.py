"""Buffer regions as TVMScript writes them: ``A[vi, 0:128]``, ``A[vi:vi + 4]``, ``A``.

A subscript with a slice is a region, one without is a load; ``T.reads``/``T.writes``
and ``T.match_buffer`` accept any of the three forms::

    as_region(A)            # the whole buffer
    as_region(A[vi, vj])    # the point (vi, vj)
    A_region = make_region(A, (vi, slice(0, 128)))
"""
from __future__ import annotations

from ...ir.errors import ParseError
from ...tir.buffer import Buffer, BufferRegion
from ...tir.expr import BufferLoad, IntImm, PrimExpr, Ramp, Range, const, convert
from .linear import extent_between


def _index_count_error(buffer: Buffer, count: int) -> ParseError:
    return ParseError(f"buffer {buffer.name} has {len(buffer.shape)} dimension(s) "
                      f"{_shape_text(buffer)}, but is indexed with {count} index(es)")


def _shape_text(buffer: Buffer) -> str:
    return "(" + ", ".join(str(s.value) if isinstance(s, IntImm) else s.script()
                           for s in buffer.shape) + ")"


def _slice_range(buffer: Buffer, dim: int, item: slice) -> Range:
    if item.step is not None:
        raise ParseError(f"{buffer.name}[...]: slices with a step are not supported")
    extent_dtype = buffer.shape[dim].dtype
    start = const(0, extent_dtype) if item.start is None else convert(item.start, extent_dtype)
    stop = buffer.shape[dim] if item.stop is None else convert(item.stop, start.dtype)
    return Range(start, extent_between(start, stop))


def make_region(buffer: Buffer, indices: tuple) -> BufferRegion:
    """``A[i, 0:4]`` with at least one slice."""
    if len(indices) != len(buffer.shape):
        raise _index_count_error(buffer, len(indices))
    ranges = []
    for dim, item in enumerate(indices):
        if isinstance(item, slice):
            ranges.append(_slice_range(buffer, dim, item))
        else:
            ranges.append(_point_range(convert(item)))
    return BufferRegion(buffer, tuple(ranges))


def _point_range(index: PrimExpr) -> Range:
    if isinstance(index, Ramp) and isinstance(index.stride, IntImm) and index.stride.value == 1:
        return Range(index.base, index.lanes)
    return Range(index, const(1, index.dtype))


def make_load(buffer: Buffer, indices: tuple) -> BufferLoad:
    """``A[i, j]`` with exactly one index per dimension."""
    if len(indices) != len(buffer.shape):
        raise _index_count_error(buffer, len(indices))
    return BufferLoad(buffer, tuple(convert(i) for i in indices))


def subscript(buffer: Buffer, indices: tuple):
    """What ``A[...]`` means in TVMScript: a region when sliced, else a load; a slice
    with a step (``A[0:64:8]``, how a strided vector load prints) is a load."""
    if any(isinstance(i, slice) and i.step is not None for i in indices):
        return make_load(buffer, tuple(_strided_ramp(buffer, i) if isinstance(i, slice)
                                       else i for i in indices))
    if any(isinstance(i, slice) for i in indices):
        return make_region(buffer, indices)
    return make_load(buffer, indices)


def _strided_ramp(buffer: Buffer, item: slice) -> Ramp:
    """``start:stop:step`` as the vector index ``Ramp(start, step, lanes)``."""
    if item.start is None or item.stop is None:
        raise ParseError(f"{buffer.name}[...]: a strided vector access needs a start and a "
                         f"stop, as in A[0:64:8]")
    start = convert(item.start)
    step = convert(item.step, start.dtype)
    extent = extent_between(start, convert(item.stop, start.dtype))
    if not (isinstance(step, IntImm) and isinstance(extent, IntImm)) or step.value <= 0 \
            or extent.value % step.value:
        raise ParseError(f"{buffer.name}[...]: a strided vector access needs a positive "
                         f"constant step dividing a constant length, found "
                         f"{extent.script()} elements with step {step.script()}")
    return Ramp(start, step, extent.value // step.value)


def region_to_load(region: BufferRegion) -> BufferLoad:
    """``A[0, 0:4]`` used as a value: a vector load with a Ramp index (as TVM prints it)."""
    indices = []
    for rng in region.region:
        if isinstance(rng.extent, IntImm) and rng.extent.value == 1:
            indices.append(rng.min)
        elif isinstance(rng.extent, IntImm):
            indices.append(Ramp(rng.min, const(1, rng.min.dtype), rng.extent.value))
        else:
            raise ParseError(f"{region.buffer.name}[...]: a vector access needs a constant "
                             f"slice length, found {rng.extent.script()}")
    return BufferLoad(region.buffer, tuple(indices))


def as_value(value):
    """Regions become vector loads where an expression is expected."""
    return region_to_load(value) if isinstance(value, BufferRegion) else value


def as_region(value) -> BufferRegion:
    """Region of a whole buffer, a point load, or a region (``T.reads`` arguments)."""
    if isinstance(value, BufferRegion):
        return value
    if isinstance(value, Buffer):
        return BufferRegion.full_region(value)
    if isinstance(value, BufferLoad):
        return BufferRegion(value.buffer, tuple(_point_range(i) for i in value.indices))
    raise ParseError(f"expected a buffer region such as A[vi, 0:128], a point A[vi] or a "
                     f"whole buffer A, found {type(value).__name__}: {value!r}")


def flatten_regions(args) -> list[BufferRegion]:
    """``T.reads(A[i], B[j])`` and ``T.reads([A[i], B[j]])`` mean the same."""
    regions = []
    for arg in args:
        if isinstance(arg, (list, tuple)):
            regions.extend(flatten_regions(arg))
        else:
            regions.append(as_region(arg))
    return regions
