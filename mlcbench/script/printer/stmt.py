"""TIR statements as TVMScript: loops, control flow, bindings, allocations.

Statements that bind something for "the rest of the body" (``LetStmt``, ``Allocate``,
``DeclBuffer``, ``AssertStmt``) print concisely, with the body at the same level,
when they are the last statement of their sequence::

    x: T.int32 = i * 4
    A[x] = T.float32(0)

and as a ``with`` scope otherwise, so that reading the text back cannot pull the
following statements into their body (``with T.LetStmt(i * 4) as x:``).

Nested serial loops that start at 0, carry no annotations and have nothing between
them print as one ``for i, j, k in T.grid(128, 128, 128):``.
"""
from __future__ import annotations

from ...ir.errors import InvalidTypeError
from ...tir import expr as E
from ...tir.functor import uses_var
from ...tir.stmt import For, ForKind, SeqStmt
from .buffers import ScopedPrinter
from .expr import dtype_annotation, fold_add, quote

_LOOP_PREFIX = {ForKind.PARALLEL: "T.parallel", ForKind.VECTORIZED: "T.vectorized",
                ForKind.UNROLLED: "T.unroll", ForKind.THREAD_BINDING: "T.thread_binding"}


def is_const(e, value) -> bool:
    return isinstance(e, E.IntImm) and e.value == value


