"""Binders and buffer declarations: where each Var and Buffer gets its name.

A Buffer prints by its name; its ``data`` pointer is not printed unless something
else needs it, in which case it reads ``A.data``. A buffer used without any
declaration in scope (a view of ``T.allocate`` memory, say) is declared just before
the statement that first uses it, in the innermost scope where its pointer lives::

    C = T.allocate([128], "float32", "global")
    C_1 = T.Buffer((128,), data=C)
    for i in range(128):
        C_1[i] = T.float32(0)

Symbolic shape variables met for the first time are declared the same way
(``n = T.int32()``, or ``n, m = T.int64(), T.int64()`` for one buffer).
"""
from __future__ import annotations

import contextlib

from ...tir import expr as E
from .expr import ExprPrinter, fold_add, quote, var_creation
from .frames import Frame, Names, render


class ScopedPrinter(ExprPrinter):
    """Printer state: the frame stack and the binder names."""

    def __init__(self, declare_free: bool = True, depth: int = 0):
        self.names = Names()
        self.frames: list[Frame] = [Frame(depth, 0)]
        self.declare_free = declare_free     # False for fragments: free names print bare
        self.loops: dict = {}                # loop Var -> For of the enclosing loops

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    @property
    def root(self) -> Frame:
        return self.frames[0]

    @contextlib.contextmanager
    def scope(self, indent: bool = True):
        """A nested frame; its binders' names are freed when it closes."""
        parent = self.frames[-1]
        child = Frame(parent.depth + (1 if indent else 0), len(self.frames))
        self.frames.append(child)
        try:
            yield child
        finally:
            self.frames.pop()
            self.names.release(child)

    def text(self) -> str:
        return render(self.root.lines)

    # -- variables ----------------------------------------------------------------------
    def define_var(self, var, frame: Frame | None = None) -> str:
        return self.names.define(var, var.name, frame or self.frame)

    def var_text(self, var) -> str:
        text = self.names.lookup(var)
        if text is not None:
            return text
        name = self.names.define(var, var.name, self.root)
        if self.declare_free:
            self.root.emit(f"{name} = {var_creation(var)}")
        return name

    def declare_new_vars(self, exprs, frame: Frame) -> None:
        """``n = T.int32()`` (or ``n, m = T.int32(), T.int32()``) for unseen Vars."""
        new = []
        for e in exprs:
            if isinstance(e, E.Var) and self.names.lookup(e) is None and e not in new:
                new.append(e)
        if not new:
            return
        lhs = ", ".join(self.names.define(v, v.name, frame) for v in new)
        rhs = ", ".join(var_creation(v) for v in new)
        if self.declare_free:
            frame.emit(f"{lhs} = {rhs}")

    # -- buffers ------------------------------------------------------------------------
    def define_buffer(self, buffer, frame: Frame | None = None) -> str:
        frame = frame or self.frame
        name = self.names.define(buffer, buffer.name, frame)
        if self.names.lookup(buffer.data) is None:
            self.names.define_as(buffer.data, f"{name}.data", frame)
        return name

    def buffer_text(self, buffer) -> str:
        text = self.names.lookup(buffer)
        if text is not None:
            return text
        pointer_known = self.names.lookup(buffer.data) is not None
        if not self.declare_free and not pointer_known:
            return self.define_buffer(buffer, self.root)    # a fragment's free buffer
        frame = self._innermost_frame_of(buffer)
        self.declare_new_vars(_buffer_vars(buffer), frame)
        rhs = self.buffer_call(buffer, "T.Buffer", (), frame)
        name = self.define_buffer(buffer, frame)
        frame.emit(f"{name} = {rhs}")
        return name

    def _innermost_frame_of(self, buffer) -> Frame:
        """The deepest open frame where every variable of ``buffer`` is defined."""
        frame = self.root
        for var in _buffer_vars(buffer) + [buffer.data]:
            owner = self.names.frame.get(var)
            if owner is not None and owner.level > frame.level:
                frame = owner
        return frame

    def buffer_call(self, buffer, method: str, args, frame: Frame) -> str:
        """``T.alloc_buffer((128,), "int32", scope="local")``-style declaration text.

        Defaults are left out: dtype float32, zero offset, global scope. Unseen shape
        variables are declared first in ``frame``.
        """
        self.declare_new_vars(buffer.shape, frame)
        self.declare_new_vars(buffer.strides, frame)
        self.declare_new_vars((buffer.elem_offset,), frame)
        parts = list(args) + [self.shape_text(buffer.shape)]
        if buffer.dtype != "float32":
            parts.append(quote(buffer.dtype))
        parts.extend(f"{key}={value}" for key, value in self._buffer_kwargs(buffer))
        return f"{method}({', '.join(parts)})"

    def _buffer_kwargs(self, buffer):
        data = self.names.lookup(buffer.data)
        if data is not None:
            yield "data", data
        if buffer.strides:
            yield "strides", self.shape_text(buffer.strides)
        offset = buffer.elem_offset
        if not (isinstance(offset, E.IntImm) and offset.value == 0):
            yield "elem_offset", self.expr(offset)
        if buffer.scope != "global":
            yield "scope", quote(buffer.scope)
        if buffer.align:
            yield "align", str(buffer.align)
        if buffer.offset_factor != 1:
            yield "offset_factor", str(buffer.offset_factor)
        if buffer.axis_separators:
            yield "axis_separators", "[" + ", ".join(map(str, buffer.axis_separators)) + "]"

    def shape_text(self, shape) -> str:
        items = [self.expr(s) for s in shape]
        return "(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"

    def buffer_annotation(self, buffer) -> str:
        """``T.Buffer((128, 128), "float32")`` as a parameter annotation (dtype always shown)."""
        return f"T.Buffer({self.shape_text(buffer.shape)}, {quote(buffer.dtype)})"

    # -- regions ------------------------------------------------------------------------
    def region_text(self, region) -> str:
        """``A[vi, 0:128]``: a unit extent prints its index, a range ``min:min + extent``."""
        items = []
        for r in region.region:
            if isinstance(r.extent, E.IntImm) and r.extent.value == 1:
                items.append(self.expr(r.min))
            else:
                items.append(f"{self.expr(r.min)}:{self.expr(fold_add(r.min, r.extent))}")
        return f"{self.buffer_text(region.buffer)}[{', '.join(items) if items else '()'}]"


def _buffer_vars(buffer) -> list:
    """The Vars a buffer declaration mentions directly (shape, strides, offset)."""
    out = [e for e in tuple(buffer.shape) + tuple(buffer.strides) if isinstance(e, E.Var)]
    if isinstance(buffer.elem_offset, E.Var):
        out.append(buffer.elem_offset)
    return out
