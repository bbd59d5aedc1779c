"""One hierarchy of errors. Messages say what was expected, what was found, and where.

Every error mlcbench raises on purpose is an :class:`MLCBenchError`. Where Python has a
built-in error for the same mistake, the class is that one too (:class:`InvalidValueError`
is a ``ValueError``, :class:`RuntimeError_` a ``RuntimeError``), so code written for TVM
or numpy that catches the built-in keeps working::

    try:
        dtype("flaot32")
    except ValueError as err:          # also an MLCBenchError
        print(err)                     # unknown dtype 'flaot32': expected e.g. 'float32', ...
"""
from __future__ import annotations


class MLCBenchError(Exception):
    """Base of every error mlcbench raises on purpose."""


class InvalidValueError(MLCBenchError, ValueError):
    """An argument of the right kind with a value that is not accepted (an unknown dtype
    or kind name, a count below one, ...)."""


class InvalidTypeError(MLCBenchError, TypeError):
    """An argument of a kind the function does not take (a str where a module was
    expected, ...)."""


class IRError(MLCBenchError):
    """IR that breaks a structural rule (wrong types, unbound variables, ...)."""


class ParseError(MLCBenchError):
    """TVMScript that cannot be parsed. ``str(err)`` shows file:line:col, the line and a caret."""

    def __init__(self, message: str, span=None, source_line: str | None = None):
        self.message, self.span, self.source_line = message, span, source_line
        super().__init__(self._render())

    def _render(self) -> str:
        if self.span is None:
            return self.message
        where = f"{self.span.source_name}:{self.span.line}:{self.span.column + 1}"
        text = f"{where}: error: {self.message}"
        if self.source_line is not None:
            caret = " " * self.span.column + "^" * max(1, self.span.width)
            text += f"\n    {self.source_line}\n    {caret}"
        return text


class ScheduleError(MLCBenchError):
    """A schedule primitive refused to act; the schedule is unchanged."""


class CodegenError(MLCBenchError):
    """IR that cannot be lowered or compiled to machine code."""


class RuntimeError_(MLCBenchError, RuntimeError):
    """Failure while running compiled code or managing devices and arrays. The trailing
    underscore keeps the name apart from the built-in, which it also is."""


class TuningError(MLCBenchError):
    """Failure in the tuner (database, measurement, search)."""


class StructuralMismatch(MLCBenchError, AssertionError):
    """Raised by ``assert_structural_equal``; names the first path that differs."""
