"""A lambda read from text (a trace's index map): parsed, never ``eval``-ed.

>>> fn = lambda_from_text("lambda i, j: (i // 32, j, i % 32)")
>>> fn(70, 3)
(2, 3, 6)

The body is evaluated by the TVMScript :class:`Evaluator` under the text policy, with
the parameters bound to whatever the caller passes: ``tir.Var`` index variables to build
an :class:`IndexMap`, numpy index grids to evaluate it on every element.
"""
from __future__ import annotations

import ast
import inspect

from ...ir.errors import ParseError
from . import text_policy
from .evaluator import Evaluator
from .source import Source


def lambda_from_text(text: str, source_name: str = "<index map>"):
    """A callable of ``text`` (``"lambda i, j: ..."``) whose parameters are its positional
    parameters; anything but such a lambda is a ParseError."""
    if not isinstance(text, str):
        raise ParseError(f"{source_name}: expected the text of a lambda such as "
                         f"'lambda i, j: (i // 32, j, i % 32)', found {type(text).__name__}")
    source = Source(text, source_name)
    tree = source.parse()
    body = tree.body[0].value if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) \
        else None
    if not isinstance(body, ast.Lambda):
        node = tree.body[0] if tree.body else tree
        raise source.error(node, "expected a lambda such as 'lambda i, j: (i // 32, j, i % 32)'")
    arguments = body.args
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.defaults \
            or arguments.posonlyargs:
        raise source.error(body, "an index map's lambda takes plain positional parameters "
                                 "only (no defaults, *args or keywords)")
    names = [a.arg for a in arguments.args]

    def evaluate(*values):
        if len(values) != len(names):
            raise ParseError(f"{source_name}: the lambda takes {len(names)} indices, "
                             f"given {len(values)}")
        evaluator = Evaluator(source, text_policy.text_namespaces())
        for name, value in zip(names, values):
            evaluator.bind(name, value)
        return evaluator.eval(body.body)

    evaluate.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    return evaluate
