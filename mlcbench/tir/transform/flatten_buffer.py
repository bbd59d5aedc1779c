"""FlattenBuffer: make every buffer access one-dimensional.

Machine memory is flat, so each ``Buffer`` used in the body is replaced by a flat
buffer over the *same* ``data`` variable, of shape ``(prod(shape),)``, and each index
tuple by the element offset (row-major, or the buffer's strides and ``elem_offset``
when it has them).

Before::

    Y = T.alloc_buffer((16, 16))
    Y[i, j] = A[i, k] * B[k, j]

After::

    Y = T.allocate([256], "float32")          # Allocate with a flat buffer
    Y_1[i * 16 + j] = A_1[i * 16 + k] * B_1[k * 16 + j]

Parameters keep their original buffers in ``buffer_map`` (the code generator checks
argument shapes against them); the body refers to the flat buffers, which share the
parameters' ``data`` variables. A one-dimensional buffer without strides or offset is
already flat and is kept as it is.
"""
from __future__ import annotations

from ...ir.errors import CodegenError
from ...ir.transform import prim_func_pass
from ..buffer import Buffer
from ..expr import IntImm, PrimExpr, const
from ..functor import StmtExprMutator
from ..stmt import BufferStore, DeclBuffer
from ._common import plus, simplify_expr, times


def is_flat(buffer: Buffer) -> bool:
    offset = buffer.elem_offset
    return (buffer.ndim == 1 and not buffer.strides and isinstance(offset, IntImm)
            and offset.value == 0)


def flat_extent(buffer: Buffer):
    """Number of elements the buffer spans in memory."""
    if buffer.strides:
        extent = buffer.elem_offset + const(1, buffer.elem_offset.dtype)
        for size, stride in zip(buffer.shape, buffer.strides):
            extent = extent + (size - 1) * stride
        return simplify_expr(extent)
    extent = const(1, buffer.shape[0].dtype if buffer.shape else "int32")
    for size in buffer.shape:
        extent = extent * size
    return simplify_expr(extent)


def flatten(buffer: Buffer) -> Buffer:
    """The one-dimensional buffer over the same memory as ``buffer``."""
    if is_flat(buffer):
        return buffer
    return Buffer(buffer.name, (flat_extent(buffer),), buffer.dtype, buffer.data, (), None,
                  buffer.scope, (), buffer.align, buffer.offset_factor)


def flat_offset(buffer: Buffer, indices) -> PrimExpr:
    """Element offset of ``buffer[indices]``: ``elem_offset + sum(index * stride)``, with
    row-major strides when the buffer has none (``i * 16 + j`` for a 16-column buffer)."""
    offset = None
    if buffer.strides:
        for index, stride in zip(indices, buffer.strides):
            term = times(index, stride)
            offset = term if offset is None else plus(offset, term)
    else:
        for index, extent in zip(indices, buffer.shape):
            offset = index if offset is None else plus(times(offset, extent), index)
    offset = offset if offset is not None else const(0, buffer.elem_offset.dtype)
    return plus(buffer.elem_offset, offset)


class _Flattener(StmtExprMutator):
    def __init__(self):
        self.flat: dict[Buffer, Buffer] = {}

    def flat_buffer(self, buffer: Buffer) -> Buffer:
        # One flat buffer per original, so every access of a buffer names the same object.
        if buffer not in self.flat:
            self.flat[buffer] = flatten(buffer)
        return self.flat[buffer]

    def flat_index(self, buffer: Buffer, indices) -> tuple:
        if is_flat(buffer):
            return indices
        if len(indices) != buffer.ndim:
            raise CodegenError(f"buffer {buffer.name} has {buffer.ndim} dimensions, "
                               f"accessed with {len(indices)} indices")
        return (simplify_expr(flat_offset(buffer, indices)),)

    def visit_BufferLoad(self, load):
        indices = self.visit(load.indices)
        flat = self.flat_buffer(load.buffer)
        if flat is load.buffer and indices is load.indices:
            return load
        return load.replace(buffer=flat, indices=self.flat_index(load.buffer, indices))

    def visit_BufferStore(self, store):
        indices, value = self.visit(store.indices), self.visit(store.value)
        flat = self.flat_buffer(store.buffer)
        if flat is store.buffer and indices is store.indices and value is store.value:
            return store
        return BufferStore(flat, value, self.flat_index(store.buffer, indices))

    def visit_Allocate(self, alloc):
        body = self.visit(alloc.body)
        flat = self.flat_buffer(alloc.buffer)
        if flat is alloc.buffer and body is alloc.body:
            return alloc
        return alloc.replace(buffer=flat, body=body)

    def visit_DeclBuffer(self, decl):
        body = self.visit(decl.body)
        flat = self.flat_buffer(decl.buffer)
        if flat is decl.buffer and body is decl.body:
            return decl
        return DeclBuffer(flat, body)

    def visit_BlockRealize(self, realize):
        raise CodegenError(f"FlattenBuffer expects a body without blocks, found block "
                           f"{realize.block.name_hint!r}: run LowerOpaqueBlock first")


@prim_func_pass(opt_level=0, name="tir.FlattenBuffer")
def _flatten_buffer(func, mod, ctx):
    body = _Flattener().visit(func.body)
    return func if body is func.body else func.with_body(body)


def FlattenBuffer():
    """Pass: rewrite every buffer access as a one-dimensional access (params keep shapes)."""
    return _flatten_buffer

