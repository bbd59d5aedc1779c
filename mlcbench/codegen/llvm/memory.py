"""Buffer loads and stores: element addresses, contiguous vectors and gathers.

A buffer access ``B[i]`` reads memory through ``B.data`` (a parameter pointer or an
allocation). The flat element offset is ``B.elem_offset + i`` (multi-dimensional
indices are flattened row-major, so codegen also accepts unflattened buffers).

Vector indices:

* ``Ramp(base, 1, n)`` -> one ``<n x T>`` load/store at ``base`` (element alignment:
  numpy data is only 16-byte aligned, so wider alignment claims would crash);
* ``Broadcast(i, n)`` -> one scalar load, splat;
* anything else -> per-lane scalar accesses that LLVM may turn into gathers.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.dtype import DataType
from ...tir import expr as E
from . import types as T


def contiguous_base(index):
    """``base`` when ``index`` addresses ``n`` consecutive elements, else None.

    Recognises ``Ramp(b, 1, n)`` and ``Broadcast(x) + Ramp(b, 1, n)`` (what flattening a
    vectorized last axis produces).
    """
    if isinstance(index, E.Ramp) and _is_one(index.stride):
        return index.base
    if isinstance(index, E.Add):
        for x, y in ((index.a, index.b), (index.b, index.a)):
            inner = contiguous_base(y)
            if inner is not None and isinstance(x, E.Broadcast):
                return x.value + inner
    return None


def _is_one(value) -> bool:
    return (isinstance(value, E.IntImm) and value.value == 1) or \
        (isinstance(value, int) and value == 1)


class MemoryAccess:
    """Mixin of the expression/statement emitters: needs ``builder``, ``vars``, ``emit_expr``."""

    def vector_alignment(self, buffer, base, lanes: int) -> int:
        """Alignment claimed for ``lanes`` elements from ``buffer[base]``: one element's,
        since numpy arrays guarantee no more (a GPU kernel, whose arrays are aligned,
        claims the whole vector where ``base`` is a multiple of ``lanes``)."""
        return buffer.dtype.itemsize

    def _buffer_pointer(self, buffer) -> ir.Value:
        pointer = self.vars.get(buffer.data)
        if pointer is None:
            self.fail(f"buffer {buffer.name!r} is accessed but its data pointer is not bound "
                      "(not a parameter buffer and not inside its Allocate)", buffer)
        return pointer

    def _flat_index(self, buffer, indices):
        if len(indices) == 1:
            index = indices[0]
            offset = buffer.elem_offset
            if isinstance(offset, E.IntImm) and offset.value == 0:
                return index
            return offset + index
        return buffer.offset_of(indices)

    def _to_i64(self, value: ir.Value, dt: DataType) -> ir.Value:
        element = value.type.element if T.is_vector(value) else value.type
        if element.width == 64:
            return value
        wide = ir.VectorType(T.I64, value.type.count) if T.is_vector(value) else T.I64
        return self.builder.zext(value, wide) if dt.element.is_uint else self.builder.sext(value, wide)

    def _element_address(self, pointer, offset_expr, elem_type) -> ir.Value:
        offset = self._to_i64(self.emit_expr(offset_expr), offset_expr.dtype)
        # inbounds: a TIR access never leaves its buffer, which lets LLVM reason about offsets.
        return self.builder.gep(pointer, [offset], inbounds=True, source_etype=elem_type)

    def emit_load(self, buffer, indices, dtype: DataType) -> ir.Value:
        pointer = self._buffer_pointer(buffer)
        elem_type, align = T.memory_type(buffer.dtype), buffer.dtype.itemsize
        index = self._flat_index(buffer, indices)
        lanes = index.dtype.lanes
        if lanes == 1:
            address = self._element_address(pointer, index, elem_type)
            loaded = self.builder.load(address, typ=elem_type, align=align)
            return T.from_memory(self.builder, loaded, buffer.dtype)
        base = contiguous_base(index)
        if base is not None:
            address = self._element_address(pointer, base, elem_type)
            loaded = self.builder.load(address, typ=ir.VectorType(elem_type, lanes),
                                       align=self.vector_alignment(buffer, base, lanes))
            return T.from_memory(self.builder, loaded, dtype)
        if isinstance(index, E.Broadcast):
            scalar = self.emit_load(buffer, [index.value], buffer.dtype)
            return T.broadcast(self.builder, scalar, lanes)
        return self._gather(pointer, index, elem_type, align, dtype)

    def _gather(self, pointer, index, elem_type, align, dtype) -> ir.Value:
        offsets = self._to_i64(self.emit_expr(index), index.dtype)
        result = ir.Constant(ir.VectorType(elem_type, index.dtype.lanes), None)
        for lane in range(index.dtype.lanes):
            lane_offset = self.builder.extract_element(offsets, ir.Constant(T.I32, lane))
            address = self.builder.gep(pointer, [lane_offset], inbounds=True,
                                       source_etype=elem_type)
            value = self.builder.load(address, typ=elem_type, align=align)
            result = self.builder.insert_element(result, value, ir.Constant(T.I32, lane))
        return T.from_memory(self.builder, result, dtype)

    def emit_store(self, buffer, indices, value_expr) -> None:
        pointer = self._buffer_pointer(buffer)
        elem_type, align = T.memory_type(buffer.dtype), buffer.dtype.itemsize
        index = self._flat_index(buffer, indices)
        lanes = index.dtype.lanes
        value = self.emit_expr(value_expr)
        value_dtype = value_expr.dtype
        if lanes > 1 and not value_dtype.is_vector:
            value = T.broadcast(self.builder, value, lanes)
            value_dtype = value_dtype.with_lanes(lanes)
        value = T.to_memory(self.builder, value, value_dtype)
        if lanes == 1:
            self.builder.store(value, self._element_address(pointer, index, elem_type), align=align)
            return
        base = contiguous_base(index)
        if base is not None:
            self.builder.store(value, self._element_address(pointer, base, elem_type),
                               align=self.vector_alignment(buffer, base, lanes))
            return
        offsets = self._to_i64(self.emit_expr(index), index.dtype)
        for lane in range(lanes):
            position = ir.Constant(T.I32, lane)
            lane_offset = self.builder.extract_element(offsets, position)
            address = self.builder.gep(pointer, [lane_offset], inbounds=True,
                                       source_etype=elem_type)
            self.builder.store(self.builder.extract_element(value, position), address, align=align)
