"""TensorIR statements.

Grammar::

    Stmt := BufferStore(buffer, value, indices)
          | Evaluate(value)
          | SeqStmt(seq)
          | IfThenElse(condition, then_case, else_case?)
          | LetStmt(var, value, body)
          | For(loop_var, min, extent, kind, body, thread_binding?, annotations)
          | BlockRealize(iter_values, predicate, block)
          | Allocate(buffer, body)                                   (after lowering)
          | AssertStmt(condition, message, body)

    Block := Block(iter_vars, reads, writes, name_hint, body, init?, alloc_buffers,
                   match_buffers, annotations)
    IterVar := IterVar(dom, var, iter_type, thread_tag)

A Block is a unit of computation with its own iteration domain (``iter_vars``),
declared accesses (``reads``/``writes``) and an optional ``init`` for reductions.
``BlockRealize`` binds the block's iteration variables to expressions of the
surrounding loops. The function body is a root ``BlockRealize`` of block ``"root"``.
"""
from __future__ import annotations

from enum import Enum

from ..ir.node import Node, defines, node
from .buffer import Buffer
from ..ir.dtype import dtype as as_dtype
from .expr import Cast, PrimExpr, Range, Var, const, convert


class Stmt(Node):
    """Base of statements."""


class ForKind(str, Enum):
    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unroll"
    THREAD_BINDING = "thread_binding"

    def __repr__(self):
        return f"ForKind.{self.name}"


class IterType(str, Enum):
    DATA_PAR = "spatial"         # "S" in T.axis.remap
    COMM_REDUCE = "reduce"       # "R"
    ORDERED = "scan"
    OPAQUE = "opaque"
    THREAD_INDEX = "thread"

    def __repr__(self):
        return f"IterType.{self.name}"


@node
class IterVar(Node):
    dom: Range
    var: Var = defines()
    iter_type: IterType = IterType.DATA_PAR
    thread_tag: str = ""


@node
class BufferStore(Stmt):
    buffer: Buffer
    value: PrimExpr
    indices: tuple

    def __post_init__(self):
        object.__setattr__(self, "indices", tuple(convert(i) for i in self.indices))
        object.__setattr__(self, "value", _stored_value(self.value, self.buffer.dtype))


def _stored_value(value, buffer_dtype) -> PrimExpr:
    """The value converted to the buffer's element type, as TVM's parser does: storing an
    int32 into a float32 buffer converts the number (``T.Cast``), it never reinterprets
    its bits. Vector values keep their lanes."""
    value = convert(value, buffer_dtype)
    element = as_dtype(buffer_dtype).element
    if as_dtype(value.dtype).element == element or element.is_handle:
        return value
    return Cast(element.with_lanes(as_dtype(value.dtype).lanes), value)


@node
class Evaluate(Stmt):
    value: PrimExpr

    def __post_init__(self):
        object.__setattr__(self, "value", convert(self.value))


@node
class SeqStmt(Stmt):
    seq: tuple

    def __post_init__(self):
        object.__setattr__(self, "seq", tuple(self.seq))

    def __len__(self):
        return len(self.seq)

    def __getitem__(self, k):
        return self.seq[k]


def seq(*stmts) -> Stmt:
    """Flatten nested sequences; one statement stays itself."""
    flat = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        elif isinstance(s, (list, tuple)):
            inner = seq(*s)
            if inner is not None:
                flat.extend(inner.seq if isinstance(inner, SeqStmt) else [inner])
        else:
            flat.append(s)
    if not flat:
        return Evaluate(const(0))
    return flat[0] if len(flat) == 1 else SeqStmt(tuple(flat))


@node
class IfThenElse(Stmt):
    condition: PrimExpr
    then_case: Stmt
    else_case: Stmt | None = None


@node
class LetStmt(Stmt):
    var: Var = defines()
    value: PrimExpr
    body: Stmt


@node
class AssertStmt(Stmt):
    condition: PrimExpr
    message: str
    body: Stmt


@node
class For(Stmt):
    loop_var: Var = defines()
    min: PrimExpr
    extent: PrimExpr
    kind: ForKind
    body: Stmt
    thread_binding: IterVar | None = None
    annotations: dict = None

    def __post_init__(self):
        object.__setattr__(self, "min", convert(self.min, self.loop_var.dtype))
        object.__setattr__(self, "extent", convert(self.extent, self.loop_var.dtype))
        object.__setattr__(self, "kind", ForKind(self.kind))
        if self.annotations is None:
            object.__setattr__(self, "annotations", {})


@node
class Block(Stmt):
    iter_vars: tuple
    reads: tuple
    writes: tuple
    name_hint: str
    body: Stmt
    init: Stmt | None = None
    alloc_buffers: tuple = defines(default=())
    match_buffers: tuple = defines(default=())
    annotations: dict = None

    def __post_init__(self):
        for name in ("iter_vars", "reads", "writes", "alloc_buffers", "match_buffers"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.annotations is None:
            object.__setattr__(self, "annotations", {})


@node
class BlockRealize(Stmt):
    iter_values: tuple
    predicate: PrimExpr
    block: Block

    def __post_init__(self):
        object.__setattr__(self, "iter_values", tuple(convert(v) for v in self.iter_values))
        object.__setattr__(self, "predicate", convert(self.predicate))


@node
class Allocate(Stmt):
    """Storage for ``buffer`` (flat, after lowering) live during ``body``."""
    buffer: Buffer = defines()
    body: Stmt
    annotations: dict = None

    def __post_init__(self):
        if self.annotations is None:
            object.__setattr__(self, "annotations", {})


@node
class DeclBuffer(Stmt):
    """Declare ``buffer`` as a view of existing memory (its ``data`` var) during ``body``."""
    buffer: Buffer = defines()
    body: Stmt


