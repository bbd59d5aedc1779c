"""Schedule methods for lookup, loop transformations and annotations.

Each method resolves its handles, calls the pure primitive, then commits the new
function together with one trace instruction.
"""
from __future__ import annotations

import numbers

from ...ir.errors import ScheduleError
from ..stmt import ForKind
from .ir_utils import child_block_realizes, find_block
from .primitives import annotate as ann_prims
from .primitives import loops as loop_prims
from .trace import BlockRV, LoopRV


def _buffers(regions) -> set:
    return {id(r.buffer) for r in regions}


class LookupMixin:
    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The handle of the block called ``name``."""
        func_name = func_name or self.state.default_func()
        find_block(self.state.func(func_name, "get_block"), name, "get_block")
        rv = self.state.new_block_rv(func_name, name)
        self.state.commit(func_name, None, "get_block", attrs=(("name", name),
                          ("func_name", func_name)), outputs=(rv,))
        return rv

    def _as_block_rv(self, block):
        return self.get_block(block) if isinstance(block, str) else block

    def get_loops(self, block) -> list:
        """Handles of the loops above ``block`` (outermost first) up to its scope block."""
        block = self._as_block_rv(block)
        func_name, hit = self.state.block(block, "get_loops")
        outs = [self.state.new_loop_rv(func_name, loop.loop_var) for loop in hit.loops()]
        self.state.commit(func_name, None, "get_loops", inputs=(("block", block),), outputs=outs)
        return outs

    def get_child_blocks(self, block_or_loop) -> list:
        """Blocks directly below a block or a loop (not those nested in them)."""
        if isinstance(block_or_loop, LoopRV):
            func_name, _ = self.state.loop(block_or_loop, "get_child_blocks")
            root = self.state.loop_node(block_or_loop, "get_child_blocks")
        else:
            block_or_loop = self._as_block_rv(block_or_loop)
            func_name, hit = self.state.block(block_or_loop, "get_child_blocks")
            root = hit.node
        names = [r.block.name_hint for r in child_block_realizes(root)]
        return self._record_blocks("get_child_blocks", func_name, block_or_loop, names,
                                   "block_or_loop")

    def _record_blocks(self, kind, func_name, source, names, arg="block"):
        outs = [self.state.new_block_rv(func_name, n) for n in names]
        self.state.commit(func_name, None, kind, inputs=((arg, source),), outputs=outs)
        return outs

    def _siblings(self, block, primitive):
        block = self._as_block_rv(block)
        func_name, hit = self.state.block(block, primitive)
        scope = hit.scope_block()
        others = [r.block for r in child_block_realizes(scope.body) if r is not hit.node]
        return block, func_name, hit.node.block, others

    def get_producers(self, block) -> list:
        """Blocks of the same scope that write a buffer ``block`` reads."""
        block, func_name, me, others = self._siblings(block, "get_producers")
        names = [b.name_hint for b in others if _buffers(b.writes) & _buffers(me.reads)]
        return self._record_blocks("get_producers", func_name, block, names)

    def get_consumers(self, block) -> list:
        """Blocks of the same scope that read a buffer ``block`` writes."""
        block, func_name, me, others = self._siblings(block, "get_consumers")
        names = [b.name_hint for b in others if _buffers(b.reads) & _buffers(me.writes)]
        return self._record_blocks("get_consumers", func_name, block, names)


class LoopMixin:
    def split(self, loop, factors, preserve_unit_iters: bool = True) -> list:
        """Split ``loop`` by ``factors`` (one may be None); returns the new loops.
        ``preserve_unit_iters=False`` leaves loops of extent 1 out of block bindings."""
        func_name, var = self.state.loop(loop, "split")
        if not isinstance(factors, (list, tuple)):
            raise ScheduleError(f"split: argument 'factors': expected a list of positive "
                                f"integers or None, found {type(factors).__name__} {factors!r}")
        values = [self.state.value(f, "split") for f in factors]
        new_func, new_vars = loop_prims.split(self.state.func(func_name), var, values,
                                              preserve_unit_iters)
        outs = [self.state.new_loop_rv(func_name, v) for v in new_vars]
        # numpy integers are recorded as ints so the trace prints and serializes plainly
        recorded = [int(f) if isinstance(f, numbers.Integral) else f for f in factors]
        self.state.commit(func_name, new_func, "split",
                          inputs=(("loop", loop), ("factors", recorded)),
                          attrs=(("preserve_unit_iters", preserve_unit_iters),), outputs=outs)
        return outs

    def fuse(self, *loops, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse perfectly nested loops into one. ``preserve_unit_iters=False`` leaves loops
        of extent 1 out of block bindings."""
        if len(loops) == 1 and isinstance(loops[0], (list, tuple)):
            loops = tuple(loops[0])
        resolved = [self.state.loop(lp, "fuse") for lp in loops]
        func_name = resolved[0][0]
        new_func, var = loop_prims.fuse(self.state.func(func_name), [v for _, v in resolved],
                                        preserve_unit_iters)
        out = self.state.new_loop_rv(func_name, var)
        self.state.commit(func_name, new_func, "fuse", inputs=(("*loops", list(loops)),),
                          attrs=(("preserve_unit_iters", preserve_unit_iters),), outputs=(out,))
        return out

    def reorder(self, *loops) -> None:
        """Reorder loops of one perfect nesting chain into the given order."""
        if len(loops) == 1 and isinstance(loops[0], (list, tuple)):
            loops = tuple(loops[0])
        resolved = [self.state.loop(lp, "reorder") for lp in loops]
        func_name = resolved[0][0]
        new_func = loop_prims.reorder(self.state.func(func_name), [v for _, v in resolved])
        self.state.commit(func_name, new_func, "reorder", inputs=(("*loops", list(loops)),))

    def add_unit_loop(self, block_or_loop) -> LoopRV:
        """Put a loop of extent 1 above a block or a loop."""
        if isinstance(block_or_loop, LoopRV):
            func_name, var = self.state.loop(block_or_loop, "add_unit_loop")
            new_func, unit = loop_prims.add_unit_loop(self.state.func(func_name), loop_var=var)
        else:
            block_or_loop = self._as_block_rv(block_or_loop)
            func_name, hit = self.state.block(block_or_loop, "add_unit_loop")
            new_func, unit = loop_prims.add_unit_loop(self.state.func(func_name),
                                                      block_name=hit.node.block.name_hint)
        out = self.state.new_loop_rv(func_name, unit)
        self.state.commit(func_name, new_func, "add_unit_loop",
                          inputs=(("block_or_loop", block_or_loop),), outputs=(out,))
        return out


