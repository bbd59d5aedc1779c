"""Schedule methods that move, inline or decompose blocks."""
from __future__ import annotations

from .primitives import cache, compute_location, inline, reduction
from .trace import LoopRV


class ComputeLocationMixin:
    def _block_and_loop(self, block, loop, primitive):
        block = self._as_block_rv(block)
        func_name, hit = self.state.block(block, primitive)
        loop_func, var = self.state.loop(loop, primitive)
        return block, func_name, hit.node.block.name_hint, var

    def compute_at(self, block, loop: LoopRV, preserve_unit_loops: bool = False,
                   index: int = -1) -> None:
        """Compute producer ``block`` inside ``loop``, just the region its consumers use.

        ``index`` places it among the statements in ``loop``, as in TVM: -1 (default)
        the last position it may take (before its first consumer there), -2 the first
        (after the last statement writing what it reads), n >= 0 position n.
        ``loop`` may be a location drawn by ``sample_compute_location``: its "root"
        leaves the block in place, its "inline" inlines the block."""
        attrs = (("preserve_unit_loops", preserve_unit_loops), ("index", index))
        where = self.state.location(loop)
        if where is not None:
            block = self._as_block_rv(block)
            func_name, hit = self.state.block(block, "compute_at")
            new_func = None
            if where == "inline":
                new_func = inline.compute_inline(self.state.func(func_name),
                                                 hit.node.block.name_hint)
            self.state.commit(func_name, new_func, "compute_at",
                              inputs=(("block", block), ("loop", loop)), attrs=attrs)
            return
        block, func_name, name, var = self._block_and_loop(block, loop, "compute_at")
        new_func = compute_location.compute_at(self.state.func(func_name), name, var,
                                               preserve_unit_loops, index)
        self.state.commit(func_name, new_func, "compute_at",
                          inputs=(("block", block), ("loop", loop)), attrs=attrs)

    def reverse_compute_at(self, block, loop: LoopRV, preserve_unit_loops: bool = False,
                           index: int = -1) -> None:
        """Compute consumer ``block`` inside ``loop``, right after what it reads is made.
        ``index`` places it as in ``compute_at``: -1 (default) the last position it may
        take, -2 the first (right after the last producer there), n >= 0 position n."""
        block, func_name, name, var = self._block_and_loop(block, loop, "reverse_compute_at")
        new_func = compute_location.reverse_compute_at(self.state.func(func_name), name, var,
                                                       preserve_unit_loops, index)
        self.state.commit(func_name, new_func, "reverse_compute_at",
                          inputs=(("block", block), ("loop", loop)),
                          attrs=(("preserve_unit_loops", preserve_unit_loops), ("index", index)))

    def decompose_reduction(self, block, loop: LoopRV):
        """Move the init of reduction ``block`` into block ``<name>_init`` before ``loop``;
        the handle then names ``<name>_update``. Returns the init block's handle."""
        block, func_name, name, var = self._block_and_loop(block, loop, "decompose_reduction")
        new_func = reduction.decompose_reduction(self.state.func(func_name), name, var)
        init_rv = self.state.new_block_rv(func_name, f"{name}_init")
        self.state.commit(func_name, new_func, "decompose_reduction",
                          inputs=(("block", block), ("loop", loop)), outputs=(init_rv,))
        self.state.rename_block(func_name, name, f"{name}_update")
        return init_rv


    def compute_inline(self, block) -> None:
        """Inline elementwise ``block`` into its consumers and drop its buffer."""
        self._inline(block, "compute_inline", inline.compute_inline)

    def reverse_compute_inline(self, block) -> None:
        """Inline elementwise consumer ``block`` into its producer."""
        self._inline(block, "reverse_compute_inline", inline.reverse_compute_inline)

    def _inline(self, block, primitive, fn) -> None:
        block = self._as_block_rv(block)
        func_name, hit = self.state.block(block, primitive)
        new_func = fn(self.state.func(func_name), hit.node.block.name_hint)
        self.state.commit(func_name, new_func, primitive, inputs=(("block", block),))

    def cache_read(self, block, read_buffer_index, storage_scope: str, consumer_blocks=None):
        """Stage a buffer the block reads through a copy in ``storage_scope``; returns the
        copy block. ``read_buffer_index`` is a position in the block's reads or a name.

        A parameter is copied whole at the start of the scope (then ``compute_at`` the
        copy, e.g. ``compute_at(A_shared, k0)``); a buffer made by a block is copied right
        after it, under the lowest loop holding it and its readers."""
        return self._cache(block, read_buffer_index, storage_scope, consumer_blocks,
                           "cache_read", cache.cache_read)

    def cache_write(self, block, write_buffer_index, storage_scope: str,
                    consumer_blocks=None):
        """Make the block write a ``storage_scope`` copy, copied back afterwards; returns
        the copy-back block: at the end of the scope when nothing reads the buffer (then
        ``reverse_compute_at(C_local, j0)``), else right after the block under the lowest
        loop holding it and its readers. ``consumer_blocks`` read the copy directly."""
        return self._cache(block, write_buffer_index, storage_scope, consumer_blocks,
                           "cache_write", cache.cache_write)

    def _cache(self, block, index, scope, consumer_blocks, primitive, fn):
        block = self._as_block_rv(block)
        func_name, hit = self.state.block(block, primitive)
        consumers = None
        if consumer_blocks is not None:
            consumers = [self.state.block(b, primitive)[1].node.block.name_hint
                         for b in consumer_blocks]
        new_func, name = fn(self.state.func(func_name), hit.node.block.name_hint, index, scope,
                            consumers)
        out = self.state.new_block_rv(func_name, name)
        arg = "read_buffer_index" if primitive == "cache_read" else "write_buffer_index"
        inputs = (("block", block),) + ((("consumer_blocks", list(consumer_blocks)),)
                                        if consumer_blocks is not None else ())
        self.state.commit(func_name, new_func, primitive, inputs=inputs,
                          attrs=((arg, index), ("storage_scope", scope)), outputs=(out,))
        return out
