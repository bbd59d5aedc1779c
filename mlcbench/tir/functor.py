"""Visitors and mutators over TIR (statements and expressions).

Define ``visit_<NodeClass>`` for the nodes you care about; everything else is walked
generically through the node's fields. Binders (``Var``, ``Buffer``) are leaves: a
mutator that wants to rename them defines ``visit_Var`` / ``visit_Buffer``.
A mutator returns the *same object* when nothing below changed, so unchanged
subtrees are shared and ``new is old`` tells whether a pass did anything.

Example: count stores::

    class CountStores(StmtExprVisitor):
        def __init__(self): self.n = 0
        def visit_BufferStore(self, op):
            self.n += 1
            self.generic_visit(op)
"""
from __future__ import annotations

import dataclasses

from ..ir.node import Node
from .expr import Var


def _dispatch_table(functor_cls):
    table = functor_cls.__dict__.get("_table")
    if table is None:
        table = {}
        functor_cls._table = table
    return table


def _find(functor, node_cls):
    table = _dispatch_table(type(functor))
    method_name = table.get(node_cls)
    if method_name is None:
        method_name = "generic_visit"
        for klass in node_cls.__mro__:
            name = "visit_" + klass.__name__
            if hasattr(functor, name):
                method_name = name
                break
        table[node_cls] = method_name
    return getattr(functor, method_name)


class StmtExprVisitor:
    def visit(self, obj):
        if isinstance(obj, Node):
            return _find(self, type(obj))(obj)
        if isinstance(obj, (list, tuple)):
            for item in obj:
                self.visit(item)
        elif isinstance(obj, dict):
            for value in obj.values():
                self.visit(value)
        return None

    def generic_visit(self, node):
        if node._binder:
            return None
        for field in node._fields:
            value = getattr(node, field.name)
            if isinstance(value, (Node, tuple, list, dict)):
                self.visit(value)
        return None


class StmtExprMutator:
    def visit(self, obj):
        if isinstance(obj, Node):
            return _find(self, type(obj))(obj)
        if isinstance(obj, tuple):
            new = tuple(self.visit(item) for item in obj)
            return obj if all(a is b for a, b in zip(new, obj)) else new
        if isinstance(obj, dict):
            new = {k: self.visit(v) for k, v in obj.items()}
            return obj if all(new[k] is v for k, v in obj.items()) else new
        return obj

    def generic_visit(self, node):
        if node._binder:
            return node
        changes = {}
        for field in node._fields:
            value = getattr(node, field.name)
            if isinstance(value, (Node, tuple, dict)):
                new = self.visit(value)
                if new is not value:
                    changes[field.name] = new
        if not changes:
            return node
        return rebuild(node, changes)


def rebuild(node, changes: dict):
    """``dataclasses.replace`` that recomputes a derived ``dtype`` when operands change."""
    from . import expr as E
    if isinstance(node, (E.BinaryOp,)) and "dtype" not in changes:
        return E.binary(type(node), changes.get("a", node.a), changes.get("b", node.b))
    return dataclasses.replace(node, **changes)


class _PostOrder(StmtExprVisitor):
    def __init__(self, fn):
        self.fn = fn

    def generic_visit(self, node):
        super().generic_visit(node)
        self.fn(node)


class _PreOrder(StmtExprVisitor):
    def __init__(self, fn):
        self.fn = fn

    def generic_visit(self, node):
        if self.fn(node) is not False:
            super().generic_visit(node)


def post_order_visit(obj, fn) -> None:
    """Call ``fn(node)`` on every node below ``obj``, children first."""
    _PostOrder(fn).visit(obj)


def pre_order_visit(obj, fn) -> None:
    """Call ``fn(node)`` on every node, parents first; a ``False`` return skips children."""
    _PreOrder(fn).visit(obj)


class _Substitute(StmtExprMutator):
    def __init__(self, vmap):
        self.vmap = vmap

    def visit_Var(self, var):
        return self.vmap.get(var, var)


def substitute(obj, vmap: dict):
    """Replace variables by expressions (``{var: expr}``) everywhere in ``obj``."""
    if not vmap:
        return obj
    from .expr import convert
    return _Substitute({k: convert(v) for k, v in vmap.items()}).visit(obj)


def uses_var(obj, predicate) -> bool:
    """True when some Var below ``obj`` satisfies ``predicate``."""
    stack = [obj]
    while stack:
        node = stack.pop()
        if isinstance(node, Node):
            if isinstance(node, Var):
                if predicate(node):
                    return True
                continue
            if node._binder:
                continue
            for field in node._fields:
                value = getattr(node, field.name)
                if isinstance(value, (Node, tuple, list, dict)):
                    stack.append(value)
        elif isinstance(node, (tuple, list)):
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
    return False
