"""What TVMScript read from text may reach: data is parsed, never run.

A decorated function in the user's notebook is the user's own code: its expressions
see the function's globals, closure and Python's builtins. Text read from a file, a
tuning database, a trace or a log is data, so :func:`mlcbench.script.from_source` and
every loader built on it evaluate it under this policy:

- names: what the script binds, the ``T``/``I``/``R`` namespaces (and aliases that
  ``from tvm.script import tir as T`` binds), and ``range``; no other builtins;
- attributes: only public members of those namespaces and of the IR values the script
  builds, never a name with a leading underscore, never a module outside the TVMScript
  vocabulary (``R.sys`` is there for the namespace's own use, not for text), never a
  registry or a function with side effects (``R.register_op``);
- calls: only to what those attributes give (TVMScript constructors, IR operators);
- constants: arithmetic whose result stays small (``10 ** 10 ** 10`` and ``"a" * 10 ** 9``
  are refused before they are computed).

A refusal is a :class:`ParseError` at the offending construct, naming it.
"""
from __future__ import annotations

import importlib
import numbers
import operator
import re
import types

# Namespaces (modules) whose public members are TVMScript vocabulary ...
_NAMESPACE_MODULES = ("mlcbench.script.tir.", "mlcbench.script.ir.", "mlcbench.script.relax.",
                      "mlcbench.relax.tvmscript.namespace.", "mlcbench.relax.op.")
# ... and where the functions and classes they hand out, and the IR values, are defined
# (not the parser's own machinery: an Evaluator or Source built by text could be trusted).
_IR_MODULES = _NAMESPACE_MODULES + (
    "mlcbench.script.parser.t_expr.", "mlcbench.script.parser.t_stmt.",
    "mlcbench.script.parser.entry.", "mlcbench.script.parser.",
    "mlcbench.script.parser.text_policy.", "mlcbench.ir.", "mlcbench.tir.expr.",
    "mlcbench.tir.op.", "mlcbench.tir.stmt.", "mlcbench.tir.buffer.", "mlcbench.tir.function.",
    "mlcbench.relax.expr.", "mlcbench.relax.struct_info.")
# Registries change what later code does.
_DENIED_MODULES = ("mlcbench.relax.op.registry.", "mlcbench.ir.transform.",
                   "mlcbench.ir.instrument.")
_DENIED_NAMES = re.compile(r"^(register|unregister|load|save|export|import|exec|eval|compile|"
                           r"build|run|system|open|remove|delete)(_|$)")
# The namespaces text may import, by the module name it spells (tvm.* = mlcbench.*).
SCRIPT_NAMESPACES = {"ir": "I", "tir": "T", "relax": "R"}
_DECORATORS = {"prim_func", "ir_module", "function", "module_attrs", "decorate_function"}
_PLAIN_DATA = (bool, numbers.Number, str, bytes, type(None))
_MAX_CONSTANT_BITS = 4096
_MAX_SEQUENCE = 1 << 16


class RefusedText(Exception):
    """Text that reaches outside the policy; the parser turns it into a ParseError."""


class TextPackage:
    """A package as text sees it: only the members given. ``import tvm`` (or ``import
    mlcbench``) gives ``tvm.script`` (the namespaces and decorators, for
    ``@tvm.script.ir_module``) and ``tvm.tir`` (the 2022 course's ``tir.max``), no more."""

    def __init__(self, **members):
        self.__dict__.update(members)

    @staticmethod
    def top_level() -> "TextPackage":
        from .. import ir as I_ns, relax as R_ns, tir as T_ns  # noqa: N812
        script = TextPackage(ir=I_ns, tir=T_ns, relax=R_ns, ir_module=I_ns.ir_module,
                             prim_func=T_ns.prim_func)
        return TextPackage(script=script, tir=T_ns)


def text_namespaces() -> dict:
    """The names text starts with: ``T``, ``I``, ``R`` and (older spellings) ``tir``."""
    from .. import ir as I_ns, relax as R_ns, tir as T_ns  # noqa: N812
    return {"T": T_ns, "I": I_ns, "R": R_ns, "tir": T_ns}


