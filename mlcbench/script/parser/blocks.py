"""Turning a parsed ``with T.block(...)`` into ``BlockRealize(Block(...))``, and the
implicit root block around a function body that contains blocks.

TVMScript lets the root block go unwritten (the printer shows it as a comment)::

    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        # with T.block("root"):
        B = T.alloc_buffer((4,))
        for i in range(4):
            with T.block("B"): ...

parses to ``BlockRealize((), True, Block((), (), (), "root", body, alloc_buffers=(B,)))``,
exactly as if the root block had been written out.
"""
from __future__ import annotations

from ...tir.expr import IntImm
from ...tir.stmt import Block, BlockRealize
from .builder import BlockFrame, Builder


def detect_block_access(block: Block, buffer_var_map: dict) -> tuple[tuple, tuple]:
    """(reads, writes) TVM would infer for a block written without T.reads/T.writes:
    loops inside the block are relaxed to their ranges, and a reduction with T.init()
    does not read the buffer it writes."""
    from ...tir.analysis import get_block_read_write_region   # imported when first needed
    reads, writes = get_block_read_write_region(block, buffer_var_map)
    return tuple(reads), tuple(writes)


def true_predicate() -> IntImm:
    return IntImm("bool", 1)


def finish_block(frame: BlockFrame, body, builder: Builder, top_level: bool) -> BlockRealize:
    """The BlockRealize for ``frame``; missing T.reads/T.writes are detected."""
    block = Block(tuple(frame.iter_vars), tuple(frame.reads or ()), tuple(frame.writes or ()),
                  frame.name, body, frame.init, tuple(frame.alloc_buffers),
                  tuple(frame.match_buffers), dict(frame.annotations))
    is_root = top_level and not frame.iter_vars and frame.name == "root"
    if (frame.reads is None or frame.writes is None) and not is_root:
        reads, writes = detect_block_access(block, dict(builder.buffers_by_data))
        block = block.replace(reads=tuple(frame.reads) if frame.reads is not None else reads,
                              writes=tuple(frame.writes) if frame.writes is not None else writes)
    predicate = frame.predicate if frame.predicate is not None else true_predicate()
    return BlockRealize(tuple(frame.iter_values), predicate, block)


def wrap_root_block(body, builder: Builder):
    """Add the implicit root block when the body has blocks or top-level alloc_buffers."""
    allocs = builder.func.root_alloc_buffers
    explicit_root = (not allocs and isinstance(body, BlockRealize)
                     and not body.block.iter_vars and body.block.name_hint == "root")
    if explicit_root or not (builder.contains_block or allocs):
        return body
    root = Block((), (), (), "root", body, None, tuple(allocs))
    return BlockRealize((), true_predicate(), root)
