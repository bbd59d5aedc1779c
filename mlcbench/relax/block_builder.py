"""BlockBuilder: build Relax functions one binding at a time, as in TVM.

The course's MLP, from TE operators::

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 784), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.nn.dense, x, w0)     # adds PrimFunc "dense", calls it
            lv1 = bb.emit_te(topi.nn.relu, lv0)
            gv = bb.emit_output(lv1)
        bb.emit_func_output(gv)
    mod = bb.get()

``emit`` puts nested computations into A-normal form: ``bb.emit(add(multiply(a, b), c))``
binds the product first, so every call argument is a variable, constant or tuple of them.
"""
from __future__ import annotations

import contextlib
import threading

from ..ir.errors import IRError
from ..ir.module import GlobalVar, IRModule
from ..ir.structural import structural_equal, structural_hash
from .expr import (BindingBlock, Call, DataflowBlock, DataflowVar, Expr, Function, MatchCast,
                   SeqExpr, Tuple, Var, VarBinding, is_leaf)
from .op.base import call_tir
from .te_bridge import call_te_parts


class _BlockFrame:
    def __init__(self, is_dataflow: bool):
        self.is_dataflow = is_dataflow
        self.bindings: list = []


class _FunctionFrame:
    def __init__(self, name, params, attrs, private):
        self.name, self.params, self.attrs, self.private = name, params, dict(attrs or {}), private
        self.blocks: list = []
        self.output = None


