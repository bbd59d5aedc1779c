"""Scopes and names while printing: which binder prints as which text, and where.

A name is taken only while its binder is in scope, as in TVM: two sibling loop nests
both print ``for i, j in T.grid(...)``; a binder that would shadow a live name with
the same hint gets a suffix (``i_1``). Lookups are dict hits, so naming costs O(1)
per use however large the function is.

Each :class:`Frame` collects ``(depth, text)`` lines. A definition that must be written
"before the statement being printed" (a buffer view, a symbolic variable) is appended
to the frame that owns it while the statement itself is still being built, so it
lands in front of that statement.
"""
from __future__ import annotations

import keyword

# Names a binder must never print as: the script namespaces and Python syntax.
RESERVED = frozenset({"T", "I", "R", "range"}) | frozenset(keyword.kwlist)


class Frame:
    """Lines of one scope; ``depth`` is its indentation, ``level`` its stack position."""

    __slots__ = ("depth", "level", "lines", "defined")

    def __init__(self, depth: int, level: int):
        self.depth = depth
        self.level = level
        self.lines: list[tuple[int, str]] = []
        self.defined: list[tuple[object, str | None]] = []

    def emit(self, text: str) -> None:
        self.lines.append((self.depth, text))

    def emit_scope(self, header: str, child: "Frame") -> None:
        """``header`` at this frame's depth, then the child's lines (already indented)."""
        self.lines.append((self.depth, header))
        self.lines.extend(child.lines)
        if not child.lines and child.depth > self.depth:
            self.lines.append((child.depth, "pass"))    # an empty SeqStmt body


def sanitize(hint: str) -> str:
    """A valid identifier from a name hint: ``"A.shared"`` -> ``"A_shared"``."""
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in (hint or "v"))
    if name[0].isdigit():
        name = "v" + name
    return name


class Names:
    """Binder -> printed text, with the set of names currently taken."""

    def __init__(self):
        self.text: dict[object, str] = {}
        self.frame: dict[object, Frame] = {}
        self.taken: set[str] = set(RESERVED)

    def lookup(self, binder) -> str | None:
        return self.text.get(binder)

    def define(self, binder, hint: str, frame: Frame) -> str:
        """Give ``binder`` a fresh name based on ``hint``, live until ``frame`` closes."""
        base = sanitize(hint)
        name, k = base, 1
        if name in self.taken:          # "tmp_1" taken: try "tmp_2", not "tmp_1_1", so
            stem, _, suffix = base.rpartition("_")      # reprinting parsed text keeps it
            if stem and suffix.isdigit():
                base = stem
        while name in self.taken:
            name = f"{base}_{k}"
            k += 1
        self.taken.add(name)
        self._bind(binder, name, frame, owns=name)
        return name

    def define_as(self, binder, text: str, frame: Frame) -> None:
        """Let ``binder`` print as an expression (``A.data``) that takes no new name."""
        self._bind(binder, text, frame, owns=None)

    def _bind(self, binder, text, frame, owns):
        self.text[binder] = text
        self.frame[binder] = frame
        frame.defined.append((binder, owns))

    def release(self, frame: Frame) -> None:
        for binder, owned in frame.defined:
            self.text.pop(binder, None)
            self.frame.pop(binder, None)
            if owned is not None:
                self.taken.discard(owned)
        frame.defined.clear()


def render(lines: list[tuple[int, str]], indent: int = 4) -> str:
    pad = " " * indent
    return "\n".join(pad * depth + text if text else "" for depth, text in lines)
