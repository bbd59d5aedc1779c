"""Pass infrastructure: every arrow of the compiler is a Pass over an IRModule.

A :class:`PassContext` carries ``opt_level``, extra config and *instruments*; every
pass run inside it calls each instrument's ``run_before_pass(mod, info)`` and
``run_after_pass(mod, info)``. That single hook is what ``PrintAfterAll``, pass
timing and the pass-viewer widget use.

Example::

    @mlcbench.transform.module_pass(opt_level=0, name="Identity")
    def identity(mod, ctx):
        return mod

    with PassContext(instruments=[PrintAfterAll()]):
        mod = Sequential([identity])(mod)
"""
from __future__ import annotations

import functools
import inspect
import threading
from dataclasses import dataclass

from .errors import InvalidTypeError, MLCBenchError
from .module import IRModule


@dataclass(frozen=True)
class PassInfo:
    opt_level: int
    name: str
    required: tuple = ()
    traceable: bool = False


class PassContext:
    """Settings for the passes run inside ``with PassContext(...):``."""

    _local = threading.local()

    def __init__(self, opt_level: int = 2, required_pass=(), disabled_pass=(),
                 instruments=(), config=None):
        self.opt_level = opt_level
        self.required_pass = tuple(required_pass)
        self.disabled_pass = tuple(disabled_pass)
        self.instruments = list(instruments)
        self.config = dict(config or {})

    @classmethod
    def current(cls) -> "PassContext":
        stack = getattr(cls._local, "stack", None)
        if not stack:
            cls._local.stack = stack = [PassContext()]
        return stack[-1]

    def __enter__(self):
        PassContext.current()
        PassContext._local.stack.append(self)
        for inst in self.instruments:
            _call(inst, "enter_pass_ctx")
        return self

    def __exit__(self, *exc):
        for inst in self.instruments:
            _call(inst, "exit_pass_ctx")
        PassContext._local.stack.pop()
        return False

    def pass_enabled(self, info: PassInfo) -> bool:
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return self.opt_level >= info.opt_level

    def override_instruments(self, instruments) -> None:
        for inst in self.instruments:
            _call(inst, "exit_pass_ctx")
        self.instruments = list(instruments)
        for inst in self.instruments:
            _call(inst, "enter_pass_ctx")


def _call(inst, method, *args):
    fn = getattr(inst, method, None)
    return fn(*args) if fn is not None else None


class Pass:
    """A transformation of IRModules. Call it: ``new_mod = pass_(mod)``."""

    info: PassInfo

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        raise NotImplementedError

    def __call__(self, mod: IRModule) -> IRModule:
        if not isinstance(mod, IRModule):
            raise InvalidTypeError(
                f"pass {self.info.name} expects an IRModule, found "
                f"{type(mod).__name__}; wrap a function with IRModule.from_expr")
        ctx = PassContext.current()
        if not ctx.pass_enabled(self.info):
            return mod
        if any(_call(inst, "should_run", mod, self.info) is False for inst in ctx.instruments):
            return mod
        for inst in ctx.instruments:
            _call(inst, "run_before_pass", mod, self.info)
        result = self.transform_module(mod, ctx)
        if not isinstance(result, IRModule):
            raise MLCBenchError(f"pass {self.info.name} returned {type(result).__name__}, "
                                "expected an IRModule")
        for inst in ctx.instruments:
            _call(inst, "run_after_pass", result, self.info)
        return result

    def __repr__(self):
        return f"{type(self).__name__}({self.info.name!r}, opt_level={self.info.opt_level})"


class ModulePass(Pass):
    def __init__(self, fn, info: PassInfo):
        self.fn, self.info = fn, info

    def transform_module(self, mod, ctx):
        return self.fn(mod, ctx)


class PrimFuncPass(Pass):
    """Applies ``fn(func, mod, ctx)`` to every PrimFunc of the module.

    PrimFuncs are recognised by their class attribute ``ir_level == "tir"``, so this
    foundation module needs no import of the tensor-IR layer above it.
    """

    def __init__(self, fn, info: PassInfo):
        self.fn, self.info = fn, info

    def transform_module(self, mod, ctx):
        out = mod.copy()
        for gv, func in mod.items():
            if getattr(func, "ir_level", None) == "tir":
                new = self.fn(func, mod, ctx)
                if new is not func:
                    out[gv] = new
        return out


class FunctionPass(PrimFuncPass):
    """Applies ``fn(func, mod, ctx)`` to every function of the module (any IR level)."""

    def transform_module(self, mod, ctx):
        out = mod.copy()
        for gv, func in mod.items():
            new = self.fn(func, mod, ctx)
            if new is not func:
                out[gv] = new
        return out


class Sequential(Pass):
    """Run passes in order; itself a Pass, so pipelines nest."""

    def __init__(self, passes=(), opt_level: int = 0, name: str = "sequential", required=()):
        self.passes = list(passes)
        self.info = PassInfo(opt_level, name, tuple(required))

    def transform_module(self, mod, ctx):
        for p in self.passes:
            mod = p(mod)
        return mod

    def __call__(self, mod):
        # A Sequential is a container: instruments see the passes inside it, not it.
        ctx = PassContext.current()
        if not ctx.pass_enabled(self.info):
            return mod
        return self.transform_module(mod, ctx)


def _make_decorator(pass_cls, fn, opt_level, name, required, traceable):
    def wrap(target):
        info = PassInfo(opt_level, name or getattr(target, "__name__", "pass"),
                        tuple(required), traceable)
        if inspect.isclass(target):
            @functools.wraps(target, updated=())
            def create(*args, **kwargs):
                instance = target(*args, **kwargs)
                method = (instance.transform_module if pass_cls is ModulePass
                          else instance.transform_function)
                return pass_cls(method, info)
            return create
        return pass_cls(target, info)
    return wrap(fn) if fn is not None else wrap


def module_pass(pass_func=None, opt_level: int = 0, name: str | None = None,
                required=(), traceable: bool = False):
    """Make a module pass from ``fn(mod, ctx) -> mod`` or a class with ``transform_module``."""
    return _make_decorator(ModulePass, pass_func, opt_level, name, required, traceable)


def prim_func_pass(pass_func=None, opt_level: int = 0, name: str | None = None,
                   required=(), traceable: bool = False):
    """Make a pass from ``fn(func, mod, ctx) -> func`` applied to each PrimFunc."""
    return _make_decorator(PrimFuncPass, pass_func, opt_level, name, required, traceable)


def function_pass(pass_func=None, opt_level: int = 0, name: str | None = None,
                  required=(), traceable: bool = False):
    """Make a pass from ``fn(func, mod, ctx) -> func`` applied to every function."""
    return _make_decorator(FunctionPass, pass_func, opt_level, name, required, traceable)

