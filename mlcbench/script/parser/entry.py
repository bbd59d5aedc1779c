"""Entry points: ``@T.prim_func``, ``@I.ir_module`` and ``from_source(text)``.

The decorators read the decorated object's source with :mod:`inspect` and parse it;
the function body never runs. Names the body uses but does not define (``n = 128`` in
the enclosing module or function) come from the function's globals and closure.

Other function kinds (Relax's ``@R.function``) plug in with
:func:`register_function_parser`; ``@I.ir_module`` then parses them too.
"""
from __future__ import annotations

import ast
import functools
import sys
from dataclasses import dataclass, field
from typing import Callable

from ...ir.errors import ParseError
from ...ir.module import GlobalVar, IRModule
from . import text_policy
from .evaluator import Evaluator
from .source import Source

# decorator object -> parse(fdef, source, env, module_context, **decorator_kwargs)
_FUNCTION_PARSERS: dict = {}


def register_function_parser(decorator, parse: Callable) -> None:
    """Teach ``I.ir_module``/``from_source`` a function kind: ``parse(fdef, source, env,
    module, **kwargs)`` returns the IR function for the ``ast.FunctionDef`` ``fdef``."""
    _FUNCTION_PARSERS[decorator] = parse


@dataclass
class ModuleContext:
    """What the functions of one ``@I.ir_module`` class share while being parsed."""
    global_vars: dict = field(default_factory=dict)   # name -> GlobalVar
    attrs: dict = field(default_factory=dict)
    # The class's own name: inside it, ``cls = Module`` names the module being defined
    # (as TVM prints it), not whatever an earlier cell bound to that name.
    name: str | None = None


@dataclass
class DeferredFunction:
    """A function decorated inside an ``@I.ir_module`` class, parsed with the class."""
    func: Callable
    decorator: object
    kwargs: dict
    env: dict

    def parse(self, module: ModuleContext):
        source, fdef = function_source(self.func)
        return _FUNCTION_PARSERS[self.decorator](fdef, source, self.env, module, **self.kwargs)


# -- Python objects ---------------------------------------------------------------------

def function_source(func) -> tuple[Source, ast.FunctionDef]:
    """The dedented source of ``func`` and its ``ast`` definition."""
    import inspect
    try:
        lines, first_line = inspect.getsourcelines(func)
        name = inspect.getsourcefile(func) or func.__code__.co_filename
    except (OSError, TypeError) as err:
        raise ParseError(f"cannot read the source of {getattr(func, '__name__', func)!r} "
                         f"({err}); parse text with mlcbench.script.from_source instead") from None
    source = Source.from_lines(lines, name, max(first_line, 1))
    tree = source.parse()
    fdef = next((s for s in tree.body if isinstance(s, ast.FunctionDef)), None)
    if fdef is None:
        raise ParseError(f"{name}:{first_line}: expected a function definition")
    return source, fdef


def python_env(func, frame) -> dict:
    """Names visible to ``func``: its globals, the defining frame's locals, its closure."""
    env = dict(getattr(func, "__globals__", {}))
    if frame is not None:
        outer = frame.f_back if _is_class_body(frame) else None
        if outer is not None:
            env.update(outer.f_locals)
        env.update(frame.f_locals)
    code = getattr(func, "__code__", None)
    for name, cell in zip(code.co_freevars if code else (), func.__closure__ or ()):
        try:
            env[name] = cell.cell_contents
        except ValueError:      # a closure variable not assigned yet
            pass
    return env


def _is_class_body(frame) -> bool:
    return frame is not None and "__qualname__" in frame.f_locals \
        and "__module__" in frame.f_locals


def _short_traceback(parse):
    """Show a ParseError without the parser's own frames: the message has the location."""
    @functools.wraps(parse)
    def run(*args, **kwargs):
        try:
            return parse(*args, **kwargs)
        except ParseError as err:
            raise err.with_traceback(None) from None
    return run


@_short_traceback
def decorate_function(func, decorator, kwargs: dict, frame):
    """Parse ``func`` now, or defer it when it sits in a class body (an ir_module)."""
    env = python_env(func, frame)
    if _is_class_body(frame):
        return DeferredFunction(func, decorator, kwargs, env)
    source, fdef = function_source(func)
    return _FUNCTION_PARSERS[decorator](fdef, source, env, None, **kwargs)


@_short_traceback
def ir_module(cls) -> IRModule:
    """``@I.ir_module class Module: ...`` -> an IRModule of the decorated functions."""
    members = [(name, value) for name, value in vars(cls).items()
               if isinstance(value, DeferredFunction)]
    context = ModuleContext({name: GlobalVar(name) for name, _ in members},
                            dict(vars(cls).get("__module_attrs__", {})), cls.__name__)
    module = IRModule(attrs=context.attrs)
    for name, member in members:
        module[context.global_vars[name]] = member.parse(context)
    return module


