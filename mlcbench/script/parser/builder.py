"""The state the parser builds a PrimFunc in, shared with the ``T`` namespace.

TVMScript statements such as ``T.reads(A[vi])``, ``T.alloc_buffer(...)`` or
``vi = T.axis.spatial(128, i)`` do not return a statement; they add something to the
block or function being parsed. They find that block through :func:`current_builder`,
which the parser sets while it reads a ``@T.prim_func`` body. Outside the parser there
is no builder, and such functions say so.

Some statements wrap *the rest of the body* (``x: T.int32 = v`` is a ``LetStmt`` whose
body is everything after it); they are recorded with :meth:`Builder.emit_wrapper` and
folded by :meth:`Builder.end_body`::

    builder.begin_body()
    builder.emit(Evaluate(0))
    builder.emit_wrapper(lambda rest: LetStmt(x, 1, rest))
    builder.emit(store)
    builder.end_body()   # SeqStmt(Evaluate(0), LetStmt(x, 1, store))
"""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Callable

from ...ir.errors import ParseError
from ...tir.stmt import seq

_BUILDER: contextvars.ContextVar = contextvars.ContextVar("tvmscript_builder", default=None)
_NAME_HINT: contextvars.ContextVar = contextvars.ContextVar("tvmscript_name_hint", default=None)


@dataclass
class FuncFrame:
    """What a ``@T.prim_func`` body declares besides statements."""
    attrs: dict = field(default_factory=dict)
    params: list = field(default_factory=list)
    buffer_map: dict = field(default_factory=dict)      # handle Var -> Buffer
    root_alloc_buffers: list = field(default_factory=list)


@dataclass
class BlockFrame:
    """The parts of a ``with T.block(...)`` collected while its body is parsed."""
    name: str
    iter_vars: list = field(default_factory=list)
    iter_values: list = field(default_factory=list)
    reads: list | None = None
    writes: list | None = None
    predicate: object = None
    annotations: dict = field(default_factory=dict)
    alloc_buffers: list = field(default_factory=list)
    match_buffers: list = field(default_factory=list)
    init: object = None


@dataclass
class _Wrapper:
    wrap: Callable


class Builder:
    """Frames of the function being parsed: the function, enclosing blocks, loops."""

    def __init__(self):
        self.func = FuncFrame()
        self.blocks: list[BlockFrame] = []
        self.loop_ranges: dict = {}          # loop Var -> Range, for T.axis.remap
        self.allocations: dict = {}          # data Var -> Buffer made by T.allocate
        self.buffers_by_data: dict = {}      # data Var -> Buffer, for access analysis
        self.contains_block = False
        self._bodies: list[list] = []

    # -- statements ---------------------------------------------------------------------
    def begin_body(self) -> None:
        self._bodies.append([])

    def emit(self, stmt) -> None:
        self._bodies[-1].append(stmt)

    def emit_wrapper(self, wrap: Callable) -> None:
        """``wrap(rest)`` builds a statement around the statements that follow."""
        self._bodies[-1].append(_Wrapper(wrap))

    def end_body(self):
        items = self._bodies.pop()
        body = []
        for item in reversed(items):
            if isinstance(item, _Wrapper):
                body = [item.wrap(seq(*body))]
            else:
                body.insert(0, item)
        return seq(*body)

    def pending_wrappers(self) -> int:
        """How many wrappers the body being built holds (0 or 1 right after a call)."""
        return sum(isinstance(item, _Wrapper) for item in self._bodies[-1])

    def abandon_body(self) -> None:
        """Drop the body opened last without building it (a ``with`` that turned out to
        be a block, or a parse error)."""
        self._bodies.pop()

    # -- declarations -------------------------------------------------------------------
    def innermost_block(self, who: str) -> BlockFrame:
        if not self.blocks:
            raise ParseError(f"{who} is only allowed inside `with T.block(...)`")
        return self.blocks[-1]

    def add_alloc_buffer(self, buffer) -> None:
        target = self.blocks[-1].alloc_buffers if self.blocks else self.func.root_alloc_buffers
        target.append(buffer)
        self.declare_buffer(buffer)

    def declare_buffer(self, buffer) -> None:
        self.buffers_by_data.setdefault(buffer.data, buffer)


def current_builder():
    """The builder of the function being parsed, or None outside the parser."""
    return _BUILDER.get()


def require_builder(who: str) -> Builder:
    builder = _BUILDER.get()
    if builder is None:
        raise ParseError(f"{who} only has a meaning inside a @T.prim_func body")
    return builder


@contextlib.contextmanager
def building(builder: Builder):
    token = _BUILDER.set(builder)
    try:
        yield builder
    finally:
        _BUILDER.reset(token)


@contextlib.contextmanager
def naming(hint):
    """Let the call evaluated inside name what it creates (``Y = T.alloc_buffer(...)``)."""
    token = _NAME_HINT.set(hint)
    try:
        yield
    finally:
        _NAME_HINT.reset(token)


def name_hint(default: str = "") -> str:
    """The name the value being created will be bound to, e.g. ``"Y"``."""
    hint = _NAME_HINT.get()
    return hint if isinstance(hint, str) else default


def name_hints(count: int, default: str = "v") -> list[str]:
    """Names for ``count`` values unpacked at once (``vi, vj = T.axis.remap(...)``)."""
    hint = _NAME_HINT.get()
    if isinstance(hint, tuple) and len(hint) == count:
        return list(hint)
    return [f"{default}{k}" for k in range(count)]
