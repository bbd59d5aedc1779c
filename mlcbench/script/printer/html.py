"""Syntax-highlighted TVMScript as HTML, for notebooks (``mod.show()``) and widgets.

pygments is imported on first use only, so ``import mlcbench`` stays fast.
"""
from __future__ import annotations


def highlight(text: str, style: str = "default") -> str:
    """HTML with inline styles (no stylesheet needed), e.g. for ``IPython.display.HTML``.

    >>> highlight("x = 1").startswith("<div")
    True
    """
    from pygments import highlight as _pygments_highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer
    formatter = HtmlFormatter(noclasses=True, style=style or "default")
    return _pygments_highlight(text, PythonLexer(), formatter)
