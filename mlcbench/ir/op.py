"""Primitive operators named by string, as TVM's ``tvm.ir.Op``.

An :class:`Op` is a singleton per name: ``Op.get("relax.add") is Op.get("relax.add")``,
so passes compare ops with ``is`` / ``==``. The facts about an op (shape rule,
legalization, fusion pattern) live in the registry of the IR level that defines it;
this class only names it.

>>> add = Op.get("relax.add")      # after the graph IR registered its ops
>>> add.name
'relax.add'
"""
from __future__ import annotations

import difflib

from .errors import IRError
from .node import Node, node

_OPS: dict[str, "Op"] = {}


@node
class Op(Node):
    name: str

    @staticmethod
    def register(name: str) -> "Op":
        """Create (once) the op called ``name``; a second call returns the same object."""
        if name not in _OPS:
            _OPS[name] = Op(name)
        return _OPS[name]

    @staticmethod
    def get(name: str) -> "Op":
        """The registered op called ``name``; an unknown name raises ``IRError``."""
        if name not in _OPS:
            close = difflib.get_close_matches(name, list(_OPS), n=3)
            hint = f"; did you mean {close}?" if close else ""
            raise IRError(f"no operator named {name!r} is registered{hint}")
        return _OPS[name]

    @staticmethod
    def list_op_names() -> list[str]:
        return sorted(_OPS)
