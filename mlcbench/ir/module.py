"""IRModule: the unit every pass transforms -- named functions (TIR and, later, Relax)."""
from __future__ import annotations

import sys

from .node import Node, node


@node(binder=True)
class GlobalVar(Node):
    name_hint: str

    def __repr__(self):
        return f'I.GlobalVar("{self.name_hint}")'

    __str__ = __repr__


class IRModule(Node):
    """A dict-like container of functions keyed by :class:`GlobalVar` (or its name).

    ``mod["f"]`` returns the function, ``mod["f"] = func`` adds or replaces one,
    ``mod.functions.items()`` walks ``(GlobalVar, func)`` pairs. Passes return new
    modules; mutating methods exist for interactive use, as in TVM.
    """

    _binder = False

    def __init__(self, functions=None, attrs=None):
        self._functions: dict[GlobalVar, object] = {}
        self.attrs = dict(attrs or {})
        for key, func in (functions or {}).items():
            self[key] = func

    _fields = ()   # structural equality is customised below

    # -- mapping ------------------------------------------------------------------------
    @property
    def functions(self) -> dict:
        return dict(self._functions)

    def get_global_var(self, name: str) -> GlobalVar:
        for gv in self._functions:
            if gv.name_hint == name:
                return gv
        raise KeyError(f"function {name!r} is not in the module; it has "
                       f"{sorted(g.name_hint for g in self._functions)}")

    def get_global_vars(self) -> list[GlobalVar]:
        return list(self._functions)

    def __getitem__(self, key):
        gv = key if isinstance(key, GlobalVar) else self.get_global_var(key)
        return self._functions[gv]

    def __setitem__(self, key, func):
        if isinstance(key, GlobalVar):
            gv = key
        else:
            gv = next((g for g in self._functions if g.name_hint == key), None) or GlobalVar(key)
        self._functions[gv] = func

    def __contains__(self, key) -> bool:
        if isinstance(key, GlobalVar):
            return key in self._functions
        return any(g.name_hint == key for g in self._functions)

    def __iter__(self):
        return iter(self._functions)

    def __len__(self):
        return len(self._functions)

    def items(self):
        return self._functions.items()

    def update_func(self, gv, func) -> None:
        self[gv] = func

    def remove(self, key) -> None:
        gv = key if isinstance(key, GlobalVar) else self.get_global_var(key)
        del self._functions[gv]

    def with_function(self, key, func) -> "IRModule":
        """A copy with one function added or replaced (the functional form passes use)."""
        copy = self.copy()
        copy[key] = func
        return copy

    def copy(self) -> "IRModule":
        mod = IRModule(attrs=self.attrs)
        mod._functions = dict(self._functions)
        return mod

    def update(self, other: "IRModule") -> None:
        for gv, func in other.items():
            self[gv.name_hint] = func

    @staticmethod
    def from_expr(func, name: str = "main") -> "IRModule":
        symbol = getattr(func, "attrs", {}).get("global_symbol") if hasattr(func, "attrs") else None
        return IRModule({symbol or name: func})

    # -- structure ----------------------------------------------------------------------
    def _sorted(self):
        return sorted(self._functions.items(), key=lambda kv: kv[0].name_hint)

    def show(self, style: str | None = None) -> None:
        """Print as TVMScript: highlighted in Jupyter, plain text in a terminal."""
        show_text(self.script())


def as_module(obj, function_types: tuple, caller: str, error=None, name: str = "main",
              by_symbol: bool = False) -> IRModule:
    """``obj`` when it is an IRModule; a function of one of ``function_types`` as the
    module ``{name: obj}`` (``{global_symbol or name: obj}`` with ``by_symbol``); anything
    else raises ``error`` (an MLCBenchError subclass, default InvalidTypeError) saying
    what ``caller`` takes."""
    if isinstance(obj, IRModule):
        return obj
    if isinstance(obj, function_types):
        return IRModule({(by_symbol and obj.attrs.get("global_symbol")) or name: obj})
    from .errors import InvalidTypeError
    kinds = " or a ".join(t.__name__ for t in function_types)
    raise (error or InvalidTypeError)(f"{caller}: expected an IRModule or a {kinds}, found "
                                      f"{type(obj).__name__}")


def _module_structure(mod: IRModule):
    return tuple((gv.name_hint, func) for gv, func in mod._sorted())


def show_text(text: str) -> None:
    """Show TVMScript text: syntax-highlighted HTML in a notebook, plain otherwise."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and getattr(shell, "kernel", None) is not None:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
        from IPython.display import HTML, display
        html = highlight(text, PythonLexer(), HtmlFormatter(noclasses=True, style="default"))
        display(HTML(html))
    else:
        print(text)
