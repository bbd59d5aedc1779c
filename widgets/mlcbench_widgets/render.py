"""HTML for the widgets: highlighted TVMScript, highlighted diffs, side-by-side panes.

Plain functions of strings, so tests read what a learner would see. pygments (a core
dependency) is imported on first use.
"""
from __future__ import annotations

import html

from mlcbench.ir import MLCBenchError
from mlcbench.script import print_diff as unified_diff   # "" when the texts are equal

__all__ = ["error_html", "guarded", "highlight_diff", "highlight_python", "side_by_side", "unified_diff"]

_BOX = ("max-height: {height}; overflow: auto; font-size: 12px; border: 1px solid #ddd; "
        "padding: 2px 6px; background: #fafafa")


def _pygments(text: str, lexer_name: str) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import DiffLexer, PythonLexer
    lexer = DiffLexer() if lexer_name == "diff" else PythonLexer()
    return highlight(text, lexer, HtmlFormatter(noclasses=True, nobackground=True))


def _box(inner: str, height: str) -> str:
    return f'<div style="{_BOX.format(height=height)}">{inner}</div>'


def highlight_python(text: str, height: str = "420px") -> str:
    """Highlighted TVMScript (or trace code) in a scrolling box."""
    return _box(_pygments(text, "python"), height)


def highlight_diff(diff: str, height: str = "420px") -> str:
    """A highlighted unified diff; says so plainly when nothing changed."""
    if not diff:
        return _box("<i>no change</i>", height)
    return _box(_pygments(diff, "diff"), height)


def side_by_side(left: str, right: str, left_title: str = "before",
                 right_title: str = "after", height: str = "420px") -> str:
    """Two highlighted scripts next to each other."""
    def column(title, text):
        return (f'<div style="flex: 1; min-width: 0"><b>{html.escape(title)}</b>'
                f"{highlight_python(text, height)}</div>")
    return (f'<div style="display: flex; gap: 8px">{column(left_title, left)}'
            f"{column(right_title, right)}</div>")


def error_html(message: str) -> str:
    """A refused primitive or a failed run, shown where the learner clicked."""
    return (f'<pre style="color: #a00; background: #fff4f4; border: 1px solid #e99; '
            f'padding: 4px; white-space: pre-wrap; max-height: 300px; overflow: auto">'
            f"{html.escape(message)}</pre>")


def guarded(message, action) -> bool:
    """Run ``action``; an MLCBenchError is shown in the ``message`` widget (anything with
    a ``value``) instead of raised, so a refused click changes nothing but the message."""
    message.value = ""
    try:
        action()
        return True
    except MLCBenchError as err:
        message.value = error_html(f"{type(err).__name__}: {err}")
        return False
