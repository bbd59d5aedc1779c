"""Where parsed text came from, so errors can point into the user's real file.

A decorated function's source is cut out of its file and dedented before Python's
``ast`` reads it; :class:`Source` maps the ``ast`` positions back, so an error reads::

    /home/me/kernels.py:12:9: error: undefined variable 'Z'
                    Z[vi] = A[vi]
                    ^
"""
from __future__ import annotations

import ast
import threading

from ...ir.errors import ParseError
from ...ir.span import Span

# CPython 3.11 keeps the AST constructor's recursion depth per interpreter, not per
# thread: two threads parsing at once can fail with "SystemError: AST constructor
# recursion depth mismatch" (seen with tuning threads beside a database load).
PARSE_LOCK = threading.Lock()
# Code outside mlcbench parses without the lock (dask's config reads environment values
# with ast.literal_eval in its scheduler thread); each parse starts from a fresh depth, so
# a parse that met one is tried again.
PARSE_ATTEMPTS = 4


def parse_python(text: str, mode: str = "exec") -> ast.AST:
    """``ast.parse(text, mode=mode)``, one thread at a time (see ``PARSE_LOCK``)."""
    for _ in range(PARSE_ATTEMPTS - 1):
        try:
            with PARSE_LOCK:
                return ast.parse(text, mode=mode)
        except SystemError as err:
            if "recursion depth mismatch" not in str(err):
                raise
    with PARSE_LOCK:
        return ast.parse(text, mode=mode)


class Source:
    """Text given to ``ast`` plus the way back to the original lines.

    ``first_line`` is the file line of the text's first line; ``indent`` the number of
    columns removed from every line by dedenting. ``trusted`` is true for the user's own
    decorated functions; text (a file, a database, a log) is parsed under
    :mod:`.text_policy`.
    """

    def __init__(self, text: str, name: str = "<string>", first_line: int = 1,
                 indent: int = 0, raw_lines: list[str] | None = None, trusted: bool = False):
        self.text, self.name, self.trusted = text, name, trusted
        self.first_line, self.indent = first_line, indent
        self.raw_lines = raw_lines if raw_lines is not None else text.splitlines()

    @staticmethod
    def from_lines(lines: list[str], name: str, first_line: int) -> "Source":
        """Dedent ``lines`` (as ``inspect.getsourcelines`` returns them)."""
        raw = [line.rstrip("\n") for line in lines]
        indent = min((len(l) - len(l.lstrip()) for l in raw if l.strip()), default=0)
        text = "\n".join(l[indent:] if l.strip() else "" for l in raw) + "\n"
        return Source(text, name, first_line, indent, raw, trusted=True)

    def parse(self) -> ast.Module:
        try:
            return parse_python(self.text)
        except RecursionError:
            raise self._error_at(1, 0, None, None, "the text nests too deeply for Python's "
                                 "parser (split long expressions into named parts)") from None
        except (SyntaxError, ValueError) as err:     # ValueError: a NUL byte in the text
            lineno = getattr(err, "lineno", None) or 1
            column = max((getattr(err, "offset", None) or 1) - 1, 0)
            message = getattr(err, "msg", None) or str(err)
            raise self._error_at(lineno, column, None, None, f"invalid syntax: {message}") from None

    def span(self, node: ast.AST) -> Span:
        lineno = getattr(node, "lineno", 1)
        column = getattr(node, "col_offset", 0) + self.indent
        end_line = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        return Span(self.name, lineno + self.first_line - 1, column,
                    None if end_line is None else end_line + self.first_line - 1,
                    None if end_col is None else end_col + self.indent)

    def error(self, node: ast.AST, message: str) -> ParseError:
        """A ParseError pointing at ``node`` (to be raised by the caller)."""
        return self._error_at(getattr(node, "lineno", 1), getattr(node, "col_offset", 0),
                              getattr(node, "end_lineno", None),
                              getattr(node, "end_col_offset", None), message)

    def _error_at(self, lineno, column, end_lineno, end_column, message) -> ParseError:
        span = Span(self.name, lineno + self.first_line - 1, column + self.indent,
                    None if end_lineno is None else end_lineno + self.first_line - 1,
                    None if end_column is None else end_column + self.indent)
        line = self.raw_lines[lineno - 1] if 0 < lineno <= len(self.raw_lines) else None
        return ParseError(message, span, line)