class BlockBuilder:
    """Builds functions into an IRModule; ``get()`` returns the module."""

    _local = threading.local()

    def __init__(self, mod: IRModule | None = None):
        self._mod = mod.copy() if mod is not None else IRModule()
        self._function: _FunctionFrame | None = None
        self._blocks: list[_BlockFrame] = []
        self._bindings: dict = {}
        self._func_hashes: dict[int, list[GlobalVar]] = {}
        self._context_indexed = mod is None   # functions of ``mod`` are hashed on first need

    @staticmethod
    def current() -> "BlockBuilder | None":
        stack = getattr(BlockBuilder._local, "stack", [])
        return stack[-1] if stack else None

    # -- scopes -------------------------------------------------------------------------
    @contextlib.contextmanager
    def function(self, name: str, params=None, attrs=None, private: bool = False):
        """Scope of one function; finish it with :meth:`emit_func_output`."""
        if self._function is not None:
            raise IRError(f"BlockBuilder.function({name!r}): already inside function "
                          f"{self._function.name!r}; functions do not nest")
        params = [params] if isinstance(params, Var) else params
        self._function = _FunctionFrame(name, list(params) if params is not None else None,
                                        attrs, private)
        stack = BlockBuilder._local.__dict__.setdefault("stack", [])
        stack.append(self)
        try:
            yield self
            if self._function.output is None:
                raise IRError(f"function {name!r} ended without bb.emit_func_output(...)")
            self._finish_function()
        finally:
            stack.pop()
            self._function = None
            self._blocks = []

    @contextlib.contextmanager
    def dataflow(self):
        """Scope of a dataflow block; values leave it through :meth:`emit_output`."""
        if self._blocks and self._blocks[-1].is_dataflow:
            raise IRError("bb.dataflow(): dataflow blocks do not nest")
        self._close_open_block()
        self.begin_dataflow_block()
        yield self
        block = self.end_block()
        if block.bindings:
            self._function_blocks().append(block)

    def begin_dataflow_block(self) -> None:
        self._blocks.append(_BlockFrame(True))

    def begin_binding_block(self) -> None:
        self._blocks.append(_BlockFrame(False))

    def end_block(self) -> BindingBlock:
        """Close the innermost block and return it (empty blocks are returned too)."""
        frame = self._blocks.pop()
        kind = DataflowBlock if frame.is_dataflow else BindingBlock
        return kind(frame.bindings)

    def _function_blocks(self) -> list:
        if self._function is None:
            raise IRError("emit outside `with bb.function(...)`: open a function first")
        return self._function.blocks

    def _close_open_block(self) -> None:
        if self._function is not None and self._blocks and not self._blocks[-1].is_dataflow:
            block = self.end_block()
            if block.bindings:
                self._function.blocks.append(block)

    def _current_block(self) -> _BlockFrame:
        if not self._blocks:
            self._function_blocks()          # raises a clear error outside a function
            self.begin_binding_block()
        return self._blocks[-1]

    # -- emitting -----------------------------------------------------------------------
    def emit(self, expr, name_hint: str = "") -> Var:
        """Bind ``expr`` (normalized) to a new variable and return the variable."""
        expr = self.normalize(expr)
        frame = self._current_block()
        var_class = DataflowVar if frame.is_dataflow else Var
        var = var_class(name_hint or ("lv" if frame.is_dataflow else "gv"),
                        self.struct_info_of(expr))
        return self.emit_normalized(VarBinding(var, expr))

    def struct_info_of(self, expr):
        """``expr.struct_info``; a call of a function of this module gets its return's."""
        sinfo = expr.struct_info
        if isinstance(expr, Call) and isinstance(expr.op, GlobalVar) and not expr.sinfo_args \
                and expr.op in self._mod:
            callee = self._mod[expr.op]
            return getattr(callee, "ret_struct_info", None) or sinfo
        return sinfo

    def emit_normalized(self, binding) -> Var:
        """Append an already normalized binding to the current block."""
        self._current_block().bindings.append(binding)
        self._bindings[binding.var] = binding.value
        return binding.var

    def match_cast(self, value, struct_info, name_hint: str = "") -> Var:
        """Bind ``value`` to a variable of ``struct_info`` (checked at run time)."""
        value = self.normalize(value)
        frame = self._current_block()
        var = (DataflowVar if frame.is_dataflow else Var)(name_hint or "lv", struct_info)
        return self.emit_normalized(MatchCast(var, value, struct_info))

    def emit_output(self, output, name_hint: str = "") -> Var:
        """Make a value of the dataflow block visible after it (a non-dataflow Var)."""
        if not (self._blocks and self._blocks[-1].is_dataflow):
            raise IRError("bb.emit_output is for values leaving a `with bb.dataflow():` block")
        if isinstance(output, (list, tuple)):
            output = Tuple(output)
        output = self.normalize(output)
        var = Var(name_hint or "gv", self.struct_info_of(output))
        return self.emit_normalized(VarBinding(var, output))

    def emit_func_output(self, output, params=None):
        """Finish the function: ``output`` (an expr or a list, made a Tuple) is its result."""
        frame = self._function
        if frame is None:
            raise IRError("bb.emit_func_output outside `with bb.function(...)`")
        if self._blocks and self._blocks[-1].is_dataflow:
            raise IRError("bb.emit_func_output inside a dataflow block: leave the "
                          "`with bb.dataflow():` scope first (use bb.emit_output inside it)")
        if params is not None:
            if frame.params is not None:
                raise IRError(f"function {frame.name!r}: params given twice (to "
                              f"bb.function and bb.emit_func_output)")
            frame.params = [params] if isinstance(params, Var) else list(params)
        if isinstance(output, (list, tuple)):
            output = Tuple(output)
        output = self.normalize(output)
        if not is_leaf(output):
            output = self.emit(output)
        self._close_open_block()
        frame.output = output

    def _finish_function(self):
        frame = self._function
        body = SeqExpr(frame.blocks, frame.output)
        func = Function(frame.params or [], body, attrs=frame.attrs)
        if not frame.private:
            func = func.with_attr("global_symbol", frame.name)
        self.add_func(func, frame.name, deduplicate=False)

    # -- TE -----------------------------------------------------------------------------
    def call_te(self, te_func, *args, **kwargs) -> Call:
        """``R.call_tir`` of a PrimFunc made from ``te_func`` (added to the module).

        Relax tensor arguments become ``te.placeholder`` of their shape and dtype; other
        arguments (ints, tuples, dtypes) pass through. ``primfunc_name_hint`` names the
        PrimFunc (default: the TE function's name); equal PrimFuncs are added once.
        """
        name_hint = kwargs.pop("primfunc_name_hint", None)
        prim_func, relax_args, out_sinfo = call_te_parts(te_func, args, kwargs)
        name = name_hint or getattr(te_func, "__name__", "te_func").strip("<>")
        gvar = self.add_func(prim_func, name)
        return call_tir(gvar, Tuple(relax_args), out_sinfo)

    def emit_te(self, te_func, *args, **kwargs) -> Var:
        """``emit(call_te(te_func, *args, **kwargs))``."""
        name_hint = kwargs.pop("name_hint", "")
        return self.emit(self.call_te(te_func, *args, **kwargs), name_hint)

    # -- module -------------------------------------------------------------------------
    def add_func(self, func, func_name: str, deduplicate: bool = True) -> GlobalVar:
        """Add ``func`` under a unique name derived from ``func_name``; a structurally equal
        PrimFunc already in the module is reused (its GlobalVar is returned)."""
        key = _without_symbol(func)
        digest = structural_hash(key)   # once: it files the new function too
        if deduplicate:
            found = self._find_equal(key, digest)
            if found is not None:
                return found
        name = self._unique_function_name(func_name)
        if getattr(func, "ir_level", None) == "tir":
            func = func.with_attr("global_symbol", name)
        gvar = GlobalVar(name)
        self._mod[gvar] = func
        self._func_hashes.setdefault(digest, []).append(gvar)
        return gvar

    def _find_equal(self, key, digest: int) -> GlobalVar | None:
        """A function of the module equal to ``key`` (a function without its
        ``global_symbol``, whose structural hash is ``digest``)."""
        if not self._context_indexed:
            self._context_indexed = True
            for gvar, existing in list(self._mod.items()):
                self._func_hashes.setdefault(
                    structural_hash(_without_symbol(existing)), []).append(gvar)
        for gvar in self._func_hashes.get(digest, []):
            if gvar in self._mod and structural_equal(_without_symbol(self._mod[gvar]), key):
                return gvar
        return None

    def _unique_function_name(self, name: str) -> str:
        if name not in self._mod:
            return name
        k = 1
        while f"{name}{k}" in self._mod:
            k += 1
        return f"{name}{k}"

    def update_func(self, gv: GlobalVar, func) -> None:
        self._mod[gv] = func

    def get(self) -> IRModule:
        """The module built so far (a copy: later edits do not change it)."""
        return self._mod.copy()

    finalize = get

    # -- normal form --------------------------------------------------------------------
    def normalize(self, expr) -> Expr:
        """Give ``expr`` struct info and, inside a block, bind nested calls to variables."""
        if isinstance(expr, (list, tuple)):
            expr = Tuple(expr)
        if isinstance(expr, Call):
            args = [self._normalize_argument(a) for a in expr.args]
            if any(a is not b for a, b in zip(args, expr.args)):
                expr = Call(expr.op, args, expr.attrs, expr.sinfo_args)
        elif isinstance(expr, Tuple):
            fields = [self._normalize_argument(f) for f in expr.fields]
            if any(a is not b for a, b in zip(fields, expr.fields)):
                expr = Tuple(fields)
        if not isinstance(expr, Expr) and not isinstance(expr, GlobalVar):
            raise IRError(f"expected a Relax expression, found {type(expr).__name__}: {expr!r}")
        return expr

    def _normalize_argument(self, arg):
        if is_leaf(arg):
            return arg
        if isinstance(arg, Tuple):
            return self.normalize(arg)
        if self._blocks or self._function is not None:
            return self.emit(arg)
        return self.normalize(arg)

    def lookup_binding(self, var: Var):
        """The value bound to ``var`` by this builder, or None."""
        return self._bindings.get(var)


def _without_symbol(func):
    attrs = getattr(func, "attrs", None)
    if attrs and "global_symbol" in attrs:
        return func.replace(attrs={k: v for k, v in attrs.items() if k != "global_symbol"})
    return func
