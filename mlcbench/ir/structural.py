"""Structural equality and hashing: same shape, same constants, binders up to renaming.

Binders (``Var``, ``Buffer``, ...) are matched one-to-one where they are defined (a
loop variable, a parameter, an allocated buffer -- fields marked with
:func:`mlcbench.ir.node.defines`): ``for i: A[i]`` equals ``for j: A[j]``, but
``B[i, i]`` does not equal ``B[i, j]``. A *free* binder (used, never defined in what is
compared) must be the very same object on both sides, as in TVM, unless
``map_free_vars=True``: then free binders are matched one-to-one too.
``assert_structural_equal`` reports the path of the first difference, e.g.
``func.body.block.body[1].value.b: 1 != 2``.
"""
from __future__ import annotations

import functools
import hashlib
import math
from enum import Enum

from .errors import StructuralMismatch
from .module import IRModule, _module_structure
from .node import Node

_SCALARS = (int, float, str, bool, type(None), Enum)


class _Mismatch(Exception):
    def __init__(self, path: str, detail: str):
        self.path, self.detail = path, detail


class _Equal:
    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.lhs_to_rhs: dict[int, object] = {}
        self.rhs_to_lhs: dict[int, object] = {}
        self.keep_alive: list = []
        self.defining = 0           # > 0 while visiting a field that defines binders

    def fail(self, path, lhs, rhs, why=None):
        raise _Mismatch(path, why or f"{_short(lhs)} != {_short(rhs)}")

    def visit(self, lhs, rhs, path: str):
        # No shortcut for ``lhs is rhs`` on nodes: binders inside a shared subtree must
        # still be matched with themselves, or a later use could match them with another.
        if isinstance(lhs, Node) or isinstance(rhs, Node):
            self.visit_node(lhs, rhs, path)
        elif isinstance(lhs, (list, tuple)) and isinstance(rhs, (list, tuple)):
            if len(lhs) != len(rhs):
                self.fail(path, lhs, rhs, f"length {len(lhs)} != {len(rhs)}")
            for k, (a, b) in enumerate(zip(lhs, rhs)):
                self.visit(a, b, f"{path}[{k}]")
        elif isinstance(lhs, dict) and isinstance(rhs, dict):
            if len(lhs) != len(rhs):
                self.fail(path, sorted(map(str, lhs)), sorted(map(str, rhs)))
            for (ka, va), (kb, vb) in zip(_sorted_items(lhs), _sorted_items(rhs)):
                self.visit(ka, kb, f"{path}.keys")
                self.visit(va, vb, f"{path}[{ka!r}]" if not isinstance(ka, Node) else f"{path}[*]")
        elif isinstance(lhs, float) and isinstance(rhs, float):
            if not _same_float(lhs, rhs):
                self.fail(path, lhs, rhs)
        elif type(lhs) is not type(rhs) and not (isinstance(lhs, str) and isinstance(rhs, str)):
            self.fail(path, lhs, rhs, f"{type(lhs).__name__} {_short(lhs)} != "
                                      f"{type(rhs).__name__} {_short(rhs)}")
        elif lhs != rhs:
            self.fail(path, lhs, rhs)

    def visit_node(self, lhs, rhs, path):
        if type(lhs) is not type(rhs):
            self.fail(path, lhs, rhs, f"{type(lhs).__name__} != {type(rhs).__name__}")
        if isinstance(lhs, IRModule):
            left, right = _module_structure(lhs), _module_structure(rhs)
            if [n for n, _ in left] != [n for n, _ in right]:
                self.fail(path, [n for n, _ in left], [n for n, _ in right])
            for name in (n for n, _ in left):      # functions refer to each other by name
                self.bind(lhs.get_global_var(name), rhs.get_global_var(name), path)
            for (name, a), (_, b) in zip(left, right):
                self.visit(a, b, f'{path}["{name}"]')
            return
        if lhs._binder:
            key_l, key_r = id(lhs), id(rhs)
            if key_l in self.lhs_to_rhs:
                if self.lhs_to_rhs[key_l] is not rhs:
                    self.fail(path, lhs, rhs, f"variable {_short(lhs)} was matched with "
                              f"{_short(self.lhs_to_rhs[key_l])} earlier, found {_short(rhs)}")
                return
            if key_r in self.rhs_to_lhs:
                self.fail(path, lhs, rhs, f"{_short(rhs)} was matched with "
                          f"{_short(self.rhs_to_lhs[key_r])} earlier, found {_short(lhs)}")
            if not (self.defining or self.map_free_vars or lhs is rhs
                    or self.views_matched_memory(lhs, rhs)):
                self.fail(path, lhs, rhs, f"free variables differ: {_short(lhs)} is not "
                          f"{_short(rhs)} (neither is defined in the compared IR; pass "
                          "map_free_vars=True to match free variables by position)")
            self.bind(lhs, rhs, path)
            self.defining += 1          # what a definition holds (shape vars) is defined too
            try:
                self.visit_fields(lhs, rhs, path)
            finally:
                self.defining -= 1
            return
        self.visit_fields(lhs, rhs, path)

    def views_matched_memory(self, lhs, rhs) -> bool:
        """A binder such as a flattened Buffer is defined by the memory it views
        (``_view_of``): it may be matched when that memory already is."""
        field = getattr(lhs, "_view_of", None)
        if field is None:
            return False
        memory, other = getattr(lhs, field), getattr(rhs, field)
        matched = self.lhs_to_rhs.get(id(memory))
        return matched is other or (matched is None and memory is other)

    def visit_fields(self, lhs, rhs, path):
        # Definitions first: a PrimFunc's buffer_map and a Block's alloc_buffers come
        # after the body in field order, but the body's uses must find them defined.
        fields = sorted(lhs._fields, key=lambda f: not f.metadata.get("defines"))
        for field in fields:
            defining = bool(field.metadata.get("defines"))
            self.defining += defining
            try:
                self.visit(getattr(lhs, field.name), getattr(rhs, field.name),
                           f"{path}.{field.name}")
            finally:
                self.defining -= defining

    def bind(self, lhs, rhs, path):
        self.lhs_to_rhs[id(lhs)] = rhs
        self.rhs_to_lhs[id(rhs)] = lhs
        self.keep_alive.append((lhs, rhs))


