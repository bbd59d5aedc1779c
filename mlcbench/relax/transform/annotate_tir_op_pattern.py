"""AnnotateTIROpPattern: read each PrimFunc's blocks and record how it may be fused.

FuseOps does not look at op names: it looks at the ``"op_pattern"`` attribute of each
PrimFunc a ``call_tir`` calls (TVM's ``OpPatternKind`` values). This pass derives that
attribute from the loads and stores of every block, the way TVM's TIR analysis does:

=================  =====  ==========================================================
kind               value  a block (or the whole function) is this kind when ...
=================  =====  ==========================================================
elemwise           0      every load uses the store's indices (``C[i, j] = A[i, j]``);
                          loads of a broadcast operand alongside keep it elemwise
broadcast          1      loads use the store's indices in order, some left out
                          (``C[i, j] = B[j]``; unit dimensions indexed by 0 skipped)
injective          2      loads use only the store's variables, any arrangement
                          (transpose ``B[j, i]``, reshape ``A[(i * 4 + j) // 3]``,
                          take ``A[i, idx[j]]``)
comm_reduce        3      a reduction whose loads index each reduce axis directly
                          (``sum``, ``max`` over an axis)
out_ewise_fusable  4      a multiply-accumulate reduction (matmul, conv2d), a windowed
                          reduction (pooling), or a reduction followed by an injective
                          block that writes the output (softmax)
opaque             8      anything else (several stores at different indices, no
                          store, a load indexed by a variable the store does not use)
=================  =====  ==========================================================

The function's kind is the largest over its blocks. Example::

    mod = relax.transform.LegalizeOps()(mod)
    mod = relax.transform.AnnotateTIROpPattern()(mod)
    mod["matmul"].attrs["op_pattern"]      # 4: out_ewise_fusable
    mod["add"].attrs["op_pattern"]         # 0: elemwise (bias broadcast alongside)
"""
from __future__ import annotations

from ...ir.module import IRModule
from ...ir.structural import structural_equal
from ...ir.transform import module_pass
from ...tir.expr import Add, BufferLoad, Cast, IntImm, Mul, Var
from ...tir.function import PrimFunc
from ...tir.functor import StmtExprVisitor, pre_order_visit, uses_var
from ...tir.stmt import Block, BufferStore, IterType
from ..op.registry import OpPatternKind

OP_PATTERN_ATTR = "op_pattern"

ELEMWISE, BROADCAST, INJECTIVE = (OpPatternKind.ELEMWISE, OpPatternKind.BROADCAST,
                                  OpPatternKind.INJECTIVE)
COMM_REDUCE, OUT_EWISE_FUSABLE, OPAQUE = (OpPatternKind.COMM_REDUCE,
                                          OpPatternKind.OUT_EWISE_FUSABLE,
                                          OpPatternKind.OPAQUE)


def analyze_op_pattern(func: PrimFunc) -> OpPatternKind:
    """The fusion kind of ``func`` read from its blocks (see the module docstring).

    >>> analyze_op_pattern(mod["matmul"])
    <OpPatternKind.OUT_EWISE_FUSABLE: 4>
    """
    analyzer = _PatternAnalyzer(func)
    analyzer.visit(func.body)
    return analyzer.kind


def AnnotateTIROpPattern():  # noqa: N802 -- TVM's spelling
    """Set ``"op_pattern"`` on every PrimFunc that does not have it yet.

    >>> mod = relax.transform.AnnotateTIROpPattern()(mod)
    >>> mod["relu"].attrs["op_pattern"]
    0
    """
    def transform(mod: IRModule, ctx) -> IRModule:
        updates = {gv: func.with_attr(OP_PATTERN_ATTR, int(analyze_op_pattern(func)))
                   for gv, func in mod.items()
                   if isinstance(func, PrimFunc) and OP_PATTERN_ATTR not in func.attrs}
        if not updates:
            return mod
        out = mod.copy()
        for gv, func in updates.items():
            out[gv] = func
        return out

    return module_pass(transform, opt_level=0, name="AnnotateTIROpPattern")


class _PatternAnalyzer(StmtExprVisitor):
    """Walks the blocks under the root, raising ``kind`` block by block."""

    def __init__(self, func: PrimFunc):
        self.param_buffers = {id(b) for b in func.buffer_map.values()}
        self.kind = ELEMWISE
        self.store: BufferStore | None = None
        self.loads: list[BufferLoad] = []

    def visit_BufferStore(self, op: BufferStore):
        # One store per block (what TE makes); a second one at other indices is opaque.
        if self.store is not None and not _same_indices(op.indices, self.store.indices):
            self.kind = OPAQUE
            return
        self.store = op
        self.generic_visit(op)

    def visit_BufferLoad(self, op: BufferLoad):
        self.loads.append(op)
        self.generic_visit(op)

    def visit_Block(self, block: Block):
        if block.name_hint == "root":
            self.visit(block.body)
            return
        self.store, self.loads = None, []
        self.visit(block.body)          # the init is not looked at, as in TVM
        if self.store is None:
            self.kind = OPAQUE
            return
        self.kind = _combine_block(self.kind, block, self.store, self.loads,
                                   self._writes_output(block))

    def _writes_output(self, block: Block) -> bool:
        return any(id(region.buffer) in self.param_buffers for region in block.writes)


