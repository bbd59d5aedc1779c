"""Put a template's scheduled anchor into a fused kernel, in place of the anchor.

The template computes the anchor alone (``data, weight -> out``); the kernel computes
the anchor and its epilogue. The anchor's loop nest (and the ``pad_temp`` nest the
template computes itself) is replaced by the template's scheduled loop nests, with the
template's buffers pointed at the kernel's; the epilogue keeps its own loops and gets
the default CPU treatment (vectorized, parallel when large). The epilogue thus reads the
anchor's result back from memory once instead of being computed inside the register
tile: one extra pass over the output, small next to the reduction::

    T_matmul_NN (naive loops)      ->   packed_weight, T_dense_pack (tuned loops)
    T_add, compute (naive loops)   ->   T_add, compute (vectorized)
"""
from __future__ import annotations

from ...dlight.cpu.common import schedule_remaining_blocks
from ...tir.function import PrimFunc
from ...tir.functor import StmtExprMutator, post_order_visit
from ...tir.schedule import Schedule
from ...tir.stmt import Block, BlockRealize, SeqStmt, seq
from .match import Anchor


class _Rebind(StmtExprMutator):
    """Every use of a template buffer becomes a use of the kernel's buffer."""

    def __init__(self, buffers: dict):
        self.buffers = buffers

    def visit_Buffer(self, buf):
        return self.buffers.get(buf, buf)


def _root(func: PrimFunc) -> Block:
    assert isinstance(func.body, BlockRealize), "create_prim_func functions have a root block"
    return func.body.block


def _block_names(stmt) -> set:
    names = set()
    post_order_visit(stmt, lambda n: names.add(n.name_hint) if isinstance(n, Block) else None)
    return names


def _writes(stmt) -> set:
    written = set()
    post_order_visit(stmt, lambda n: written.update(w.buffer for w in n.writes)
                     if isinstance(n, Block) else None)
    return written


def splice_anchor(kernel: PrimFunc, anchor: Anchor, scheduled: PrimFunc,
                  lanes: int) -> PrimFunc | None:
    """``kernel`` with ``anchor`` computed by ``scheduled`` (a template's PrimFunc with
    parameters ``(data, weight, out)``), or None when the names of the two clash."""
    root, template_root = _root(kernel), _root(scheduled)
    template_params = [scheduled.buffer_map[p] for p in scheduled.params]
    rebind = _Rebind(dict(zip(template_params, anchor.operands)))
    dropped = set(anchor.replaced) | {anchor.operands[2]}
    kept = [s for s in (root.body.seq if isinstance(root.body, SeqStmt) else [root.body])
            if not (_writes(s) & dropped) and anchor.block_name not in _block_names(s)]
    template_blocks = _block_names(template_root.body)
    allocs = [b for b in root.alloc_buffers if b not in anchor.replaced]
    if template_blocks & _block_names(seq(*kept)) or \
            {b.name for b in template_root.alloc_buffers} & {b.name for b in allocs}:
        return None
    new_root = root.replace(body=seq(rebind.visit(template_root.body), *kept),
                            alloc_buffers=tuple(allocs) + template_root.alloc_buffers)
    func = kernel.replace(body=kernel.body.replace(block=new_root))
    sch = Schedule(func)
    schedule_remaining_blocks(sch, lanes, skip=template_blocks)
    return sch.mod["main"]
