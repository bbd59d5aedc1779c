"""Buffer loads and stores: element addresses, contiguous vectors and gathers.

A buffer access ``B[i]`` reads memory through ``B.data`` (a parameter pointer or an
allocation). The flat element offset is ``B.elem_offset + i`` (multi-dimensional
indices are flattened row-major, so codegen also accepts unflattened buffers).

Vector indices:

* ``Ramp(base, 1, n)`` -> one ``<n x T>`` load/store at ``base`` (element alignment:
  numpy data is only 16-byte aligned, so wider alignment claims would crash);
* ``Broadcast(i, n)`` -> one scalar load, splat;
* ``Ramp(base, s, n)`` with a constant ``s`` from 2 to ``max_shuffled_stride`` (a load
  only) -> contiguous ``<n x T>`` loads over the ``(n - 1) * s + 1`` elements from
  ``base`` to the last lane, then shufflevectors that keep every ``s``-th element. A
  stride-2 pooling window reads its row this way: two loads and a shuffle instead of
  ``n`` scalar loads;
* anything else -> per-lane scalar accesses that LLVM may turn into gathers.
"""
from __future__ import annotations

from llvmlite import ir

from ...ir.dtype import DataType
from ...tir import expr as E
from . import types as T
from .intrinsics import intrinsic_suffix


def contiguous_base(index):
    """``base`` when ``index`` addresses ``n`` consecutive elements, else None.

    Recognises ``Ramp(b, 1, n)`` and ``Broadcast(x) + Ramp(b, 1, n)`` (what flattening a
    vectorized last axis produces).
    """
    strided = strided_base(index)
    return strided[0] if strided is not None and strided[1] == 1 else None


def strided_base(index):
    """``(base, stride)`` when ``index`` addresses the lanes ``base + i * stride`` for a
    constant ``stride``, else None: ``Ramp(b, s, n)`` or ``Broadcast(x) + Ramp(b, s, n)``.

    >>> strided_base(E.Ramp(E.IntImm("int32", 4), E.IntImm("int32", 2), 8))[1]
    2
    """
    if isinstance(index, E.Ramp):
        stride = _constant(index.stride)
        return (index.base, stride) if stride is not None else None
    if isinstance(index, E.Add):
        for x, y in ((index.a, index.b), (index.b, index.a)):
            inner = strided_base(y)
            if inner is not None and isinstance(x, E.Broadcast):
                return x.value + inner[0], inner[1]
    return None


def _constant(value):
    if isinstance(value, E.IntImm):
        return value.value
    return value if isinstance(value, int) else None


