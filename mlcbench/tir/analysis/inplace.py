"""Whether a kernel may write its output into the memory of one of its inputs.

Memory planning may let ``relu(x, out)`` put ``out`` in the storage of ``x`` when ``x``
dies at that call. That is safe only when every element of the input is read before
the same element of the output is written, and never after. The rule checked here is
deliberately narrow, so that it can be argued in a few lines:

* the input and the output are two buffer parameters of the same dtype and shape, in
  the default dense layout;
* exactly one block touches either of them (any load or store, in any block, including
  the root); it has no ``init``, no predicate, only spatial iteration variables, each
  bound to a distinct enclosing loop (every such loop binds one), so each block
  instance runs once;
* its body is one store to the output, indexed by the block variables, each once (so
  instances write distinct elements);
* it never loads the output, and loads the input only at the store's indices.

Then instance ``v`` reads ``input[v]`` and writes ``output[v]`` and touches nothing else
of either, whatever order the instances run in. Accepted: ``relu``, bias ``add`` (the
bias is another buffer). Refused: transpose, an input broadcast along the output,
matmul, pooling, softmax, a stencil::

    @T.prim_func
    def relu(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        for i, j in T.grid(4, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.max(A[vi, vj], T.float32(0))

    can_write_in_place(relu, 0, 1)      # True
"""
from __future__ import annotations

from ..expr import BufferLoad, IntImm
from ..function import PrimFunc
from ..functor import StmtExprVisitor, pre_order_visit
from ..stmt import BufferStore, IterType


def can_write_in_place(func: PrimFunc, input_index: int, output_index: int) -> bool:
    """True when parameter ``output_index`` may share memory with ``input_index``."""
    source = _param_buffer(func, input_index)
    target = _param_buffer(func, output_index)
    if source is None or target is None or source.data is target.data:
        return False
    if not (_dense(source) and _dense(target) and source.dtype == target.dtype
            and _shape(source) == _shape(target)):
        return False
    finder = _BlocksTouching({id(source.data), id(target.data)})
    finder.visit(func.body)
    if len(finder.touching) != 1:
        return False
    realize, loops = next(iter(finder.touching.values()))
    return _pointwise_block(realize, loops, source, target)


def _param_buffer(func: PrimFunc, index: int):
    if not 0 <= index < len(func.params):
        return None
    return func.buffer_map.get(func.params[index])


def _dense(buffer) -> bool:
    offset = buffer.elem_offset
    return (not buffer.strides and not buffer.axis_separators and buffer.scope == "global"
            and isinstance(offset, IntImm) and offset.value == 0)


def _shape(buffer):
    """The constant shape as ints, or None (symbolic shapes are refused)."""
    if not all(isinstance(extent, IntImm) for extent in buffer.shape):
        return None
    return tuple(extent.value for extent in buffer.shape)


class _BlocksTouching(StmtExprVisitor):
    """``touching``: {id(block realize): (realize, the loops between it and its parent
    block)} for every block whose own statements load or store one of ``data_vars``."""

    def __init__(self, data_vars: set):
        self.data_vars = data_vars
        self.touching: dict = {}
        self.realize = None
        self.loops: list = []

    def visit_For(self, op):
        self.loops.append(op)
        self.generic_visit(op)
        self.loops.pop()

    def visit_BlockRealize(self, op):
        outer = self.realize, self.loops
        self.realize, self.loops = (op, tuple(self.loops)), []
        self.generic_visit(op)
        self.realize, self.loops = outer

    def visit_BufferLoad(self, op):
        self._note(op.buffer)
        self.generic_visit(op)

    def visit_BufferStore(self, op):
        self._note(op.buffer)
        self.generic_visit(op)

    def _note(self, buffer):
        if id(buffer.data) in self.data_vars:
            # An access outside any block has no realize: key None, never pointwise.
            key = id(self.realize[0]) if self.realize else None
            self.touching[key] = self.realize or (None, ())


def _pointwise_block(realize, loops, source, target) -> bool:
    if realize is None:
        return False
    block = realize.block
    store = block.body
    if (block.init is not None or block.match_buffers or not _is_true(realize.predicate)
            or not isinstance(store, BufferStore) or store.buffer.data is not target.data):
        return False
    block_vars = [iv.var for iv in block.iter_vars]
    if any(iv.iter_type != IterType.DATA_PAR for iv in block.iter_vars):
        return False
    if not (_each_once(store.indices, block_vars) and _each_once(realize.iter_values,
                                                                [f.loop_var for f in loops])):
        return False
    return _loads_only_the_stored_element(store, source, target)


def _is_true(expr) -> bool:
    return isinstance(expr, IntImm) and expr.value == 1


def _each_once(exprs, variables) -> bool:
    """``exprs`` are exactly ``variables``, each once, in any order."""
    if len(exprs) != len(variables):
        return False
    ids = {id(v) for v in variables}
    return len(ids) == len(variables) and {id(e) for e in exprs} == ids


def _loads_only_the_stored_element(store: BufferStore, source, target) -> bool:
    ok = [True]

    def check(node):
        if isinstance(node, BufferLoad):
            if node.buffer.data is target.data:
                ok[0] = False
            elif node.buffer.data is source.data and not (
                    len(node.indices) == len(store.indices)
                    and all(a is b for a, b in zip(node.indices, store.indices))):
                ok[0] = False

    pre_order_visit(store.value, check)
    return ok[0]


__all__ = ["can_write_in_place"]
