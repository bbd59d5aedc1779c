"""PrimFunc: a tensor program with buffer parameters."""
from __future__ import annotations

from ..ir.node import UNSET, Node, defines, merge_attrs, node
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

    def with_attr(self, key_or_dict, value=UNSET) -> "PrimFunc":
        """A copy with attributes set: ``f.with_attr("global_symbol", "main")`` or
        ``f.with_attr({"global_symbol": "main", "tir.noalias": True})``."""
        return self.replace(attrs=merge_attrs(self.attrs, key_or_dict, value,
                                              "PrimFunc.with_attr"))

    def with_attrs(self, attrs: dict) -> "PrimFunc":
        return self.replace(attrs=merge_attrs(self.attrs, attrs, where="PrimFunc.with_attrs"))

    def without_attr(self, key: str) -> "PrimFunc":
        return self.replace(attrs={k: v for k, v in self.attrs.items() if k != key})

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