def _combine_block(kind, block, store, loads, writes_output) -> OpPatternKind:
    """The function's kind after one more block."""
    index_kind = _index_pattern(store, loads)
    if index_kind != OPAQUE:
        # A reduction followed by an injective block writing the output (softmax) takes
        # elementwise consumers like matmul does.
        if writes_output and kind == COMM_REDUCE:
            return OUT_EWISE_FUSABLE
        return max(kind, index_kind)
    reduce_vars = [iv.var for iv in block.iter_vars if iv.iter_type == IterType.COMM_REDUCE]
    if not reduce_vars:
        return OPAQUE
    if _is_multiply_accumulate(block.body):
        return max(kind, OUT_EWISE_FUSABLE)
    if not all(_is_pure_reduce(reduce_vars, load.indices) for load in loads):
        return max(kind, OUT_EWISE_FUSABLE)      # windowed reductions: pooling
    return max(kind, COMM_REDUCE)


def _index_pattern(store: BufferStore, loads) -> OpPatternKind:
    """The loosest relation between the store's indices and any load's (OPAQUE if one fits
    none); a broadcast operand next to an elementwise one keeps the block elemwise."""
    kind, has_elemwise = ELEMWISE, False
    for load in loads:
        if _same_indices(store.indices, load.indices):
            has_elemwise = True
        elif _is_broadcast(store, load):
            kind = max(kind, BROADCAST)
        elif _is_injective(store, load):
            kind = max(kind, INJECTIVE)
        else:
            return OPAQUE
    return ELEMWISE if kind == BROADCAST and has_elemwise else kind


def _same_index(a, b) -> bool:
    return a is b or (not isinstance(a, Var) and not isinstance(b, Var)
                      and structural_equal(a, b))


def _same_indices(lhs, rhs) -> bool:
    return len(lhs) == len(rhs) and all(_same_index(a, b) for a, b in zip(lhs, rhs))


def _is_one(expr, value) -> bool:
    return isinstance(expr, IntImm) and expr.value == value


def _is_broadcast(store: BufferStore, load: BufferLoad) -> bool:
    """Every load index appears among the store's indices, in the same order."""
    j, store_indices = 0, store.indices
    for extent, index in zip(load.buffer.shape, load.indices):
        if _is_one(extent, 1) and _is_one(index, 0):
            continue                    # a unit dimension: B[0, j] still broadcasts
        while j < len(store_indices) and not _same_index(store_indices[j], index):
            j += 1
        if j == len(store_indices):
            return False
    return True


def _store_vars(store: BufferStore):
    """The ids of the store's index variables, or None when an index is not a variable."""
    if not all(isinstance(i, Var) for i in store.indices):
        return None
    return {id(i) for i in store.indices}


def _is_injective(store: BufferStore, load: BufferLoad) -> bool:
    """The load's indices use only variables that index the store."""
    variables = _store_vars(store)
    return variables is not None and not any(
        uses_var(index, lambda v: id(v) not in variables) for index in load.indices)


def _allows_reuse(store: BufferStore, load: BufferLoad) -> bool:
    """Some store variable is missing from the load's indices: the operand is reused
    across that output axis (``A[i, k]`` for ``C[i, j]``)."""
    variables = _store_vars(store)
    if variables is None:
        return False
    def forget(node):
        if isinstance(node, Var):
            variables.discard(id(node))

    for index in load.indices:
        pre_order_visit(index, forget)
    return bool(variables)


def _strip_cast(expr):
    while isinstance(expr, Cast):
        expr = expr.value
    return expr


def _is_multiply_accumulate(body) -> bool:
    """``C[i, j] = C[i, j] + A[..] * B[..]`` with both operands reused (matmul, conv)."""
    if not isinstance(body, BufferStore):
        return False
    value = _strip_cast(body.value)
    if not isinstance(value, Add):
        return False
    acc, product = _strip_cast(value.a), _strip_cast(value.b)
    if not (isinstance(product, Mul) and isinstance(acc, BufferLoad)):
        return False
    if acc.buffer is not body.buffer or not _same_indices(body.indices, acc.indices):
        return False
    lhs, rhs = _strip_cast(product.a), _strip_cast(product.b)
    return (isinstance(lhs, BufferLoad) and isinstance(rhs, BufferLoad)
            and _allows_reuse(body, lhs) and _allows_reuse(body, rhs))


def _is_pure_reduce(reduce_vars, indices) -> bool:
    """Each index that mentions a reduce variable is exactly that variable."""
    for index in indices:
        if uses_var(index, lambda v: any(v is r for r in reduce_vars)):
            if not any(index is r for r in reduce_vars):
                return False
    return True


__all__ = ["AnnotateTIROpPattern", "OP_PATTERN_ATTR", "analyze_op_pattern"]
