"""The loop nest of a PrimFunc as a tree of loops, blocks and buffers, named as printed.

A learner reads loop names off the TVMScript (``for i, j_0 in T.grid(...)``) and types
them back into the explorer, so the tree takes every loop's name from the printed text
itself, not from the ``Var`` name hint: the printer renames on conflicts (``i_1``), and
two sibling nests both print ``i, j``.

A name that several loops share is *qualified* by a block below it: ``"i@C"`` is the
loop ``i`` enclosing block ``C``. ``"i#2"`` (the second ``i`` in print order) also works.

>>> tree = LoopTree.from_func(mod["mm_relu"])          # doctest: +SKIP
>>> print(tree.render())                               # doctest: +SKIP
for i in 128            (i@Y)
  for j in 128          (j@Y)
    for k in 128
      block Y [SSR]  reads A, B  writes Y
for i in 128            (i@C)
  ...
>>> tree.loop("k").extent                              # doctest: +SKIP
128
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from mlcbench.ir import ScheduleError
from mlcbench.tir import Block, BlockRealize, For, IntImm, PrimFunc

__all__ = ["BlockItem", "BufferItem", "LoopItem", "LoopTree", "printed_loop_names"]

# Statement fields that hold statements, in the order the printer prints them.
_CHILD_FIELDS = {"SeqStmt": ("seq",), "For": ("body",), "BlockRealize": ("block",),
                 "Block": ("init", "body"), "IfThenElse": ("then_case", "else_case"),
                 "LetStmt": ("body",), "AssertStmt": ("body",), "Allocate": ("body",),
                 "DeclBuffer": ("body",)}

_FOR_HEADER = re.compile(r"^\s*for (.+?) in ")

_KIND_LETTER = {"spatial": "S", "reduce": "R", "scan": "O", "opaque": "X", "thread": "T"}


@dataclass(frozen=True, eq=False)
class LoopItem:
    """One loop: ``name`` as printed, ``ref`` the shortest unambiguous reference."""
    name: str
    ref: str
    var: object               # the loop Var (compared by identity)
    extent: object            # int, or the printed expression when symbolic
    kind: str                 # "serial", "parallel", "vectorized", "unroll", ...
    depth: int
    parent: int | None        # row index of the enclosing loop or block
    annotations: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        kind = "" if self.kind == "serial" else f" ({self.kind})"
        ref = "" if self.ref == self.name else f"  [{self.ref}]"
        return f"for {self.name} in {self.extent}{kind}{ref}"


@dataclass(frozen=True, eq=False)
class BlockItem:
    """One block: its iteration kinds (``"SSR"``), the buffers it reads and writes."""
    name: str
    iter_kinds: str
    reads: tuple
    writes: tuple
    depth: int
    parent: int | None
    has_init: bool = False

    @property
    def ref(self) -> str:
        return self.name

    @property
    def label(self) -> str:
        kinds = f" [{self.iter_kinds}]" if self.iter_kinds else ""
        reads = ", ".join(self.reads) or "-"
        writes = ", ".join(self.writes) or "-"
        return f"block {self.name}{kinds}  reads {reads}  writes {writes}"


@dataclass(frozen=True)
class BufferItem:
    """A buffer of the function: a parameter, or one allocated by a block."""
    name: str
    shape: tuple
    dtype: str
    scope: str
    role: str                 # "param" or "alloc"

    @property
    def label(self) -> str:
        shape = ", ".join(str(s) for s in self.shape)
        scope = "" if self.scope == "global" else f", {self.scope}"
        return f"{self.name}: ({shape}) {self.dtype}{scope} [{self.role}]"


def printed_loop_names(script: str) -> list[str]:
    """Loop names in the order the printer wrote their ``for`` headers.

    >>> printed_loop_names("for i, j in T.grid(4, 4):\\n    for k in range(4):")
    ['i', 'j', 'k']
    """
    names = []
    for line in script.splitlines():
        match = _FOR_HEADER.match(line)
        if match:
            names.extend(n.strip() for n in match.group(1).split(","))
    return names


class LoopTree:
    """Rows (loops and blocks, pre-order with depths) and buffers of one PrimFunc."""

    def __init__(self, func_name: str, rows: list, buffers: list):
        self.func_name = func_name
        self.rows = rows
        self.buffers = buffers
        self._by_var = {row.var: row for row in rows if isinstance(row, LoopItem)}
        self._blocks = {row.name: row for row in rows if isinstance(row, BlockItem)}

    @staticmethod
    def from_func(func: PrimFunc, func_name: str = "main", script: str | None = None):
        """Build the tree; ``script`` (the function's printed text) is printed if not given."""
        script = func.script() if script is None else script
        builder = _TreeBuilder(func)
        builder.walk(func.body, depth=0, parent=None)
        names = printed_loop_names(script)
        loops = builder.loops()
        if len(names) != len(loops):     # cannot happen with this printer; stay usable
            names = [row["var"].name for row in loops]
        for row, name in zip(loops, names):
            row["name"] = name
        rows = _finish_rows(builder.rows)
        return LoopTree(func_name, rows, builder.buffers)

    # -- lookup -------------------------------------------------------------------------
    @property
    def loops(self) -> list:
        return [row for row in self.rows if isinstance(row, LoopItem)]

    @property
    def blocks(self) -> list:
        return [row for row in self.rows if isinstance(row, BlockItem)]

    def loop_of_var(self, var) -> LoopItem | None:
        return self._by_var.get(var)

    def has_block(self, name: str) -> bool:
        return name in self._blocks

    def block(self, name: str) -> BlockItem:
        """The block called ``name``; ScheduleError lists the blocks when there is none."""
        if name not in self._blocks:
            raise ScheduleError(f"no block named {name!r} in {self.func_name}; the blocks "
                                f"are {sorted(self._blocks)}")
        return self._blocks[name]

    def loop(self, ref: str) -> LoopItem:
        """The loop named ``ref`` as printed (``"j_0"``), qualified when needed
        (``"i@C"``: the ``i`` above block ``C``; ``"i#2"``: the second ``i`` printed)."""
        if not isinstance(ref, str):
            raise ScheduleError(f"a loop is named by a string as printed, found {ref!r}")
        name, _, where = ref.partition("@")
        name, _, nth = name.partition("#")
        matches = [row for row in self.loops if row.name == name]
        if where:
            self.block(where)
            matches = [row for row in matches if where in self.blocks_below(row)]
        if nth:
            matches = matches[int(nth) - 1:int(nth)] if nth.isdigit() and int(nth) > 0 else []
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise ScheduleError(f"no loop {ref!r} in {self.func_name}; the loops are "
                                f"{[row.ref for row in self.loops]}")
        raise ScheduleError(f"loop name {ref!r} is ambiguous in {self.func_name}: it names "
                            f"{len(matches)} loops; write one of "
                            f"{[row.ref for row in matches]}")

    def children(self, index: int) -> list[int]:
        return [k for k, row in enumerate(self.rows) if row.parent == index]

    def blocks_below(self, item) -> list[str]:
        """Names of the blocks nested (at any depth) under a loop or block row."""
        start = self.rows.index(item)
        out = []
        for row in self.rows[start + 1:]:
            if row.depth <= item.depth:
                break
            if isinstance(row, BlockItem):
                out.append(row.name)
        return out

    def loops_above(self, block_name: str) -> list[LoopItem]:
        """The loops enclosing a block, outermost first."""
        row = self.block(block_name)
        chain = []
        while row.parent is not None:
            row = self.rows[row.parent]
            if isinstance(row, LoopItem):
                chain.append(row)
        return chain[::-1]

    # -- display ------------------------------------------------------------------------
    def labels(self) -> list[str]:
        """One indented line per row, for a selection list."""
        return ["  " * row.depth + row.label for row in self.rows]

    def render(self) -> str:
        """The tree as text, then the buffers."""
        lines = [f"{self.func_name}:"] + ["  " + label for label in self.labels()]
        lines += ["buffers:"] + ["  " + b.label for b in self.buffers]
        return "\n".join(lines)

    def __repr__(self):
        return f"LoopTree({self.func_name!r}, {len(self.loops)} loops, {len(self.blocks)} blocks)"


class _TreeBuilder:
    """Walks the function once, in print order, collecting rows as dicts."""

    def __init__(self, func: PrimFunc):
        self.rows: list[dict] = []
        self.buffers = [_buffer_item(b, "param") for b in func.buffer_map.values()]

    def loops(self) -> list[dict]:
        return [row for row in self.rows if row["type"] is LoopItem]

    def walk(self, stmt, depth: int, parent) -> None:
        if stmt is None:
            return
        if isinstance(stmt, For):
            parent, depth = self._add_loop(stmt, depth, parent), depth + 1
        elif isinstance(stmt, BlockRealize):
            self.walk(stmt.block, depth, parent)
            return
        elif isinstance(stmt, Block):
            self.buffers += [_buffer_item(b, "alloc") for b in stmt.alloc_buffers]
            if stmt.name_hint != "root" or parent is not None:
                parent, depth = self._add_block(stmt, depth, parent), depth + 1
        for name in _CHILD_FIELDS.get(type(stmt).__name__, ()):
            value = getattr(stmt, name)
            for child in value if isinstance(value, tuple) else (value,):
                self.walk(child, depth, parent)

    def _add_loop(self, loop: For, depth: int, parent) -> int:
        extent = loop.extent.value if isinstance(loop.extent, IntImm) else str(loop.extent)
        self.rows.append(dict(type=LoopItem, var=loop.loop_var, name=loop.loop_var.name,
                              extent=extent, kind=loop.kind.value, depth=depth,
                              parent=parent, annotations=dict(loop.annotations or {})))
        return len(self.rows) - 1

    def _add_block(self, block: Block, depth: int, parent) -> int:
        kinds = "".join(_KIND_LETTER.get(iv.iter_type.value, "?") for iv in block.iter_vars)
        self.rows.append(dict(type=BlockItem, name=block.name_hint, iter_kinds=kinds,
                              reads=tuple(r.buffer.name for r in block.reads),
                              writes=tuple(w.buffer.name for w in block.writes),
                              depth=depth, parent=parent, has_init=block.init is not None))
        return len(self.rows) - 1


def _buffer_item(buffer, role: str) -> BufferItem:
    shape = tuple(d.value if isinstance(d, IntImm) else str(d) for d in buffer.shape)
    return BufferItem(buffer.name, shape, str(buffer.dtype), buffer.scope, role)


def _finish_rows(raw: list[dict]) -> list:
    """Freeze the rows, giving each loop its shortest unambiguous reference."""
    blocks_below = _blocks_below(raw)
    counts: dict[str, int] = {}
    for row in raw:
        if row["type"] is LoopItem:
            counts[row["name"]] = counts.get(row["name"], 0) + 1
    rows, seen = [], {}
    for k, row in enumerate(raw):
        fields = {key: value for key, value in row.items() if key != "type"}
        if row["type"] is BlockItem:
            rows.append(BlockItem(**fields))
            continue
        name = row["name"]
        seen[name] = seen.get(name, 0) + 1
        ref = name if counts[name] == 1 else _qualified(name, seen[name], blocks_below[k],
                                                        raw, blocks_below)
        rows.append(LoopItem(ref=ref, **fields))
    return rows


def _blocks_below(raw: list[dict]) -> dict[int, list[str]]:
    below: dict[int, list[str]] = {k: [] for k in range(len(raw))}
    for k, row in enumerate(raw):
        if row["type"] is BlockItem:
            parent = row["parent"]
            while parent is not None:
                below[parent].append(row["name"])
                parent = raw[parent]["parent"]
    return below


def _qualified(name, nth, my_blocks, raw, blocks_below) -> str:
    """``name@block`` for the first block below this loop that no other loop called
    ``name`` also encloses; ``name#nth`` when there is none."""
    others = [blocks_below[k] for k, row in enumerate(raw)
              if row["type"] is LoopItem and row["name"] == name]
    for block in my_blocks:
        if sum(block in blocks for blocks in others) == 1:
            return f"{name}@{block}"
    return f"{name}#{nth}"
