"""Tree helpers shared by the schedule primitives.

Primitives address IR by *identity*: a loop is found by its loop ``Var``, a block by
its (function-unique) name. These helpers find a node together with the chain of
statements above it, and rebuild the tree with one node replaced.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir.errors import ScheduleError
from ..expr import PrimExpr, Var
from ..function import PrimFunc
from ..functor import uses_var
from ..stmt import Block, BlockRealize, For, SeqStmt, Stmt, seq

_STMT_CHILD_FIELDS = {
    "SeqStmt": ("seq",), "For": ("body",), "BlockRealize": ("block",),
    "Block": ("init", "body"), "IfThenElse": ("then_case", "else_case"),
    "LetStmt": ("body",), "AssertStmt": ("body",), "Allocate": ("body",),
    "DeclBuffer": ("body",),
}


def stmt_children(stmt) -> list:
    """Direct statement children (not expressions) of ``stmt``."""
    out = []
    for name in _STMT_CHILD_FIELDS.get(type(stmt).__name__, ()):
        value = getattr(stmt, name)
        if isinstance(value, tuple):
            out.extend(value)
        elif value is not None:
            out.append(value)
    return out


def walk(stmt, fn, parents=()) -> None:
    """Pre-order walk calling ``fn(node, parents)``; parents are outermost first."""
    fn(stmt, parents)
    for child in stmt_children(stmt):
        walk(child, fn, parents + (stmt,))


@dataclass
class Located:
    """A node and every statement above it (outermost first)."""
    node: Stmt
    parents: tuple

    def loops(self) -> list:
        """Enclosing loops up to (not past) the nearest enclosing block."""
        out = []
        for p in reversed(self.parents):
            if isinstance(p, Block):
                break
            if isinstance(p, For):
                out.append(p)
        return out[::-1]

    def scope_block(self) -> Block:
        return next(p for p in reversed(self.parents) if isinstance(p, Block))


def find_all(func: PrimFunc, predicate) -> list:
    found = []
    walk(func.body, lambda n, ps: found.append(Located(n, ps)) if predicate(n) else None)
    return found


def find_first(stmt, predicate, parents=()) -> Located | None:
    """The first node in pre-order that satisfies ``predicate``, or None; the walk stops
    there (block names and loop variables are unique, and primitives look them up
    thousands of times in a tuning round)."""
    if predicate(stmt):
        return Located(stmt, parents)
    inner = parents + (stmt,)
    for child in stmt_children(stmt):
        found = find_first(child, predicate, inner)
        if found is not None:
            return found
    return None


def find_block(func: PrimFunc, name: str, primitive: str) -> Located:
    """The BlockRealize of the block called ``name`` (with its parents)."""
    hit = find_first(func.body,
                     lambda n: isinstance(n, BlockRealize) and n.block.name_hint == name)
    if hit is None:
        names = [h.node.block.name_hint for h in find_all(func, lambda n: isinstance(
            n, BlockRealize))][1:]
        raise ScheduleError(f"{primitive}: no block named {name!r}; the function has "
                            f"blocks {names}")
    return hit


def find_loop(func: PrimFunc, loop_var: Var, primitive: str) -> Located:
    hit = find_first(func.body, lambda n: isinstance(n, For) and n.loop_var is loop_var)
    if hit is None:
        raise ScheduleError(f"{primitive}: the loop {loop_var.name!r} is no longer in the "
                            "function (a primitive such as split or fuse replaced it)")
    return hit


class _Replacer:
    def __init__(self, mapping):
        self.mapping = mapping

    def visit(self, stmt):
        if id(stmt) in self.mapping:
            return self.mapping[id(stmt)][1]
        changes = {}
        for name in _STMT_CHILD_FIELDS.get(type(stmt).__name__, ()):
            value = getattr(stmt, name)
            if isinstance(value, tuple):
                new = tuple(self.visit(v) for v in value)
                if any(a is not b for a, b in zip(new, value)):
                    changes[name] = new
            elif value is not None:
                new = self.visit(value)
                if new is not value:
                    changes[name] = new
        if not changes:
            return stmt
        if "seq" in changes:
            return seq(*[s for s in changes["seq"] if s is not None])
        return stmt.replace(**changes)


def replace_stmts(func: PrimFunc, mapping: dict) -> PrimFunc:
    """Rebuild ``func`` with statements replaced by identity (``{old: new}``).

    A ``None`` replacement removes the statement from its sequence.
    """
    table = {id(old): (old, new) for old, new in mapping.items()}
    return func.with_body(_Replacer(table).visit(func.body))


def block_realizes_under(stmt) -> list:
    """Every BlockRealize below ``stmt`` (inclusive), nested ones too."""
    out = []
    walk(stmt, lambda n, ps: out.append(n) if isinstance(n, BlockRealize) else None)
    return out


def child_block_realizes(stmt) -> list:
    """BlockRealizes directly below ``stmt``: not those nested in another block."""
    out = []

    def visit(s, top):
        if isinstance(s, BlockRealize) and not top:
            out.append(s)
            return
        for child in stmt_children(s):
            visit(child, False)
    visit(stmt, True)
    return out


def uses_any(expr, variables) -> bool:
    ids = {id(v) for v in variables}
    return uses_var(expr, lambda v: id(v) in ids)


def const_int(expr: PrimExpr):
    """The Python int of a constant expression, else None."""
    return getattr(expr, "value", None) if type(expr).__name__ == "IntImm" else None


def as_seq_list(stmt) -> list:
    return list(stmt.seq) if isinstance(stmt, SeqStmt) else [stmt]
