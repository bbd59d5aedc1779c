"""PackVectorOperand: copy the operand the register tile's vector loop walks into panels.

``MultiLevelTiling(pack_vector_operand="may")`` marks some of its design spaces with
``meta_schedule.pack_vector_operand``. After the search has fixed every tile size, this
postprocessor reads the panel width off the block's final loop nest (the extent of the
spatial loops inside the innermost reduction loop that walk the operand's last axis)
and packs that operand as the default matmul schedule does::

    B_global = T.alloc_buffer((1024 // 16, 1024, 16))        # [j // w, k, j % w]
    for j_0_k_0 in T.parallel(...):                          # the packing block
        ...  B_global[j // 16, k, j % 16] = B[k, j]
    for i_0_j_0_i_1_fused in T.parallel(...):                # the tiled kernel
        ...  C_local[..] += A[i, k] * B_global[j // 16, k, j % 16]

A panel holds the ``w`` columns one register tile reads at every step of ``k``, so the
kernel streams it contiguously instead of touching one cache line per row of ``B``
(rows 4 KiB apart in a 1024-wide matrix collide in the same cache sets). Being a
postprocessor, the width always follows the tile sizes the mutators chose. Where the
nest has no such loops (``k`` innermost) or the width does not divide the axis, the
schedule is left as it is.
"""
from __future__ import annotations

from ...arith import Analyzer
from ...dlight.cpu.packing import panel_index_map, schedule_packing
from ...dlight.cpu.tiling import PARALLEL_MIN_MACS
from ...ir.errors import ScheduleError
from ...tir.function import PrimFunc
from ...tir.functor import post_order_visit
from ...tir.stmt import Block
from ..block_analysis import (PACK_ANNOTATION, REDUCE, SPATIAL, access_strides, locate_block,
                              loop_iter_types, vector_operand_reads)
from .postproc import Postproc


class PackVectorOperand(Postproc):
    """Pack the vector operand of every block marked ``meta_schedule.pack_vector_operand``.

    >>> PackVectorOperand().apply(sch)      # doctest: +SKIP
    True
    """

    def apply(self, sch) -> bool:
        for func_name, block_name in _marked_blocks(sch):
            block = sch.get_block(block_name, func_name=func_name)
            sch.unannotate(block, PACK_ANNOTATION)
            plan = panel_plan(sch, block)
            if plan is None:
                continue
            read_index, dim, width, work = plan
            try:
                copy = sch.cache_read(block, read_index, "global")
                sch.transform_layout(copy, ("write", 0), panel_index_map(dim, width))
                schedule_packing(sch, sch.get(copy).name_hint, dim, width,
                                 parallel=work >= PARALLEL_MIN_MACS, func_name=func_name)
            except ScheduleError:
                return False
        return True


def _marked_blocks(sch) -> list:
    out = []
    for gv, func in sch.mod.functions.items():
        if not isinstance(func, PrimFunc):
            continue

        def visit(node, name=gv.name_hint):
            if isinstance(node, Block) and PACK_ANNOTATION in node.annotations:
                out.append((name, node.name_hint))
        post_order_visit(func.body, visit)
    return out


def panel_plan(sch, block):
    """``(read_index, dim, width, work)``: which read of ``block`` to pack, its vector
    dimension (the operand's last, also the output's last index), the panel width and
    the iterations of the block's loop nest; None when no contiguous run of spatial
    loops inside the innermost reduction loop walks that dimension."""
    _, hit = locate_block(sch, block)
    realize, loops = hit.node, list(hit.loops())
    kinds = loop_iter_types(sch, block)
    if REDUCE not in kinds:
        return None
    last_reduce = max(n for n, kind in enumerate(kinds) if kind == REDUCE)
    inner = loops[last_reduce + 1:]
    if not inner or any(kind != SPATIAL for kind in kinds[last_reduce + 1:]):
        return None
    stmt = realize.block
    analyzer = Analyzer()
    for read_index in vector_operand_reads(stmt):
        region = stmt.reads[read_index]
        width = _contiguous_width(inner, access_strides(realize, inner, region, analyzer))
        extent = region.buffer.shape[-1]
        if width is None or width < 2 or not hasattr(extent, "value") \
                or extent.value % width or extent.value == width:
            continue
        work = 1
        for loop in loops:
            work *= loop.extent.value if hasattr(loop.extent, "value") else 1
        return read_index, len(region.region) - 1, width, work
    return None


def _contiguous_width(loops, strides):
    """Product of the extents of the loops that step the operand, when their strides
    are 1, e1, e1 * e2, ... (one contiguous run); else None."""
    if None in strides:
        return None
    stepping = sorted(((s, loop) for s, loop in zip(strides, loops) if s != 0),
                      key=lambda pair: pair[0])
    if not stepping:
        return None
    width = 1
    for stride, loop in stepping:
        extent = loop.extent.value if hasattr(loop.extent, "value") else None
        if extent is None or stride != width:
            return None
        width *= extent
    return width

