"""Schedule errors that teach: the primitive, the broken rule, and the IR marked.

Example message::

    split: argument 'factors': the factors [32, 4] multiply to 128, less than the
    extent 129 of loop 'j'. 129 is not divisible by 4; pass factors=[None, 4] to get a
    predicate, or use 3 x 43.

        for i, j in T.grid(128, 129):   # <-- here
            ...
"""
from __future__ import annotations

from ...ir.errors import ScheduleError
from ..expr import Var
from ..function import PrimFunc
from ..functor import substitute
from ..stmt import BlockRealize
from .ir_utils import find_all, replace_stmts

MARK = "  # <-- here"

# Schedule(error_render_level=...): as in TVM, "detail" shows the IR with the offending
# loops and blocks marked, "fast" the one-line message, "none" no message at all
RENDER_LEVELS = ("detail", "fast", "none")
NOT_RENDERED = "(not rendered: the schedule was created with error_render_level='none')"


def marked_script(func: PrimFunc, loops=(), blocks=()) -> str:
    """The function's TVMScript with the lines of ``loops``/``blocks`` marked.

    The offending loop vars and block names are temporarily renamed to unique tokens so
    the printed lines can be found exactly, then restored.
    """
    tokens = {}
    vmap = {}
    for n, var in enumerate(loops):
        token = f"__mark_loop_{n}__"
        tokens[token] = var.name
        vmap[var] = Var(token, var.dtype)
    marked = func.with_body(substitute(func.body, vmap)) if vmap else func
    renames = {}
    for n, name in enumerate(blocks):
        token = f"__mark_block_{n}__"
        tokens[token] = name
        for hit in find_all(marked, lambda s, nm=name: isinstance(s, BlockRealize)
                            and s.block.name_hint == nm):
            renames[hit.node] = hit.node.replace(block=hit.node.block.replace(name_hint=token))
    if renames:
        marked = replace_stmts(marked, renames)
    lines = []
    for line in marked.script().splitlines():
        hit = any(token in line for token in tokens) and ("for " in line or "T.block(" in line)
        for token, original in tokens.items():
            line = line.replace(token, original)
        lines.append(line + MARK if hit else line)
    return "\n".join(lines)


class _MarkedScheduleError(ScheduleError):
    """A ScheduleError whose marked function is printed when the message is first read:
    sampling (``sample_compute_location``) tries many illegal moves and drops the errors."""

    def __init__(self, head: str, func: PrimFunc, loops, blocks):
        super().__init__(head)
        self._head, self._where, self._text = head, (func, tuple(loops), tuple(blocks)), None

    def __str__(self):
        if self._text is None:
            try:
                script = marked_script(*self._where)
            except Exception:   # the message must never be lost because printing failed
                script = "(the function could not be printed)"
            self._text = f"{self._head}\n\nin the function:\n{script}"
        return self._text

    def __reduce__(self):        # pickles (to a worker's parent) as its full message
        return ScheduleError, (str(self),)


def render_at(err: ScheduleError, level: str) -> None:
    """Make ``err`` read as a schedule with ``error_render_level=level`` shows it."""
    if level == "detail":
        return
    if isinstance(err, _MarkedScheduleError):
        err._text = err._head if level == "fast" else NOT_RENDERED
    elif level == "none":     # other errors carry no IR: "fast" leaves them as they are
        err.args = (NOT_RENDERED,)


def fail(primitive: str, rule: str, func: PrimFunc, loops=(), blocks=()):
    """Raise ScheduleError: ``"<primitive>: <rule>"`` followed by the marked function."""
    raise _MarkedScheduleError(f"{primitive}: {rule}", func, loops, blocks)
