"""Statements: stores, loops, branches, bindings, allocations and assertions.

Loops become canonical LLVM loops (preheader -> header with a phi -> body -> latch),
which LLVM's loop passes (vectorizer, unroller, LICM) recognise. ``Allocate`` puts
small constant-size buffers on the stack (an ``alloca`` in the entry block, 64-byte
aligned) and larger or symbolic ones on the heap (``aligned_alloc``/``free``, freed on
every way out of the function, including failed assertions).
"""
from __future__ import annotations

from llvmlite import ir

from ...tir import expr as E
from ...tir.stmt import ForKind
from . import types as T
from .loop_hints import divides_loop_var_in_an_index, vectorizer_off

STACK_LIMIT_BYTES = 64 * 1024
ALLOC_ALIGN = 64


class StmtEmitter:
    """Mixin: needs the ExprEmitter methods plus ``alloca_builder``, ``heap_stack``,
    ``emit_failure_exit`` and ``emit_parallel_for`` (see function.py / parallel.py)."""

    def emit_stmt(self, stmt) -> None:
        method = getattr(self, "_stmt_" + type(stmt).__name__, None)
        if method is None:
            self.fail(f"unsupported statement {type(stmt).__name__}", stmt)
        method(stmt)

    def _stmt_SeqStmt(self, op):
        for stmt in op.seq:
            self.emit_stmt(stmt)

    def _stmt_Evaluate(self, op):
        # Evaluate of a constant is how an empty body is spelled: nothing to emit.
        if not isinstance(op.value, (E.IntImm, E.FloatImm)):
            self.emit_expr(op.value)

    def _stmt_BufferStore(self, op):
        self.emit_store(op.buffer, op.indices, op.value)

    def _stmt_LetStmt(self, op):
        self.vars[op.var] = self.emit_expr(op.value)
        try:
            self.emit_stmt(op.body)
        finally:
            del self.vars[op.var]

    def _stmt_DeclBuffer(self, op):
        self.emit_stmt(op.body)

    def _stmt_IfThenElse(self, op):
        cond = self.emit_expr(op.condition)
        if op.else_case is None:
            with self.builder.if_then(cond):
                self.emit_stmt(op.then_case)
            return
        with self.builder.if_else(cond) as (then, otherwise):
            with then:
                self.emit_stmt(op.then_case)
            with otherwise:
                self.emit_stmt(op.else_case)

    def _stmt_AssertStmt(self, op):
        """A failed assertion frees live heap buffers and returns -1 (the runtime raises)."""
        cond = self.emit_expr(op.condition)
        fail_block = self.function.append_basic_block("assert_fail")
        ok_block = self.function.append_basic_block("assert_ok")
        self.builder.cbranch(cond, ok_block, fail_block)
        self.builder.position_at_end(fail_block)
        self.emit_failure_exit()
        self.builder.position_at_end(ok_block)
        self.emit_stmt(op.body)

    def _stmt_Block(self, op):
        self.fail("blocks must be lowered before codegen (run mlcbench.lower / "
                  "tir.transform.lower first)", op)

    _stmt_BlockRealize = _stmt_Block

    # -- loops -------------------------------------------------------------------------
    def _stmt_For(self, op):
        if op.kind == ForKind.THREAD_BINDING:
            self.fail("a thread-bound loop needs a GPU target; the llvm target runs on the CPU",
                      op)
        # Inside an outlined parallel body the team is busy: nested parallel loops run serially.
        if op.kind == ForKind.PARALLEL and not self.in_parallel:
            self.emit_parallel_for(op)
            return
        begin = self.emit_expr(op.min)
        end = self.builder.add(begin, self.emit_expr(op.extent))
        vectorize = not divides_loop_var_in_an_index(op.loop_var, op.body)
        self.emit_loop(op.loop_var, begin, end, lambda: self.emit_stmt(op.body), vectorize)

    def emit_loop(self, loop_var, begin: ir.Value, end: ir.Value, emit_body,
                  vectorize: bool = True) -> None:
        """``for loop_var in [begin, end): emit_body()`` as a canonical LLVM loop;
        ``vectorize=False`` keeps LLVM's loop vectorizer off it (see loop_hints)."""
        preheader = self.builder.block
        header = self.function.append_basic_block(f"for_{loop_var.name}")
        body = self.function.append_basic_block(f"for_{loop_var.name}_body")
        exit_block = self.function.append_basic_block(f"for_{loop_var.name}_end")
        self.builder.branch(header)
        self.builder.position_at_end(header)
        index = self.builder.phi(begin.type, name=loop_var.name)
        index.add_incoming(begin, preheader)
        self.builder.cbranch(self.builder.icmp_signed("<", index, end), body, exit_block)
        self.builder.position_at_end(body)
        self.vars[loop_var] = index
        try:
            emit_body()
        finally:
            del self.vars[loop_var]
        # nsw: the counter never wraps, which lets LLVM compute the trip count.
        step = self.builder.add(index, ir.Constant(index.type, 1), flags=("nsw",))
        index.add_incoming(step, self.builder.block)
        latch = self.builder.branch(header)
        if not vectorize:
            latch.set_metadata("llvm.loop", vectorizer_off(self.builder.module))
        self.builder.position_at_end(exit_block)

    # -- allocation --------------------------------------------------------------------
    def _stmt_Allocate(self, op):
        buffer = op.buffer
        elem_type = T.memory_type(buffer.dtype)
        elem_bytes = buffer.dtype.itemsize * buffer.dtype.lanes
        count = _constant_count(buffer.shape)
        if count is not None and self.stack_bytes + count * elem_bytes <= STACK_LIMIT_BYTES:
            self.stack_bytes += count * elem_bytes
            # One element at least: a zero-size buffer still gets a valid address.
            slot = self.stack_slot(ir.ArrayType(elem_type, max(count, 1)), buffer.name,
                                   ALLOC_ALIGN)
            self._with_bound(buffer.data, slot, op.body)
            return
        pointer = self._heap_allocate(buffer, elem_bytes)
        self.heap_stack.append(pointer)
        self._with_bound(buffer.data, pointer, op.body)
        self.heap_stack.pop()
        self.builder.call(self.declare_function("free", ir.VoidType(), [T.POINTER]), [pointer])

    def _with_bound(self, var, value, body) -> None:
        self.vars[var] = value
        try:
            self.emit_stmt(body)
        finally:
            del self.vars[var]

    def _heap_allocate(self, buffer, elem_bytes: int) -> ir.Value:
        """``aligned_alloc(64, round_up(bytes, 64))``; a NULL result fails the kernel."""
        count = ir.Constant(T.I64, 1)
        for extent in buffer.shape:
            count = self.builder.mul(count, self._to_i64(self.emit_expr(extent), extent.dtype))
        size = self.builder.mul(count, ir.Constant(T.I64, elem_bytes))
        # aligned_alloc wants a size that is a multiple of the alignment.
        size = self.builder.and_(self.builder.add(size, ir.Constant(T.I64, ALLOC_ALIGN - 1)),
                                 ir.Constant(T.I64, -ALLOC_ALIGN))
        # A zero size may give NULL, which would read as a failed allocation.
        size = self.builder.select(self.builder.icmp_unsigned("==", size, ir.Constant(T.I64, 0)),
                                   ir.Constant(T.I64, ALLOC_ALIGN), size)
        alloc = self.declare_function("aligned_alloc", T.POINTER, [T.I64, T.I64])
        pointer = self.builder.call(alloc, [ir.Constant(T.I64, ALLOC_ALIGN), size],
                                    name=buffer.name)
        is_null = self.builder.icmp_unsigned("==", pointer, ir.Constant(T.POINTER, None))
        with self.builder.if_then(is_null, likely=False):
            self.emit_failure_exit()
        return pointer


def _constant_count(shape) -> int | None:
    count = 1
    for extent in shape:
        if not isinstance(extent, E.IntImm):
            return None
        count *= extent.value
    return count