class StmtPrinter(ScopedPrinter):
    """Mixin over :class:`ScopedPrinter`: ``body(stmt)`` emits into the current frame."""

    _stmt_table: dict = {}

    def body(self, stmt) -> None:
        """Print a statement list; only its last statement may scope concisely."""
        if isinstance(stmt, SeqStmt):
            last = len(stmt.seq) - 1
            for k, item in enumerate(stmt.seq):
                self.stmt(item, concise=k == last)
        else:
            self.stmt(stmt, concise=True)

    def stmt(self, s, concise: bool = True) -> None:
        method = self._stmt_table.get(type(s))
        if method is None:
            method = self._find_stmt_method(type(s))
        method(self, s, concise)

    @classmethod
    def _find_stmt_method(cls, node_type):
        for klass in node_type.__mro__:
            method = getattr(cls, "s_" + klass.__name__, None)
            if method is not None:
                cls._stmt_table[node_type] = method
                return method
        raise InvalidTypeError(
            f"the TIR printer cannot print a {node_type.__name__} as a statement")

    # -- simple statements --------------------------------------------------------------
    def s_BufferStore(self, s, concise):
        buffer = self.buffer_text(s.buffer)
        value = self.expr(s.value)
        self.frame.emit(f"{buffer}[{self.indices(s.indices)}] = {value}")

    def s_Evaluate(self, s, concise):
        text = self.expr(s.value)
        self.frame.emit(text if isinstance(s.value, E.Call) else f"T.evaluate({text})")

    def s_SeqStmt(self, s, concise):
        parent = self.frame
        with self.scope(indent=False) as child:
            self.body(s)
        parent.lines.extend(child.lines)

    def s_IfThenElse(self, s, concise):
        parent = self.frame
        condition = self.expr(s.condition)
        with self.scope() as then_frame:
            self.body(s.then_case)
        else_frame = None
        if s.else_case is not None:
            with self.scope() as else_frame:
                self.body(s.else_case)
        # Both branches are printed before either is emitted: a definition a branch
        # needs (a buffer view) then lands in front of the `if`, not before the `else:`.
        parent.emit_scope(f"if {condition}:", then_frame)
        if else_frame is not None:
            parent.emit_scope("else:", else_frame)

    # -- loops --------------------------------------------------------------------------
    def s_For(self, loop, concise):
        parent = self.frame
        grid = self._grid_chain(loop)
        with self.scope() as child:
            if len(grid) > 1:
                names, extents = [], []
                for item in grid:
                    names.append(self.define_var(item.loop_var, child))
                    extents.append(self.expr(item.extent))
                header = f"for {', '.join(names)} in T.grid({', '.join(extents)}):"
            else:
                grid = [loop]
                name = self.define_var(loop.loop_var, child)
                header = f"for {name} in {self._loop_iterable(loop)}:"
            for item in grid:
                self.loops[item.loop_var] = item
            try:
                self.body(grid[-1].body)
            finally:
                for item in grid:
                    del self.loops[item.loop_var]
        parent.emit_scope(header, child)

    @staticmethod
    def _grid_chain(loop) -> list:
        """The loops that fold into one ``T.grid``: serial, from 0, not annotated, and
        with extents that do not depend on the loops outside them in the chain."""
        chain, chain_vars = [], set()
        while isinstance(loop, For):
            if (loop.kind != ForKind.SERIAL or not is_const(loop.min, 0) or loop.annotations
                    or (chain_vars and not isinstance(loop.extent, E.IntImm)
                        and uses_var(loop.extent, lambda v: v in chain_vars))):
                break
            chain.append(loop)
            chain_vars.add(loop.loop_var)
            loop = loop.body
        return chain

    def _loop_iterable(self, loop) -> str:
        if is_const(loop.min, 0):
            args = [self.expr(loop.extent)]
        else:
            args = [self.expr(loop.min), self.expr(fold_add(loop.min, loop.extent))]
        if loop.kind == ForKind.SERIAL:
            prefix = "T.serial" if loop.annotations else "range"
        else:
            prefix = _LOOP_PREFIX[loop.kind]
        if loop.kind == ForKind.THREAD_BINDING:
            tag = loop.thread_binding.thread_tag if loop.thread_binding is not None else ""
            args.append(f"thread={quote(tag)}")
        if loop.annotations:
            args.append(f"annotations={self.dict_value(loop.annotations)}")
        return f"{prefix}({', '.join(args)})"

    # -- bindings for the rest of the body ----------------------------------------------
    def s_LetStmt(self, s, concise):
        parent = self.frame
        value = self.expr(s.value)
        defined = self.names.lookup(s.var) is not None
        with self.scope(indent=defined or not concise) as child:
            name = self.var_text(s.var) if defined else self.define_var(s.var, child)
            self.body(s.body)
        if defined:
            header = f"with T.LetStmt({value}, var={name}):"
        elif concise:
            header = f"{name}: {dtype_annotation(s.var.dtype)} = {value}"
        else:
            header = f"with T.LetStmt({value}) as {name}:"
        parent.emit_scope(header, child)

    def s_AssertStmt(self, s, concise):
        parent = self.frame
        condition = self.expr(s.condition)
        message = self.expr(s.message) if isinstance(s.message, E.PrimExpr) else quote(s.message)
        with self.scope(indent=not concise) as child:
            self.body(s.body)
        header = (f"assert {condition}, {message}" if concise
                  else f"with T.Assert({condition}, {message}):")
        parent.emit_scope(header, child)

    def s_Allocate(self, s, concise):
        parent = self.frame
        buffer = s.buffer
        args = ["[" + ", ".join(self.expr(x) for x in buffer.shape) + "]", quote(buffer.dtype),
                quote(buffer.scope)]
        if s.annotations:
            args.append(f"annotations={self.dict_value(s.annotations)}")
        rhs = f"T.allocate({', '.join(args)})"
        with self.scope(indent=not concise) as child:
            name = self.names.define(buffer.data, buffer.data.name, child)
            self.body(s.body)
        parent.emit_scope(f"{name} = {rhs}" if concise else f"with {rhs} as {name}:", child)

    def s_DeclBuffer(self, s, concise):
        parent = self.frame
        with self.scope(indent=not concise) as child:
            rhs = self.buffer_call(s.buffer, "T.decl_buffer", (), parent)
            name = self.define_buffer(s.buffer, child)
            self.body(s.body)
        parent.emit_scope(f"{name} = {rhs}" if concise else f"with {rhs} as {name}:", child)
