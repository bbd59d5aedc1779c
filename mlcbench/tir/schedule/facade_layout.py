"""Schedule methods that change buffers (layout, scope, alignment), rfactor, blockize
and tensorize."""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ..tensor_intrin import TensorIntrin
from .primitives import blockize as blockize_prims, block_layout, layout, rfactor as rfactor_prims
from .primitives import tensorize as tensorize_prims
from .primitives.index_map import as_index_map
from .primitives.layout import pick_buffer
from .trace import LoopRV


class LayoutMixin:
    def transform_layout(self, block, buffer, index_map, pad_value=None,
                         assume_injective_transform: bool = False) -> None:
        """Re-lay out a buffer of ``block`` in the whole function.

        ``buffer`` is ``("read", i)``, ``("write", i)`` or a buffer name; ``index_map``
        a lambda such as ``lambda i, j: (i // 32, j, i % 32)``. A parameter buffer may be
        transformed: the function then takes it in the new shape. ``pad_value`` is not
        supported (the map must cover the buffer exactly)."""
        block = self._as_block_rv(block)
        func_name, hit = self.state.block(block, "transform_layout")
        if pad_value is not None:
            raise ScheduleError("transform_layout: pad_value is not supported; choose an "
                                "index map whose extents divide the buffer's shape")
        func = self.state.func(func_name)
        target = pick_buffer(func, "transform_layout", hit.node.block, buffer)
        imap = as_index_map(index_map, target.ndim)
        name = hit.node.block.name_hint
        new_func = layout.transform_layout(func, name, buffer, imap)
        buffer_arg = list(buffer) if isinstance(buffer, tuple) else buffer
        self.state.commit(func_name, new_func, "transform_layout", inputs=(("block", block),),
                          attrs=(("buffer", buffer_arg), ("index_map", imap)))

    def transform_block_layout(self, block, index_map) -> None:
        """Give ``block`` new iterators, ``index_map`` of its old ones, and a loop for
        each: ``lambda n, f, y, x, rc: (n, f, y * 28 + x, rc)`` fuses the pixel iterators
        of a convolution into one. The map may reorder iterators and fuse iterators of
        one kind; the block must be alone under loops bound one to one to its iterators
        (as TVM requires)."""
        block = self._as_block_rv(block)
        func_name, hit = self.state.block(block, "transform_block_layout")
        imap = as_index_map(index_map, len(hit.node.block.iter_vars))
        new_func = block_layout.transform_block_layout(self.state.func(func_name),
                                                       hit.node.block.name_hint, imap)
        self.state.commit(func_name, new_func, "transform_block_layout",
                          inputs=(("block", block),), attrs=(("index_map", imap),))

    def set_scope(self, block, buffer_index: int, storage_scope: str) -> None:
        """Store the ``buffer_index``-th buffer ``block`` writes in ``storage_scope``."""
        block = self._as_block_rv(block)
        func_name, hit = self.state.block(block, "set_scope")
        new_func = layout.set_scope(self.state.func(func_name), hit.node.block.name_hint,
                                    buffer_index, storage_scope)
        self.state.commit(func_name, new_func, "set_scope", inputs=(("block", block),),
                          attrs=(("buffer_index", buffer_index),
                                 ("storage_scope", storage_scope)))

    def storage_align(self, block, buffer_index: int, axis: int, factor: int,
                      offset: int) -> None:
        """Pad the stride of ``axis`` of the written buffer to ``k * factor + offset``
        (recorded as the block annotation ``buffer_dim_align``, honoured by lowering)."""
        block = self._as_block_rv(block)
        func_name, hit = self.state.block(block, "storage_align")
        new_func = layout.storage_align(self.state.func(func_name), hit.node.block.name_hint,
                                        buffer_index, axis, factor, offset)
        self.state.commit(func_name, new_func, "storage_align", inputs=(("block", block),),
                          attrs=(("buffer_index", buffer_index), ("axis", axis),
                                 ("factor", factor), ("offset", offset)))

    def rfactor(self, loop, factor_axis: int):
        """Factor the reduction over ``loop`` into block ``<name>_rf`` writing a buffer
        with one more dimension (at ``factor_axis``), then reduce that buffer in the
        original block. Returns the handle of the ``_rf`` block."""
        func_name, var = self.state.loop(loop, "rfactor")
        new_func, rf_name = rfactor_prims.rfactor(self.state.func(func_name), var, factor_axis)
        out = self.state.new_block_rv(func_name, rf_name)
        self.state.commit(func_name, new_func, "rfactor", inputs=(("loop", loop),),
                          attrs=(("factor_axis", factor_axis),), outputs=(out,))
        return out

    def blockize(self, target, preserve_unit_iters: bool = True):
        """Wrap the loop nest at loop ``target`` into block ``<name>_o``; returns it.
        ``preserve_unit_iters=False`` leaves loops of extent 1 out of block bindings."""
        func_name, var = self.state.loop(target, "blockize")
        new_func, name = blockize_prims.blockize(self.state.func(func_name), var,
                                                 preserve_unit_iters)
        out = self.state.new_block_rv(func_name, name)
        self.state.commit(func_name, new_func, "blockize", inputs=(("target", target),),
                          attrs=(("preserve_unit_iters", preserve_unit_iters),), outputs=(out,))
        return out

    def tensorize(self, block_or_loop, tensor_intrin: str,
                  preserve_unit_iters: bool = True) -> None:
        """Replace a block (or the loop nest at a loop, blockized first) by the
        registered intrinsic ``tensor_intrin`` (see ``TensorIntrin.register``);
        ``preserve_unit_iters`` is passed on to the blockize of a loop."""
        intrin = TensorIntrin.get(tensor_intrin)
        if isinstance(block_or_loop, LoopRV):
            func_name, var = self.state.loop(block_or_loop, "tensorize")
            func, name = blockize_prims.blockize(self.state.func(func_name), var,
                                                 preserve_unit_iters)
        else:
            block = self._as_block_rv(block_or_loop)
            block_or_loop = block
            func_name, hit = self.state.block(block, "tensorize")
            func, name = self.state.func(func_name), hit.node.block.name_hint
        new_func = tensorize_prims.tensorize(func, name, intrin, tensor_intrin)
        self.state.commit(func_name, new_func, "tensorize",
                          inputs=(("block_or_loop", block_or_loop),),
                          attrs=(("tensor_intrin", tensor_intrin),
                                 ("preserve_unit_iters", preserve_unit_iters)))
