"""IndexMap: a multi-dimensional index transformation written as a Python lambda.

``IndexMap.from_func(lambda i, j: (i // 32, j, i % 32))`` maps an element ``[i, j]``
of a 2-d buffer to ``[i // 32, j, i % 32]`` of a 3-d one. The map keeps the lambda's
source text, so a trace can print it back as runnable Python and store it in JSON::

    m = IndexMap.from_func(lambda i, j: (i // 32, j, i % 32))
    m.as_python()                    # 'lambda i, j: (i // 32, j, i % 32)'
    m.map_indices([vi, vj])          # [vi // 32, vj, vi % 32]
"""
from __future__ import annotations

import inspect

from ...expr import Var, convert
from ...functor import substitute
from ....ir.errors import ScheduleError


def _lambda_from_text(text: str):
    from ....script.parser.lambda_text import lambda_from_text
    return lambda_from_text(text)


class IndexMap:
    """``initial_indices`` (Vars) mapped to ``final_indices`` (expressions of them)."""

    def __init__(self, initial_indices, final_indices, fn=None):
        self.initial_indices = tuple(initial_indices)
        self.final_indices = tuple(convert(e) for e in final_indices)
        self._fn = fn

    @staticmethod
    def from_func(fn, ndim: int | None = None, dtype: str = "int32") -> "IndexMap":
        """Build the map by calling ``fn`` on fresh index variables named like its
        parameters (``*args`` lambdas take ``ndim`` variables)."""
        params = list(inspect.signature(fn).parameters.values())
        if any(p.kind == p.VAR_POSITIONAL for p in params):
            if ndim is None:
                raise ScheduleError("IndexMap.from_func: a *args index map needs ndim")
            names = [f"i{n}" for n in range(ndim)]
        else:
            names = [p.name for p in params]
        variables = [Var(name, dtype) for name in names]
        result = fn(*variables)
        result = result if isinstance(result, (tuple, list)) else (result,)
        return IndexMap(variables, result, fn)

    @staticmethod
    def from_text(text: str) -> "IndexMap":
        """Parse ``"lambda i, j: (...)"`` (``T.`` functions allowed): text from a trace
        or a database is parsed as TVMScript, never run as Python."""
        return IndexMap.from_func(_lambda_from_text(text))

    @property
    def ndim(self) -> int:
        return len(self.initial_indices)

    def map_indices(self, indices) -> list:
        vmap = dict(zip(self.initial_indices, (convert(i) for i in indices)))
        return [substitute(e, vmap) for e in self.final_indices]

    def as_python(self) -> str:
        args = ", ".join(v.name for v in self.initial_indices)
        outs = ", ".join(str(e) for e in self.final_indices)
        if len(self.final_indices) == 1:
            outs += ","
        return f"lambda {args}: ({outs})"

    def as_json_value(self) -> dict:
        return {"index_map": self.as_python()}

    def python_callable(self):
        """A Python callable of the map (to evaluate it on numpy index arrays)."""
        return self._fn or _lambda_from_text(self.as_python())

    def __repr__(self):
        return self.as_python()


def as_index_map(value, ndim: int) -> IndexMap:
    """An IndexMap from a lambda, an IndexMap, a lambda's text or its JSON form."""
    if isinstance(value, dict) and "index_map" in value:
        value = value["index_map"]
    if isinstance(value, str):
        value = IndexMap.from_text(value)
    elif callable(value) and not isinstance(value, IndexMap):
        value = IndexMap.from_func(value, ndim)
    if not isinstance(value, IndexMap) and hasattr(value, "final_indices"):
        value = IndexMap(value.initial_indices, value.final_indices)
    if not isinstance(value, IndexMap):
        raise ScheduleError(f"transform_layout: expected an index map such as "
                            f"'lambda i, j: (i // 32, j, i % 32)', found {value!r}")
    return value