def module_attrs(attrs: dict) -> None:
    """``I.module_attrs({...})`` inside an ir_module class: attributes of the module."""
    frame = sys._getframe(1)
    if _is_class_body(frame):
        frame.f_locals["__module_attrs__"] = dict(attrs)


# -- text -------------------------------------------------------------------------------

@_short_traceback
def from_source(text: str, source_name: str = "<string>"):
    """Parse TVMScript text (as ``mod.script()`` prints it) to an IRModule or PrimFunc.

    The text is data, never run: it may use the ``T``/``I``/``R`` namespaces and what it
    binds itself, nothing else (:mod:`.text_policy`).

    >>> mod = from_source(mod.script())      # structurally equal to mod
    """
    if not isinstance(text, str):
        raise ParseError(f"from_source: expected TVMScript text (str), found "
                         f"{type(text).__name__}")
    source = Source(text, source_name)
    tree = source.parse()
    evaluator = Evaluator(source, text_policy.text_namespaces())
    definitions = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            _bind_import(stmt, evaluator)
        elif isinstance(stmt, (ast.ClassDef, ast.FunctionDef)):
            definitions.append(stmt)
        elif not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            raise source.error(stmt, "expected `@I.ir_module class ...` or "
                                     "`@T.prim_func def ...`")
    if len(definitions) != 1:
        node = definitions[1] if definitions else (tree.body[0] if tree.body else tree)
        raise source.error(node, f"expected exactly one @I.ir_module class or @T.prim_func "
                                 f"function, found {len(definitions)}")
    (definition,) = definitions
    if isinstance(definition, ast.ClassDef):
        return _parse_class(definition, source, evaluator)
    return _parse_function_def(definition, source, evaluator, None)


def _bind_import(stmt, evaluator: Evaluator) -> None:
    """``from tvm.script import tir as T`` binds T to mlcbench.script.tir; text may import
    nothing else (``import tvm`` gives it only ``tvm.script`` and ``tvm.tir``)."""
    def load(module_name: str):
        try:
            return text_policy.import_target(module_name)
        except text_policy.RefusedText as err:
            raise evaluator.error(stmt, str(err)) from None

    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname is None and "." in alias.name:
                raise evaluator.error(stmt, f"write `import {alias.name} as T` (or I, R): "
                                            "text binds the TVMScript namespaces by name")
            evaluator.env[alias.asname or alias.name] = load(alias.name)
        return
    module = load(stmt.module or "")
    for alias in stmt.names:
        if alias.name not in text_policy.SCRIPT_NAMESPACES:
            raise evaluator.error(stmt, f"text may import only the TVMScript namespaces "
                                        f"{sorted(text_policy.SCRIPT_NAMESPACES)} from "
                                        f"{stmt.module}, found '{alias.name}'")
        evaluator.env[alias.asname or alias.name] = load(f"{stmt.module}.{alias.name}")


def _decorator(node: ast.expr, evaluator: Evaluator):
    """(decorator object, keyword arguments) of ``@T.prim_func(private=True)``."""
    if isinstance(node, ast.Call):
        if node.args or any(k.arg is None for k in node.keywords):
            raise evaluator.error(node, f"decorator {ast.unparse(node.func)} takes keyword "
                                        "arguments only, such as private=True")
        kwargs = {k.arg: evaluator.eval(k.value) for k in node.keywords}
        return evaluator.eval(node.func), kwargs
    return evaluator.eval(node), {}


def _parse_function_def(fdef: ast.FunctionDef, source: Source, evaluator: Evaluator, module):
    for node in fdef.decorator_list:
        decorator, kwargs = _decorator(node, evaluator)
        if decorator in _FUNCTION_PARSERS:
            return _FUNCTION_PARSERS[decorator](fdef, source, evaluator.env, module, **kwargs)
    raise source.error(fdef, f"function '{fdef.name}' needs a decorator such as @T.prim_func")


def _parse_class(cdef: ast.ClassDef, source: Source, evaluator: Evaluator) -> IRModule:
    from .. import ir as I_ns  # noqa: N812
    if not any(_decorator(d, evaluator)[0] is I_ns.ir_module for d in cdef.decorator_list):
        raise source.error(cdef, f"class '{cdef.name}' needs the @I.ir_module decorator")
    functions = [s for s in cdef.body if isinstance(s, ast.FunctionDef)]
    context = ModuleContext({f.name: GlobalVar(f.name) for f in functions}, name=cdef.name)
    for stmt in cdef.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and ast.unparse(stmt.value.func).endswith("module_attrs"):
            context.attrs.update(evaluator.eval(stmt.value.args[0]))
        elif not isinstance(stmt, ast.FunctionDef) and not (
                isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            raise source.error(stmt, "an @I.ir_module class holds only decorated functions")
    module = IRModule(attrs=context.attrs)
    for fdef in functions:
        module[context.global_vars[fdef.name]] = _parse_function_def(fdef, source, evaluator,
                                                                     context)
    return module