class AnnotateMixin:
    def _set_kind(self, loop, kind: ForKind, primitive: str) -> None:
        func_name, var = self.state.loop(loop, primitive)
        new_func = ann_prims.set_loop_kind(self.state.func(func_name), var, kind, primitive)
        self.state.commit(func_name, new_func, primitive, inputs=(("loop", loop),))

    def parallel(self, loop) -> None:
        """Run the iterations of ``loop`` on several threads."""
        self._set_kind(loop, ForKind.PARALLEL, "parallel")

    def vectorize(self, loop) -> None:
        """Turn ``loop`` into vector instructions."""
        self._set_kind(loop, ForKind.VECTORIZED, "vectorize")

    def unroll(self, loop) -> None:
        """Unroll ``loop`` completely when lowering."""
        self._set_kind(loop, ForKind.UNROLLED, "unroll")

    def bind(self, loop, thread_axis: str) -> None:
        """Bind ``loop`` to a GPU thread axis such as ``"threadIdx.x"``."""
        func_name, var = self.state.loop(loop, "bind")
        new_func = ann_prims.bind(self.state.func(func_name), var, thread_axis)
        self.state.commit(func_name, new_func, "bind", inputs=(("loop", loop),),
                          attrs=(("thread_axis", thread_axis),))

    def _annotation_target(self, block_or_loop, primitive):
        if isinstance(block_or_loop, LoopRV):
            func_name, var = self.state.loop(block_or_loop, primitive)
            return func_name, {"loop_var": var}
        func_name, hit = self.state.block(block_or_loop, primitive)
        return func_name, {"block_name": hit.node.block.name_hint}

    def annotate(self, block_or_loop, ann_key: str, ann_val) -> None:
        """Attach ``ann_key: ann_val`` to a block or loop."""
        func_name, where = self._annotation_target(block_or_loop, "annotate")
        value = self.state.value(ann_val, "annotate")
        new_func = ann_prims.annotate(self.state.func(func_name), ann_key, value, **where)
        self.state.commit(func_name, new_func, "annotate",
                          inputs=(("block_or_loop", block_or_loop),),
                          attrs=(("ann_key", ann_key), ("ann_val", ann_val)))

    def unannotate(self, block_or_loop, ann_key: str) -> None:
        """Remove the annotation ``ann_key`` from a block or loop."""
        func_name, where = self._annotation_target(block_or_loop, "unannotate")
        new_func = ann_prims.unannotate(self.state.func(func_name), ann_key, **where)
        self.state.commit(func_name, new_func, "unannotate",
                          inputs=(("block_or_loop", block_or_loop),),
                          attrs=(("ann_key", ann_key),))
