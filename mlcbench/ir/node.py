"""The base of every IR node: a frozen dataclass with named, typed fields.

Nodes are immutable; edit with :func:`dataclasses.replace`. Binders (variables,
buffers) compare by identity: two ``Var("i")`` are different variables.
Structural comparison up to renaming lives in :mod:`mlcbench.ir.structural`.

Field metadata understood by the generic walkers:

* ``ignore=True`` -- not part of the structure (names of binders, source spans).
* ``defines=True`` -- the binders in this field are defined here (see :func:`defines`).
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from .errors import IRError

_PRINTERS: list[Callable[[object], str | None]] = []


def register_printer(printer: Callable[[object], str | None]) -> None:
    """Let a higher layer (the script printer) render nodes for ``repr``/``str``."""
    _PRINTERS.insert(0, printer)


def node(cls=None, *, binder: bool = False):
    """Class decorator: make ``cls`` a frozen IR node.

    ``binder=True`` marks classes whose instances are definitions (Var, Buffer):
    structural equality maps them one-to-one instead of comparing their fields only.
    """
    def wrap(c):
        c = dataclasses.dataclass(frozen=True, eq=False, repr=False)(c)
        c._binder = binder
        c._fields = tuple(f for f in dataclasses.fields(c) if not f.metadata.get("ignore"))
        return c
    return wrap if cls is None else wrap(cls)


def defines(**kwargs):
    """A dataclass field whose binders are *defined* here (a loop variable, a parameter):
    structural equality may match them with fresh binders of the other side, while a
    binder met first anywhere else is free and must be the same object."""
    return dataclasses.field(metadata={"defines": True}, **kwargs)


def ignored(default=None, **kwargs):
    """A dataclass field that structural equality and hashing skip (names, spans)."""
    return dataclasses.field(default=default, metadata={"ignore": True}, **kwargs)


class Node:
    """Base class of IR nodes. Identity ``__hash__``; subclasses may overload operators."""

    _binder = False
    _fields: tuple = ()
    __hash__ = object.__hash__

    def same_as(self, other) -> bool:
        return self is other

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)

    def script(self, **options) -> str:
        """TVMScript text; ``options`` (``name=``, ``show_meta=`` ...) go to the printer."""
        for printer in _PRINTERS:
            text = printer(self, **options) if options else printer(self)
            if text is not None:
                return text
        return _fallback_repr(self)

    def __repr__(self) -> str:
        return self.script()

    __str__ = __repr__


def _fallback_repr(obj) -> str:
    parts = ", ".join(f"{f.name}={getattr(obj, f.name)!r}" for f in dataclasses.fields(obj))
    return f"{type(obj).__name__}({parts})"


UNSET = object()    # "no value given": None is a value an attribute may hold


def merge_attrs(attrs: dict, key_or_dict, value=UNSET, where: str = "with_attr") -> dict:
    """``attrs`` with new entries, in the two forms TVM's ``with_attr`` takes:
    ``merge_attrs(a, "global_symbol", "main")`` or ``merge_attrs(a, {"global_symbol": "main"})``.
    """
    if isinstance(key_or_dict, dict):
        if value is not UNSET:
            raise IRError(f"{where}: expected a key and a value, or one dict of attributes; "
                          f"found a dict and the value {value!r}")
        new = dict(key_or_dict)
    elif value is UNSET:
        raise IRError(f"{where}: attribute {key_or_dict!r} needs a value, as in "
                      f"{where}({key_or_dict!r}, value), or pass a dict of attributes")
    else:
        new = {key_or_dict: value}
    bad = [k for k in new if not isinstance(k, str)]
    if bad:
        raise IRError(f"{where}: attribute names are strings, found {bad[0]!r} "
                      f"({type(bad[0]).__name__})")
    return {**attrs, **new}


def children(obj):
    """(field name, value) pairs of the structural fields of a node."""
    return [(f.name, getattr(obj, f.name)) for f in obj._fields]