def shuffled_load_plan(stride: int, lanes: int):
    """Where the loads of a strided vector start and where each lane comes from.

    Returns ``(starts, sources)``: ``starts[k]`` is the element offset (from ``base``) of
    the ``k``-th ``<lanes x T>`` load, ``sources[i] = (k, j)`` says lane ``i`` is element
    ``j`` of load ``k``. The loads cover the ``(lanes - 1) * stride + 1`` elements from
    the first lane's to the last lane's and no more (the last load is moved back to end
    at the last lane), so they stay inside whatever buffer the lanes themselves are in.

    >>> shuffled_load_plan(2, 4)          # lanes at 0, 2, 4, 6: loads of [0, 4) and [3, 7)
    ([0, 3], [(0, 0), (0, 2), (1, 1), (1, 3)])
    """
    span = (lanes - 1) * stride + 1
    starts = [min(k * lanes, span - lanes) for k in range(-(-span // lanes))]
    sources = []
    for lane in range(lanes):
        position = lane * stride
        k = next(k for k, start in enumerate(starts) if position < start + lanes)
        sources.append((k, position - starts[k]))
    return starts, sources


class MemoryAccess:
    """Mixin of the expression/statement emitters: needs ``builder``, ``vars``, ``emit_expr``."""

    # Loads with a larger constant stride gather lane by lane: stride 4 already loads four
    # vectors for one.
    max_shuffled_stride = 4

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
        strided = strided_base(index)
        if strided is not None and 2 <= strided[1] <= self.max_shuffled_stride:
            base, stride = strided
            loaded = self._shuffled_load(self._element_address(pointer, base, elem_type),
                                         stride, lanes, elem_type, align)
            return T.from_memory(self.builder, loaded, dtype)
        return self._gather(pointer, index, elem_type, align, dtype)

    def emit_masked_load(self, load, mask: ir.Value, passthru: ir.Value):
        """``mask ? load : passthru`` lane by lane, the lanes outside the mask touching no
        memory (the border tiles of a padded window, see VectorizeLoop): one
        ``llvm.masked.load`` for a contiguous vector, one per load of the shuffled plan
        for a constant stride up to ``max_shuffled_stride``; None for other loads (the
        caller then selects between both sides, as for a condition without loads)."""
        buffer, lanes = load.buffer, load.dtype.lanes
        if lanes == 1:
            return None
        index = self._flat_index(buffer, load.indices)
        elem_type = T.memory_type(buffer.dtype)
        pointer = self._buffer_pointer(buffer)
        passthru = T.to_memory(self.builder, passthru, load.dtype)
        strided = strided_base(index)
        if strided is not None and strided[1] == 1:
            address = self._element_address(pointer, strided[0], elem_type)
            loaded = self._masked_vector_load(address, mask, passthru,
                                              self.vector_alignment(buffer, strided[0], lanes))
        elif strided is not None and 2 <= strided[1] <= self.max_shuffled_stride:
            address = self._element_address(pointer, strided[0], elem_type)
            loaded = self._shuffled_load(address, strided[1], lanes, elem_type,
                                         buffer.dtype.itemsize, mask)
            loaded = self.builder.select(mask, loaded, passthru)
        else:
            return None
        return T.from_memory(self.builder, loaded, load.dtype)

    def _masked_vector_load(self, address, mask, passthru, align: int) -> ir.Value:
        vector_type = passthru.type
        name = (f"llvm.masked.load.v{vector_type.count}"
                f"{intrinsic_suffix(vector_type.element)}.p0")
        fn = self.declare_function(name, vector_type, [address.type, T.I32, mask.type,
                                                        vector_type])
        return self.builder.call(fn, [address, ir.Constant(T.I32, align), mask, passthru])

    def _shuffled_load(self, address, stride: int, lanes: int, elem_type, align,
                       mask=None) -> ir.Value:
        """Lanes ``address[i * stride]``: contiguous loads, then one shufflevector per load
        after the first, each filling in the lanes that load holds (``shuffled_load_plan``).
        With a lane ``mask``, each load is masked to the elements of the lanes it serves
        that the mask keeps (the other lanes of the result are undefined)."""
        starts, sources = shuffled_load_plan(stride, lanes)
        vector_type = ir.VectorType(elem_type, lanes)
        addresses = [self.builder.gep(address, [ir.Constant(T.I64, start)], inbounds=True,
                                      source_etype=elem_type) for start in starts]
        if mask is None:
            loads = [self.builder.load(a, typ=vector_type, align=align) for a in addresses]
        else:
            none = ir.Constant(mask.type, None)
            loads = []
            for k, a in enumerate(addresses):
                # Element j of load k is lane i's when sources[i] == (k, j).
                served = {j: lane for lane, (source, j) in enumerate(sources) if source == k}
                spread = self.builder.shuffle_vector(mask, none, ir.Constant(
                    ir.VectorType(T.I32, lanes), [served.get(j, lanes) for j in range(lanes)]))
                loads.append(self._masked_vector_load(a, spread, ir.Constant(vector_type, None),
                                                      align))
        result, mask_type = loads[0], ir.VectorType(T.I32, lanes)
        for k in range(1, len(loads)):
            # Lanes of ``result`` (indices < lanes) or of load k (indices lanes + j).
            mask = [lanes + j if source == k else (j if k == 1 and source == 0 else lane)
                    for lane, (source, j) in enumerate(sources)]
            result = self.builder.shuffle_vector(result, loads[k], ir.Constant(mask_type, mask))
        return result

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
