"""StorageAlign: honour the ``buffer_dim_align`` annotation of ``Schedule.storage_align``.

A block annotated ``{"buffer_dim_align": [[buffer_index, axis, factor, offset], ...]}``
asks that the allocated buffer it writes (``buffer_index`` into its writes) get explicit
strides where the stride of ``axis`` is ``k * factor + offset`` elements, e.g. a
(16, 16) buffer aligned ``axis=0, factor=16, offset=1`` gets strides (17, 1) -- rows
padded by one element so column accesses do not all fall in one memory bank::

    A_shared = T.alloc_buffer((16, 16), scope="shared")      # before
    A_shared = T.alloc_buffer((16, 16), strides=(17, 1))     # after (272 elements used)

FlattenBuffer then indexes ``A_shared[i, j]`` as ``i * 17 + j``. Runs after
CompactBufferAllocation (which resets strides) and before FlattenBuffer. Parameters
keep the layout the caller passes; only allocated buffers are padded.
"""
from __future__ import annotations

from ...ir.transform import prim_func_pass
from ..expr import const
from ..functor import StmtExprMutator, StmtExprVisitor
from ._common import const_int


def aligned_strides(buffer, aligns: dict) -> tuple:
    """Row-major strides of ``buffer`` with ``aligns[axis] = (factor, offset)`` applied
    from the innermost axis out."""
    dtype = buffer.shape[-1].dtype
    strides, running = [], 1
    for axis in reversed(range(buffer.ndim)):
        if axis in aligns:
            factor, offset = aligns[axis]
            # Round the stride up to the next value congruent to offset modulo factor.
            running += (factor + offset - running % factor) % factor
        strides.append(running)
        extent = const_int(buffer.shape[axis])
        running *= extent
    return tuple(const(s, dtype) for s in reversed(strides))


class _Collect(StmtExprVisitor):
    def __init__(self, allocated):
        self.allocated, self.requests = allocated, {}

    def visit_Block(self, block):
        for entry in block.annotations.get("buffer_dim_align", ()):
            index, axis, factor, offset = (int(x) for x in entry)
            if index < len(block.writes):
                buffer = block.writes[index].buffer
                if id(buffer) in self.allocated:
                    self.requests.setdefault(buffer, {})[axis] = (factor, offset)
        self.generic_visit(block)


class _Allocated(StmtExprVisitor):
    def __init__(self):
        self.ids = {}

    def visit_Block(self, block):
        for buffer in block.alloc_buffers:
            # Padded strides are computed from constant extents; buffers with strides keep theirs.
            if all(const_int(s) is not None for s in buffer.shape) and not buffer.strides:
                self.ids[id(buffer)] = buffer
        self.generic_visit(block)


class _Restride(StmtExprMutator):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Buffer(self, buffer):
        return self.mapping.get(buffer, buffer)


def apply_storage_align(func):
    allocated = _Allocated()
    allocated.visit(func.body)
    collect = _Collect(allocated.ids)
    collect.visit(func.body)
    if not collect.requests:
        return func
    mapping = {buf: buf.replace(strides=aligned_strides(buf, aligns))
               for buf, aligns in collect.requests.items()}
    return func.with_body(_Restride(mapping).visit(func.body))


@prim_func_pass(opt_level=0, name="tir.StorageAlign")
def _storage_align(func, mod, ctx):
    return apply_storage_align(func)


def StorageAlign():
    """Pass: give buffers annotated by ``storage_align`` padded strides."""
    return _storage_align