def _sorted_items(d: dict):
    return sorted(d.items(), key=lambda kv: str(kv[0]) if not isinstance(kv[0], Node) else "")


def _short(obj) -> str:
    text = repr(obj) if not isinstance(obj, Node) else _node_short(obj)
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:77] + "..."


def _node_short(obj) -> str:
    name = getattr(obj, "name", None) or getattr(obj, "name_hint", None)
    if obj._binder and isinstance(name, str):
        return f"{type(obj).__name__}({name})"
    try:
        return obj.script()
    except Exception:  # printing must never hide the mismatch itself
        return type(obj).__name__


def structural_equal(lhs, rhs, map_free_vars: bool = False) -> bool:
    """True when ``lhs`` and ``rhs`` have the same structure up to renaming of binders."""
    try:
        _Equal(map_free_vars).visit(lhs, rhs, _root_name(lhs))
    except _Mismatch:
        return False
    return True


def assert_structural_equal(lhs, rhs, map_free_vars: bool = False) -> None:
    """Raise :class:`StructuralMismatch` naming the first path where ``lhs`` and ``rhs`` differ."""
    try:
        _Equal(map_free_vars).visit(lhs, rhs, _root_name(lhs))
    except _Mismatch as err:
        message = f"structures differ at {err.path}: {err.detail}"
        try:
            message += f"\n--- lhs ---\n{_script(lhs)}\n--- rhs ---\n{_script(rhs)}"
        except Exception:
            pass
        raise StructuralMismatch(message) from None


def _script(obj) -> str:
    return obj.script() if hasattr(obj, "script") else repr(obj)


def _root_name(obj) -> str:
    return type(obj).__name__ if isinstance(obj, Node) else "root"


def _same_float(lhs: float, rhs: float) -> bool:
    """Equal floats of the same sign (``max(x, -0.0)`` and ``max(x, 0.0)`` differ on
    ``x = 0``), or two NaNs."""
    if lhs != lhs or rhs != rhs:
        return lhs != lhs and rhs != rhs
    return lhs == rhs and math.copysign(1.0, lhs) == math.copysign(1.0, rhs)


def _stable_hash(value) -> int:
    """``hash`` with strings and None digested the same way in every process.

    Python salts ``hash(str)`` per process (and ``hash(None)`` follows the address of
    None before 3.12), so a plain ``hash`` could not be written to a tuning database and
    compared in the next session; ints, floats and tuples of them hash the same everywhere.
    """
    if type(value) is tuple:
        return hash(tuple(v if type(v) is int else _stable_hash(v) for v in value))
    if isinstance(value, str):
        return _str_digest(str(value))
    if value is None:
        return 0x5EED
    if isinstance(value, tuple):
        return _stable_hash(tuple(value))
    return hash(value)


@functools.lru_cache(maxsize=4096)
def _str_digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def structural_hash(obj) -> int:
    """A hash consistent with :func:`structural_equal` (binders numbered by first use)."""
    numbering: dict[int, int] = {}
    keep_alive: list = []

    def walk(x):
        if isinstance(x, IRModule):
            return _stable_hash(("module",)
                                + tuple((n, walk(f)) for n, f in _module_structure(x)))
        if isinstance(x, Node):
            if x._binder:
                if id(x) not in numbering:
                    numbering[id(x)] = len(numbering)
                    keep_alive.append(x)
                    fields = tuple(walk(getattr(x, f.name)) for f in x._fields)
                    return _stable_hash(("def", type(x).__name__, numbering[id(x)], fields))
                return _stable_hash(("use", numbering[id(x)]))
            return _stable_hash((type(x).__name__,)
                                + tuple(walk(getattr(x, f.name)) for f in x._fields))
        if isinstance(x, (list, tuple)):
            return _stable_hash(("seq",) + tuple(walk(v) for v in x))
        if isinstance(x, dict):
            return _stable_hash(("map",) + tuple(sorted(
                _stable_hash((walk(k) if not isinstance(k, Node) else 0, walk(v)))
                for k, v in x.items())))
        if isinstance(x, float) and (x != x or (x == 0 and math.copysign(1.0, x) < 0)):
            return _stable_hash("nan" if x != x else "-0.0")
        if isinstance(x, str):
            return _stable_hash(str(x))
        return _stable_hash(x)

    return walk(obj) & 0xFFFFFFFFFFFFFFFF
