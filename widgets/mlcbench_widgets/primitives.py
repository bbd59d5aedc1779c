"""The schedule primitives the explorer offers, as data: one row per primitive.

Each row says which arguments name loops or blocks (the explorer turns those names
into handles) and which are plain values. The Python API and the buttons both go
through this table, so a new primitive is one new row::

    PRIMITIVES["split"].params  ->  (Param("loop", LOOP), Param("factors", FACTORS))

``arguments_from_selection`` is the one piece of widget logic worth testing without a
browser: it turns "the rows selected in the tree, in click order" plus the argument
fields into keyword arguments for :meth:`ScheduleExplorer.apply`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from mlcbench.ir import ScheduleError

__all__ = ["BUTTONS", "PRIMITIVES", "Param", "Primitive", "arguments_from_selection",
           "format_call", "parse_factors"]

# Argument kinds.
LOOP, LOOPS, BLOCK, BLOCK_OR_LOOP = "loop", "loops", "block", "block_or_loop"
FACTORS, BUFFER_READ, BUFFER_WRITE, SCOPE, VALUE = ("factors", "buffer_read", "buffer_write",
                                                    "scope", "value")
HANDLE_KINDS = (LOOP, LOOPS, BLOCK, BLOCK_OR_LOOP)
_NO_DEFAULT = object()


@dataclass(frozen=True)
class Param:
    """One argument. ``star``: passed positionally, spread (``sch.reorder(*loops)``)."""
    name: str
    kind: str
    default: object = _NO_DEFAULT
    star: bool = False

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT


@dataclass(frozen=True)
class Primitive:
    name: str
    params: tuple
    summary: str

    def signature(self) -> str:
        parts = [p.name if p.required else f"{p.name}={p.default!r}" for p in self.params]
        return f"{self.name}({', '.join(parts)})"

    def check(self, kwargs: dict) -> dict:
        """``kwargs`` with defaults filled in; ScheduleError on unknown or missing ones."""
        known = {p.name for p in self.params}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise ScheduleError(f"{self.name}: unknown argument(s) {unknown}; expected "
                                f"{self.signature()}")
        missing = [p.name for p in self.params if p.required and p.name not in kwargs]
        if missing:
            raise ScheduleError(f"{self.name}: missing argument(s) {missing}; expected "
                                f"{self.signature()}")
        return {p.name: kwargs.get(p.name, p.default) for p in self.params
                if p.name in kwargs or not p.required}


def _row(name, summary, *params) -> tuple:
    return name, Primitive(name, tuple(params), summary)


_BLOCK, _LOOP = Param("block", BLOCK), Param("loop", LOOP)
_PRESERVE = Param("preserve_unit_loops", VALUE, False)

PRIMITIVES: dict[str, Primitive] = dict([
    _row("split", "split a loop into nested loops", _LOOP, Param("factors", FACTORS)),
    _row("reorder", "reorder loops of one nest", Param("loops", LOOPS, star=True)),
    _row("fuse", "fuse nested loops into one", Param("loops", LOOPS, star=True)),
    _row("parallel", "run a loop's iterations on several threads", _LOOP),
    _row("vectorize", "turn a loop into vector instructions", _LOOP),
    _row("unroll", "unroll a loop", _LOOP),
    _row("bind", "bind a loop to a GPU index (blockIdx.x, threadIdx.x, ...)", _LOOP,
         Param("thread_axis", VALUE)),
    _row("compute_at", "move a producer block under a loop", _BLOCK, _LOOP, _PRESERVE),
    _row("reverse_compute_at", "move a consumer block under a loop", _BLOCK, _LOOP,
         _PRESERVE),
    _row("compute_inline", "inline a block into its consumers", _BLOCK),
    _row("reverse_compute_inline", "inline a block into its producer", _BLOCK),
    _row("cache_read", "read a buffer through a copy", _BLOCK,
         Param("read_buffer_index", BUFFER_READ), Param("storage_scope", SCOPE, "global")),
    _row("cache_write", "write a buffer through a copy", _BLOCK,
         Param("write_buffer_index", BUFFER_WRITE), Param("storage_scope", SCOPE, "global")),
    _row("set_scope", "change the storage scope of a written buffer", _BLOCK,
         Param("buffer_index", BUFFER_WRITE), Param("storage_scope", SCOPE)),
    _row("decompose_reduction", "separate a reduction's init before a loop", _BLOCK, _LOOP),
    _row("rfactor", "factor a reduction over a loop", _LOOP, Param("factor_axis", VALUE, 0)),
    _row("blockize", "wrap the nest under a loop into a block", Param("target", LOOP)),
    _row("add_unit_loop", "add a loop of extent 1", Param("block_or_loop", BLOCK_OR_LOOP)),
    _row("annotate", "attach an annotation", Param("block_or_loop", BLOCK_OR_LOOP),
         Param("ann_key", VALUE), Param("ann_val", VALUE)),
    _row("unannotate", "remove an annotation", Param("block_or_loop", BLOCK_OR_LOOP),
         Param("ann_key", VALUE)),
    _row("transform_layout", "re-lay out a buffer", _BLOCK, Param("buffer", VALUE),
         Param("index_map", VALUE)),
])

# The primitives that get a button, in the order shown.
BUTTONS = ("split", "reorder", "fuse", "parallel", "vectorize", "unroll", "compute_at",
           "reverse_compute_at", "compute_inline", "reverse_compute_inline", "cache_read",
           "cache_write", "decompose_reduction", "rfactor", "blockize")


def lookup(name: str) -> Primitive:
    if name not in PRIMITIVES:
        raise ScheduleError(f"unknown primitive {name!r}; the explorer offers "
                            f"{sorted(PRIMITIVES)}")
    return PRIMITIVES[name]


def parse_factors(text) -> list:
    """Split factors from a text field: ``"None, 4"`` or ``"[None, 4]"`` -> ``[None, 4]``.

    >>> parse_factors("None, 4")
    [None, 4]
    """
    if isinstance(text, (list, tuple)):
        return list(text)
    body = str(text).strip().strip("[]()")
    factors = []
    for part in body.split(","):
        part = part.strip()
        if part.lower() in ("none", "_", "?", "-1"):
            factors.append(None)
        elif part.isdigit() and int(part) > 0:
            factors.append(int(part))
        else:
            raise ScheduleError(f"split: argument 'factors': expected positive integers and "
                                f"at most one None, such as 'None, 4'; found {text!r}")
    return factors


def arguments_from_selection(primitive: str, selection: list, fields: dict) -> dict:
    """Keyword arguments for ``primitive`` from tree rows selected in click order.

    ``selection`` holds ``LoopItem``/``BlockItem`` rows; ``fields`` the argument inputs
    (``factors``, ``buffer`` index, ``scope``). Loops fill loop arguments in the order
    they were clicked, blocks fill block arguments.

    >>> arguments_from_selection("split", [loop_j], {"factors": "None, 4"})  # doctest: +SKIP
    {'loop': 'j', 'factors': [None, 4]}
    """
    spec = lookup(primitive)
    loops = [row.ref for row in selection if hasattr(row, "var")]
    blocks = [row.ref for row in selection if not hasattr(row, "var")]
    kwargs = {}
    for param in spec.params:
        value = _argument(spec, param, loops, blocks, fields)
        if value is not _NO_DEFAULT:
            kwargs[param.name] = value
    return kwargs


def _argument(spec, param, loops, blocks, fields):
    def need(what):
        raise ScheduleError(f"{spec.name} needs {what}: select it in the loop tree "
                            f"({spec.signature()})")
    if param.kind == LOOP:
        return loops.pop(0) if loops else need("a loop")
    if param.kind == LOOPS:
        return list(loops) if len(loops) >= 2 else need("two or more loops")
    if param.kind == BLOCK:
        return blocks.pop(0) if blocks else need("a block")
    if param.kind == BLOCK_OR_LOOP:
        return (blocks or loops or need("a block or a loop")).pop(0)
    if param.kind == FACTORS:
        return parse_factors(fields.get("factors", "None, 4"))
    if param.kind in (BUFFER_READ, BUFFER_WRITE):
        return int(fields.get("buffer", 0) or 0)
    if param.kind == SCOPE:
        return fields.get("scope") or param.default
    return param.default if not param.required else need(f"argument {param.name!r}")


def format_call(primitive: str, kwargs: dict) -> str:
    """``split(loop="j", factors=[None, 4])``: a step's label, in Python syntax."""
    def fmt(value):
        if isinstance(value, str):
            return json.dumps(value)
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(fmt(v) for v in value) + "]"
        return repr(value)
    return f"{primitive}({', '.join(f'{k}={fmt(v)}' for k, v in kwargs.items())})"

