"""What the rules look at: the blocks under the root, their iteration kinds and accesses.

``block_infos(sch)`` lists every block of ``"main"`` in program order, e.g. for dense::

    [BlockInfo(name="T_matmul_NT", kinds="SSR", ...)]

A block is *injective* when all its iterators are spatial and it has no init (pads,
broadcasts, casts, relu); a *reduction* block has at least one reduce iterator.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..tir.expr import Add, BufferLoad, Cast, Mul, Var
from ..tir.functor import post_order_visit
from ..tir.stmt import Block, BlockRealize, BufferStore, IterType


@dataclass
class BlockInfo:
    """A block with its handle, its iterator kinds ("S"/"R"/"O") and its realize."""
    name: str
    rv: object
    block: Block
    realize: BlockRealize

    @property
    def kinds(self) -> str:
        letter = {IterType.DATA_PAR: "S", IterType.COMM_REDUCE: "R"}
        return "".join(letter.get(iv.iter_type, "O") for iv in self.block.iter_vars)

    @property
    def is_injective(self) -> bool:
        return set(self.kinds) <= {"S"} and self.block.init is None

    @property
    def is_reduction(self) -> bool:
        return "R" in self.kinds and set(self.kinds) <= {"S", "R"}

    @property
    def store(self):
        return self.block.body if isinstance(self.block.body, BufferStore) else None


def block_infos(sch) -> list[BlockInfo]:
    """Every block of ``sch``'s main function except the root, in program order."""
    found = []

    def collect(node):
        if isinstance(node, BlockRealize) and node.block.name_hint != "root":
            found.append(node)

    post_order_visit(sch.mod["main"].body, collect)
    return [BlockInfo(r.block.name_hint, sch.get_block(r.block.name_hint), r.block, r)
            for r in found]


def total_extent(sch, loops) -> int:
    """Product of the extents of ``loops`` (None when one is symbolic)."""
    out = 1
    for loop in loops:
        extent = sch.get(loop).extent
        if not hasattr(extent, "value"):
            return None
        out *= int(extent.value)
    return out


def iter_vars_of(expr) -> set:
    """Variables appearing anywhere in ``expr``."""
    out = set()
    post_order_visit(expr, lambda n: out.add(n) if isinstance(n, Var) else None)
    return out


def _strip_cast(expr):
    return expr.value if isinstance(expr, Cast) else expr


def multiply_accumulate(info: BlockInfo):
    """``(A_load, B_load)`` when the block's update is ``C[..] = C[..] + A[..] * B[..]``."""
    store = info.store
    if store is None or not info.is_reduction or not isinstance(store.value, Add):
        return None
    acc, product = store.value.a, _strip_cast(store.value.b)
    if not (isinstance(acc, BufferLoad) and acc.buffer is store.buffer):
        return None
    if not isinstance(product, Mul):
        return None
    lhs, rhs = _strip_cast(product.a), _strip_cast(product.b)
    if isinstance(lhs, BufferLoad) and isinstance(rhs, BufferLoad):
        return lhs, rhs
    return None