def import_target(module: str):
    """The module ``import``/``from ... import`` in text means: ``tvm.script`` and
    ``mlcbench.script`` (and their ir/tir/relax), or :class:`TextPackage` for a bare
    ``tvm``/``mlcbench``; anything else is refused."""
    if module in ("tvm", "mlcbench"):
        return TextPackage.top_level()
    name = "mlcbench" + module[3:] if module.startswith("tvm.") else module
    if name == "mlcbench.script":
        return TextPackage.top_level().script
    if name not in {f"mlcbench.script.{n}" for n in SCRIPT_NAMESPACES}:
        raise RefusedText(f"text may import only the TVMScript namespaces "
                          f"(`from tvm.script import ir as I, tir as T, relax as R`), "
                          f"found an import of '{module}'")
    return importlib.import_module(name)


def attribute(owner, name: str):
    """``owner.name`` if text may read it, else :class:`RefusedText`."""
    if name.startswith("_"):
        raise RefusedText(f"attribute '{name}': names with a leading underscore are not "
                          "accessible from text")
    if not _is_vocabulary(owner):
        raise RefusedText(f"attribute '{name}' of a {type(owner).__name__}: text may read "
                          "attributes of the T, I and R namespaces and of IR values only")
    value = getattr(owner, name)        # AttributeError: the caller names the owner
    if _DENIED_NAMES.match(name) or not (_is_vocabulary(value) or isinstance(value, _PLAIN_DATA)):
        raise RefusedText(f"attribute '{name}' ({_describe(value)}) is not TVMScript "
                          "vocabulary, so text may not use it")
    return value


def check_callable(func) -> None:
    """Refuse calling anything but TVMScript constructors and IR operators (decorators
    read the caller's frame: text uses them as decorators only)."""
    if not _is_vocabulary(func):
        raise RefusedText(f"calling {_describe(func)}: text may call only the functions of "
                          "the T, I and R namespaces")
    if getattr(func, "__name__", None) in _DECORATORS:
        raise RefusedText(f"{func.__name__} is a decorator: text may use it only as "
                          f"`@...{func.__name__}`")


def _is_vocabulary(value) -> bool:
    if isinstance(value, types.ModuleType):
        return _in_modules(value.__name__, _NAMESPACE_MODULES)
    if isinstance(value, (types.FunctionType, types.MethodType, type)):
        module = getattr(value, "__module__", None) or ""
        owner = getattr(value, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            module = type(owner).__module__ if not isinstance(owner, type) else owner.__module__
        return _in_modules(module, _IR_MODULES)
    if callable(value) or hasattr(value, "__dict__") or hasattr(value, "__slots__"):
        return _in_modules(type(value).__module__, _IR_MODULES)
    return False


def _in_modules(module: str, prefixes: tuple) -> bool:
    """``module`` is one of ``prefixes`` (written ``"a.b."``) or inside one; a prefix
    ending ``"parser."`` names the package's own ``__init__`` only, not its modules."""
    module += "."
    if module.startswith(_DENIED_MODULES):
        return False
    return any(module == p if p.endswith("parser.") else module.startswith(p)
               for p in prefixes)


def _describe(value) -> str:
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    name = getattr(value, "__qualname__", None) or type(value).__name__
    module = getattr(value, "__module__", None) or type(value).__module__
    return f"{module}.{name}"


# -- bounded constant arithmetic ------------------------------------------------------------

def check_operands(op, left, right) -> None:
    """Refuse constant arithmetic whose result would be huge, before computing it."""
    ints = isinstance(left, int) and isinstance(right, int)
    if op is operator.pow and ints and right > 0 \
            and max(left.bit_length(), 1) * right > _MAX_CONSTANT_BITS:
        raise RefusedText(f"constant {left} ** {right} is too large (more than "
                          f"{_MAX_CONSTANT_BITS} bits)")
    if op is operator.lshift and ints and left.bit_length() + right > _MAX_CONSTANT_BITS:
        raise RefusedText(f"constant {left} << {right} is too large (more than "
                          f"{_MAX_CONSTANT_BITS} bits)")
    if op is operator.mul:
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, (str, bytes, list, tuple)) and isinstance(count, int) \
                    and len(seq) * count > _MAX_SEQUENCE:
                raise RefusedText(f"repeating a {type(seq).__name__} {count} times makes "
                                  f"more than {_MAX_SEQUENCE} elements")
