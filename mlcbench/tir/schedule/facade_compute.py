"""Schedule methods that move, inline or decompose blocks."""
from __future__ import annotations

from .primitives import compute_location, inline, reduction
from .trace import LoopRV


class ComputeLocationMixin:
    def _block_and_loop(self, block, loop, primitive):
        block = self._as_block_rv(block)
        func_name, hit = self._block(block, primitive)
        loop_func, var = self._loop(loop, primitive)
        return block, func_name, hit.node.block.name_hint, var

    def compute_at(self, block, loop: LoopRV, preserve_unit_loops: bool = False,
                   index: int = -1) -> None:
        """Compute producer ``block`` inside ``loop``, just the region its consumers use."""
        block, func_name, name, var = self._block_and_loop(block, loop, "compute_at")
        new_func = compute_location.compute_at(self._mod[func_name], name, var,
                                               preserve_unit_loops)
        self._commit(func_name, new_func, "compute_at", inputs=(("block", block), ("loop", loop)),
                     attrs=(("preserve_unit_loops", preserve_unit_loops), ("index", index)))

    def reverse_compute_at(self, block, loop: LoopRV, preserve_unit_loops: bool = False,
                           index: int = -1) -> None:
        """Compute consumer ``block`` inside ``loop``, right after what it reads is made."""
        block, func_name, name, var = self._block_and_loop(block, loop, "reverse_compute_at")
        new_func = compute_location.reverse_compute_at(self._mod[func_name], name, var,
                                                       preserve_unit_loops)
        self._commit(func_name, new_func, "reverse_compute_at",
                     inputs=(("block", block), ("loop", loop)),
                     attrs=(("preserve_unit_loops", preserve_unit_loops), ("index", index)))

    def decompose_reduction(self, block, loop: LoopRV):
        """Move the init of reduction ``block`` into block ``<name>_init`` before ``loop``;
        the handle then names ``<name>_update``. Returns the init block's handle."""
        block, func_name, name, var = self._block_and_loop(block, loop, "decompose_reduction")
        new_func = reduction.decompose_reduction(self._mod[func_name], name, var)
        init_rv = self._new_block_rv(func_name, f"{name}_init")
        for rv, entry in list(self._rvs.items()):
            if entry == ("block", func_name, name):
                self._rvs[rv] = ("block", func_name, f"{name}_update")
        self._commit(func_name, new_func, "decompose_reduction",
                     inputs=(("block", block), ("loop", loop)), outputs=(init_rv,))
        return init_rv


    def compute_inline(self, block) -> None:
        """Inline elementwise ``block`` into its consumers and drop its buffer."""
        self._inline(block, "compute_inline", inline.compute_inline)

    def reverse_compute_inline(self, block) -> None:
        """Inline elementwise consumer ``block`` into its producer."""
        self._inline(block, "reverse_compute_inline", inline.reverse_compute_inline)

    def _inline(self, block, primitive, fn) -> None:
        block = self._as_block_rv(block)
        func_name, hit = self._block(block, primitive)
        new_func = fn(self._mod[func_name], hit.node.block.name_hint)
        self._commit(func_name, new_func, primitive, inputs=(("block", block),))
