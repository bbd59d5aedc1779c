"""Buffers: a typed, shaped view of memory, the only way TensorIR touches tensors.

A Buffer is a binder (compared by identity, matched up to renaming). ``data`` is the
pointer variable it views; two buffers may view the same ``data`` (``match_buffer``,
flattening). ``A[i, j]`` builds a :class:`BufferLoad`.
"""
from __future__ import annotations


from ..ir.dtype import DataType, dtype as as_dtype
from ..ir.errors import IRError
from ..ir.node import Node, defines, ignored, node
from .expr import BufferLoad, IntImm, PrimExpr, Var, convert


@node(binder=True)
class Buffer(Node):
    _view_of = "data"    # a buffer over already-matched memory counts as defined by it

    name: str = ignored("buffer")
    shape: tuple = ()
    dtype: DataType = as_dtype("float32")
    data: Var = None
    strides: tuple = ()
    elem_offset: PrimExpr = None
    scope: str = "global"
    axis_separators: tuple = ()
    align: int = 0                  # bytes; 0 = element alignment
    offset_factor: int = 1

    def __post_init__(self):
        shape = tuple(convert(s) for s in self.shape)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", as_dtype(self.dtype))
        object.__setattr__(self, "strides", tuple(convert(s) for s in self.strides))
        index_dtype = shape[0].dtype if shape else as_dtype("int32")
        if self.elem_offset is None:
            object.__setattr__(self, "elem_offset", IntImm(index_dtype, 0))
        else:
            object.__setattr__(self, "elem_offset", convert(self.elem_offset))
        if self.data is None:
            object.__setattr__(self, "data", Var(self.name, "handle", type_annotation=(
                self.dtype, self.scope)))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, indices) -> BufferLoad:
        indices = indices if isinstance(indices, tuple) else (indices,)
        if any(isinstance(i, slice) for i in indices):
            raise IRError(f"{self.name}[...]: slices make a BufferRegion; use "
                          "tir.BufferRegion or T.reads/T.writes")
        if len(indices) != len(self.shape):
            raise IRError(f"buffer {self.name} has {len(self.shape)} dimensions, "
                          f"indexed with {len(indices)}")
        return BufferLoad(self, tuple(convert(i) for i in indices))

    def vload(self, indices, dtype=None) -> BufferLoad:
        return BufferLoad(self, tuple(indices), dtype)

    def offset_of(self, indices) -> PrimExpr:
        """Flat element offset of ``indices`` (row-major unless strides are given)."""
        indices = [convert(i) for i in indices]
        if self.strides:
            offset = self.elem_offset
            for i, s in zip(indices, self.strides):
                offset = offset + i * s
            return offset
        offset = None
        for i, extent in zip(indices, self.shape):
            offset = i if offset is None else offset * extent + i
        offset = offset if offset is not None else convert(0)
        if not (isinstance(self.elem_offset, IntImm) and self.elem_offset.value == 0):
            offset = self.elem_offset + offset
        return offset

    def access_ptr(self, access_mask, ptr_type="handle", content_lanes=1, offset=0,
                   extent=None) -> PrimExpr:
        """The address of the buffer's first element (plus ``offset`` elements), for an
        extern function: ``T.call_extern("tmm16", C.access_ptr("w"), A.access_ptr("r"),
        ..., dtype="int32")``. ``access_mask`` is ``"r"``, ``"w"``, ``"rw"`` or 1 / 2 / 3."""
        from .op import tvm_access_ptr, type_annotation
        mask = _access_mask(access_mask)
        if extent is None:
            extent = _extent_in_elements(self)
        return tvm_access_ptr(type_annotation(self.dtype), self.data,
                              convert(self.elem_offset) + convert(offset), convert(extent),
                              convert(mask))

    def __repr__(self):
        return f"Buffer({self.name}, {[str(s) for s in self.shape]}, {self.dtype!r}, scope={self.scope!r})"

    __str__ = __repr__


def _access_mask(mask) -> int:
    if isinstance(mask, str) and mask and set(mask) <= {"r", "w"}:
        return ("r" in mask) * 1 + ("w" in mask) * 2
    if isinstance(mask, int) and not isinstance(mask, bool) and 1 <= mask <= 3:
        return mask
    raise IRError(f"access_ptr: expected the access mask 'r', 'w', 'rw' or 1, 2, 3, "
                  f"found {mask!r}")


def _extent_in_elements(buffer) -> PrimExpr:
    """Elements from the first to one past the last: with strides, the outermost
    dimension's extent times its stride (as TVM computes it)."""
    if buffer.strides and buffer.shape:
        return buffer.shape[0] * buffer.strides[0]
    extent = convert(1)
    for dim in buffer.shape:
        extent = extent * dim
    return extent


def decl_buffer(shape, dtype="float32", name="buffer", data=None, strides=(), elem_offset=None,
                scope="global", align=0, offset_factor=1, axis_separators=()) -> Buffer:
    if isinstance(shape, (int, PrimExpr)):
        shape = (shape,)
    return Buffer(name, tuple(shape), as_dtype(dtype), data, tuple(strides), elem_offset, scope,
                  tuple(axis_separators), align, offset_factor)


@node
class BufferRegion(Node):
    """A rectangular region of a buffer: one Range per dimension."""
    buffer: Buffer
    region: tuple

    @staticmethod
    def full_region(buffer: Buffer) -> "BufferRegion":
        from .expr import Range
        return BufferRegion(buffer, tuple(Range(convert(0, s.dtype), s) for s in buffer.shape))


@node
class MatchBufferRegion(Node):
    """Bind ``buffer`` to view ``source`` (a region of an outer buffer) inside a block."""
    buffer: Buffer = defines()
    source: BufferRegion


