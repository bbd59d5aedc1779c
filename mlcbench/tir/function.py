"""PrimFunc: a tensor program with buffer parameters."""
from __future__ import annotations

from ..ir.node import Node, defines, node
from .buffer import Buffer
from .expr import Var
from .stmt import Stmt


@node
class PrimFunc(Node):
    """``params`` are Vars (handles for buffers, scalars otherwise); ``buffer_map`` binds
    each handle to the Buffer the body uses. ``attrs`` holds ``global_symbol``,
    ``tir.noalias`` and friends."""

    ir_level = "tir"      # how level-generic code (passes, printers) tells functions apart

    params: tuple = defines()
    body: Stmt = None
    buffer_map: dict = defines(default=None)
    attrs: dict = None
    ret_type: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "params", tuple(self.params))
        if self.buffer_map is None:
            object.__setattr__(self, "buffer_map", {})
        if self.attrs is None:
            object.__setattr__(self, "attrs", {})

    def with_attr(self, key: str, value) -> "PrimFunc":
        return self.replace(attrs={**self.attrs, key: value})

    def with_body(self, body: Stmt) -> "PrimFunc":
        return self.replace(body=body)

    @property
    def global_symbol(self) -> str | None:
        return self.attrs.get("global_symbol")

    def buffer_params(self) -> list[tuple[Var, Buffer]]:
        return [(p, self.buffer_map[p]) for p in self.params if p in self.buffer_map]

    def show(self, style: str | None = None) -> None:
        from ..ir.module import show_text
        show_text(self.script())
