"""From tensor expressions to a TensorIR PrimFunc, the way TVM's ``create_prim_func`` does.

Every compute op becomes one loop nest with one block named after the op::

    for i, j, k in T.grid(4, 5, 6):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]

Loops take the axis names (the ``lambda``'s arguments), block variables the same
names with ``v_``. Tensors listed in ``args`` become the parameters in that order;
computed tensors that are not listed become ``T.alloc_buffer``s of the root block.
"""
from __future__ import annotations

from ..arith import Analyzer
from ..ir.errors import IRError
from ..tir.analysis import get_block_read_write_region
from ..tir.expr import BufferLoad, IntImm, Var, const
from ..tir.function import PrimFunc
from ..tir.functor import StmtExprMutator, substitute
from ..tir.stmt import (Block, BlockRealize, BufferStore, For, ForKind, IfThenElse, IterVar,
                        LetStmt, seq)
from .reduction import Reduce
from .tensor import ComputeOp, PlaceholderOp, Tensor


def create_prim_func(ops, index_dtype_override=None) -> PrimFunc:
    """A PrimFunc computing the tensors in ``ops`` from the placeholders in ``ops``.

    ``ops`` lists tensors (inputs and outputs, in parameter order) and optionally scalar
    ``Var`` parameters. Attributes are ``{"global_symbol": "main", "tir.noalias": True}``.

    >>> func = te.create_prim_func([A, B, C])
    >>> mlcbench.build(func, target="llvm")
    """
    args = list(ops)
    tensors = [a for a in args if isinstance(a, Tensor)]
    listed = {t.buffer for t in tensors}
    order = _topological_order(tensors)
    for op in order:
        if isinstance(op, PlaceholderOp) and op.output(0).buffer not in listed:
            raise IRError(f"create_prim_func: placeholder {op.name!r} is read by the "
                          "computation but is not among the arguments; list it")
    params, buffer_map = [], {}
    for arg in args:
        if isinstance(arg, Tensor):
            handle = Var(arg.name, "handle")
            params.append(handle)
            buffer_map[handle] = arg.buffer
        elif isinstance(arg, Var):
            params.append(arg)
        else:
            raise IRError(f"create_prim_func: arguments are te tensors or tir.Var, "
                          f"found {type(arg).__name__}: {arg!r}")
    computes = [op for op in order if isinstance(op, ComputeOp)]
    allocated = [t.buffer for op in computes for t in op.outputs if t.buffer not in listed]
    names = _unique_block_names(computes)
    nests = [_loop_nest(op, name) for op, name in zip(computes, names)]
    root = Block((), (), (), "root", seq(*nests), alloc_buffers=tuple(allocated))
    body = BlockRealize((), const(True), root)
    return PrimFunc(params, body, buffer_map,
                    attrs={"global_symbol": "main", "tir.noalias": True})


def _topological_order(outputs) -> list:
    """Ops that ``outputs`` depend on, producers before consumers."""
    order, seen = [], set()

    def visit(op):
        stack = [(op, iter(op.input_tensors))]
        seen.add(id(op))
        while stack:
            current, inputs = stack[-1]
            nxt = next(inputs, None)
            if nxt is None:
                stack.pop()
                order.append(current)
            elif id(nxt.op) not in seen:
                seen.add(id(nxt.op))
                stack.append((nxt.op, iter(nxt.op.input_tensors)))

    for tensor in outputs:
        if id(tensor.op) not in seen:
            visit(tensor.op)
    return order


def _unique_block_names(ops) -> list:
    names, used = [], {}
    for op in ops:
        count = used.get(op.name, 0)
        names.append(op.name if count == 0 else f"{op.name}_{count}")
        used[op.name] = count + 1
    return names


class _SimplifyIndices(StmtExprMutator):
    """Fold ``yy * 1 + ry * 1`` into ``yy + ry`` inside buffer indices."""

    def __init__(self, analyzer: Analyzer):
        self.analyzer = analyzer

    def visit_BufferLoad(self, op: BufferLoad):
        indices = tuple(self.analyzer.simplify(self.visit(i)) for i in op.indices)
        if all(a is b for a, b in zip(indices, op.indices)):
            return op
        return BufferLoad(op.buffer, indices, op.dtype)


def _loop_nest(op: ComputeOp, block_name: str):
    axes = list(op.axis) + list(op.reduce_axis)
    loop_vars = [Var(ax.var.name, ax.var.dtype) for ax in axes]
    block_vars = [Var("v_" + ax.var.name, ax.var.dtype) for ax in axes]
    iter_vars = tuple(IterVar(ax.dom, bv, ax.iter_type) for ax, bv in zip(axes, block_vars))
    vmap = {ax.var: bv for ax, bv in zip(axes, block_vars)}
    simplifier = _SimplifyIndices(Analyzer())

    def rewrite(expr):
        return simplifier.visit(substitute(expr, vmap))

    indices = tuple(block_vars[:len(op.axis)])
    if isinstance(op.body[0], Reduce):
        init, body = _reduction_body(op, indices, rewrite)
    else:
        init = None
        body = seq(*[BufferStore(t.buffer, rewrite(b), indices)
                     for t, b in zip(op.outputs, op.body)])
    block = Block(iter_vars, (), (), block_name, body, init)
    reads, writes = get_block_read_write_region(block)
    block = block.replace(reads=reads, writes=writes)
    stmt = BlockRealize(tuple(loop_vars), const(True), block)
    for ax, loop_var in reversed(list(zip(axes, loop_vars))):
        stmt = For(loop_var, ax.dom.min, ax.dom.extent, ForKind.SERIAL, stmt)
    return stmt


def _reduction_body(op: ComputeOp, indices, rewrite):
    """``(init, update)`` of a reduction block; several outputs update through lets so
    that each combiner result sees the values from before the update (argmax)."""
    first = op.body[0]
    reducer = first.combiner
    buffers = [t.buffer for t in op.outputs]
    init = seq(*[BufferStore(b, v, indices) for b, v in zip(buffers, reducer.identity_element)])
    running = [BufferLoad(b, indices) for b in buffers]
    new = [rewrite(s) for s in first.source]
    combined = reducer.combine(running, new)
    if len(buffers) == 1:
        update = BufferStore(buffers[0], combined[0], indices)
    else:
        temps = [Var(f"v_{b.name}", b.dtype) for b in buffers]
        update = seq(*[BufferStore(b, t, indices) for b, t in zip(buffers, temps)])
        for temp, value in reversed(list(zip(temps, combined))):
            update = LetStmt(temp, value, update)
    condition = rewrite(first.condition)
    if not (isinstance(condition, IntImm) and condition.value == 1):
        update = IfThenElse(condition, update)
    return init, update
