"""The global function registry: Python functions that compiled code and the VM call by name.

Relax's ``R.call_dps_packed("env.relu", ...)`` names a function registered here:

>>> @register_func("doc.twice", override=True)
... def twice(x):
...     return 2 * x
>>> get_global_func("doc.twice")(21)
42
>>> remove_global_func("doc.twice")

Registering a name that exists raises ``ValueError`` unless ``override=True``, so two
libraries cannot silently replace each other's functions.
"""
from __future__ import annotations

from typing import Callable

from .errors import ArgumentTypeError, ArgumentValueError

_REGISTRY: dict[str, Callable] = {}


def _add(name: str, func: Callable, override: bool) -> Callable:
    if not isinstance(name, str) or not name:
        raise ArgumentTypeError(f"register_func: the name must be a non-empty str, found {name!r}")
    if not callable(func):
        raise ArgumentTypeError(f"register_func({name!r}): expected a callable, "
                                f"found {type(func).__name__}")
    if name in _REGISTRY and not override:
        raise ArgumentValueError(f"register_func: global function {name!r} is already registered; "
                                 "pass override=True to replace it")
    _REGISTRY[name] = func
    return func


def register_func(name_or_func=None, f: Callable | None = None, override: bool = False):
    """Register a global function; usable three ways.

    - ``@register_func("env.relu", override=True)`` registers under the given name;
    - ``@register_func`` (no parentheses) registers under the function's ``__name__``;
    - ``register_func("env.relu", relu)`` registers directly.

    Returns the function itself (or a decorator), so the decorated name stays usable.
    """
    if callable(name_or_func) and f is None:
        return _add(name_or_func.__name__, name_or_func, override)
    if f is not None:
        return _add(name_or_func, f, override)

    def decorate(func: Callable) -> Callable:
        return _add(func.__name__ if name_or_func is None else name_or_func, func, override)

    return decorate


def get_global_func(name: str, allow_missing: bool = False):
    """The function registered as ``name``; ``None`` when missing and ``allow_missing``."""
    func = _REGISTRY.get(name)
    if func is None and not allow_missing:
        raise ArgumentValueError(f"no global function named {name!r} is registered "
                                 f"({len(_REGISTRY)} are; see list_global_func_names())")
    return func


def list_global_func_names() -> list[str]:
    """The registered names, sorted."""
    return sorted(_REGISTRY)


def remove_global_func(name: str) -> None:
    """Unregister ``name``; raises ``ValueError`` if it is not registered."""
    if name not in _REGISTRY:
        raise ArgumentValueError(f"remove_global_func: no global function named {name!r}")
    del _REGISTRY[name]
