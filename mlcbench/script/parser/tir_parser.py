"""Statements of a ``@T.prim_func`` body, read from Python's ``ast`` into TIR.

Each statement either emits a TIR statement into the body being built
(``A[i] = x`` -> ``BufferStore``), wraps the rest of the body (``x: T.int32 = v`` ->
``LetStmt``), or declares something for the enclosing block/function
(``T.reads(...)``, ``Y = T.alloc_buffer(...)``). See :mod:`.builder`.
"""
from __future__ import annotations

import ast
import operator
from contextlib import contextmanager

from ...tir import expr as E
from ...tir import stmt as S
from ...tir.buffer import Buffer, BufferRegion
from ...tir.function import PrimFunc
from .builder import BlockFrame, Builder, building
from .evaluator import Evaluator
from ...ir.errors import ParseError
from .regions import as_value, make_load, make_region, region_to_load
from .source import Source
from .t_expr import DTypeFunc
from .t_stmt import BlockSpec, InitSpec, LetSpec, LoopSpec, serial, thread_iter_var
from .blocks import finish_block, wrap_root_block

_AUG = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_UNSUPPORTED = {
    ast.While: "`while` loops are not supported in TVMScript TIR; use `for i in range(n)`",
    ast.Try: "try/except is not supported in TVMScript",
    ast.Raise: "raise is not supported in TVMScript; use `assert cond, \"message\"`",
    ast.Delete: "del is not supported in TVMScript",
    ast.Global: "global declarations are not supported in TVMScript",
    ast.Nonlocal: "nonlocal declarations are not supported in TVMScript",
    ast.Import: "imports belong outside the TVMScript function",
    ast.ImportFrom: "imports belong outside the TVMScript function",
    ast.ClassDef: "classes cannot be defined inside a TVMScript function",
    ast.FunctionDef: "functions cannot be defined inside a TVMScript function",
    ast.Break: "break is not supported in TVMScript loops",
    ast.Continue: "continue is not supported in TVMScript loops",
}


def parse_prim_func(fdef: ast.FunctionDef, source: Source, env: dict, *, private=False,
                    in_module=False) -> PrimFunc:
    """Build the PrimFunc that ``fdef`` (a ``@T.prim_func`` definition) describes."""
    builder = Builder()
    with building(builder):
        return TIRParser(source, env, builder).parse_function(fdef, private, in_module)


class TIRParser:
    def __init__(self, source: Source, env: dict, builder: Builder):
        self.source, self.builder = source, builder
        self.evaluator = Evaluator(source, env, serial=serial)
        self.iteration_vars: set = set()     # loop and block variables (not assignable)
        self.bound_vars: set = set()         # Vars a name in the script refers to

    def error(self, node, message: str):
        return self.source.error(node, message)

    def eval(self, node, hint=None):
        return self.evaluator.eval(node, hint)

    def bind(self, name: str, value) -> None:
        self.evaluator.bind(name, value)
        if isinstance(value, E.Var):
            self.bound_vars.add(value)

    @contextmanager
    def scope(self):
        self.evaluator.scopes.append({})
        try:
            yield
        finally:
            self.evaluator.scopes.pop()

    # -- function -----------------------------------------------------------------------
    def parse_function(self, fdef: ast.FunctionDef, private: bool, in_module: bool) -> PrimFunc:
        frame = self.builder.func
        with self.scope():
            self.parse_params(fdef.args)
            body = self.parse_body(fdef.body, skip_docstring=True)
        body = wrap_root_block(body, self.builder)
        attrs = dict(frame.attrs)
        if in_module and not private:
            attrs.setdefault("global_symbol", fdef.name)
        buffer_map = {p: frame.buffer_map[p] for p in frame.params if p in frame.buffer_map}
        return PrimFunc(tuple(frame.params), body, buffer_map, attrs)

    def parse_params(self, args: ast.arguments) -> None:
        extras = [*args.posonlyargs, args.vararg, *args.kwonlyargs, args.kwarg, *args.defaults]
        extras = [node for node in extras if node is not None]
        if extras:
            raise self.error(extras[0], "TVMScript parameters are plain `name: annotation` "
                                        "pairs (no defaults, *args, keyword-only or / markers)")
        for arg in args.args:
            if arg.annotation is None:
                raise self.error(arg, f"parameter '{arg.arg}' needs a type annotation such as "
                                      "T.Buffer((128,), \"float32\"), T.handle or T.int32")
            self.bind(arg.arg, self.parse_param(arg))

    def parse_param(self, arg: ast.arg):
        annotation = self.eval(arg.annotation, hint=arg.arg)
        frame = self.builder.func
        if isinstance(annotation, Buffer):
            handle = E.Var(arg.arg, "handle")
            frame.params.append(handle)
            frame.buffer_map[handle] = annotation
            self.builder.declare_buffer(annotation)
            return annotation
        if isinstance(annotation, DTypeFunc):
            annotation = E.Var(arg.arg, annotation.dtype)
        if isinstance(annotation, E.Var):
            frame.params.append(annotation)
            return annotation
        raise self.error(arg.annotation, f"parameter '{arg.arg}': expected T.Buffer(...), "
                                         f"T.handle or a scalar type such as T.int32, found "
                                         f"{annotation!r}")

    # -- bodies -------------------------------------------------------------------------
    def parse_body(self, stmts: list, skip_docstring: bool = False) -> S.Stmt:
        self.builder.begin_body()
        for k, stmt in enumerate(stmts):
            if skip_docstring and k == 0 and _is_docstring(stmt):
                continue
            self.visit(stmt)
        return self.builder.end_body()

    def visit(self, stmt: ast.stmt) -> None:
        if type(stmt) in _UNSUPPORTED:
            raise self.error(stmt, _UNSUPPORTED[type(stmt)])
        method = getattr(self, "visit_" + type(stmt).__name__, None)
        if method is None:
            raise self.error(stmt, f"{type(stmt).__name__} statements are not supported in "
                                   "TVMScript")
        method(stmt)

    def visit_Pass(self, stmt):
        pass

    def visit_Return(self, stmt):
        if stmt.value is not None:
            raise self.error(stmt, "a T.prim_func returns nothing; write results into an "
                                   "output buffer")

    def visit_Expr(self, stmt):
        if _is_docstring(stmt):
            return
        value = as_value(self.eval(stmt.value))
        if value is None:
            return
        if isinstance(value, (E.PrimExpr, int, float)):
            self.builder.emit(S.Evaluate(E.convert(value)))
        elif isinstance(value, S.Stmt):
            self.builder.emit(value)
        else:
            raise self.error(stmt, f"this expression has no effect as a statement (it is a "
                                   f"{type(value).__name__})")

    def visit_Assert(self, stmt):
        condition = E.convert(self.eval(stmt.test))
        message = "" if stmt.msg is None else self.eval(stmt.msg)
        message = message.value if isinstance(message, E.StringImm) else str(message)
        self.builder.emit_wrapper(lambda rest: S.AssertStmt(condition, message, rest))

    # -- assignments --------------------------------------------------------------------
    def visit_Assign(self, stmt):
        if len(stmt.targets) != 1:
            raise self.error(stmt, "chained assignment `a = b = value` is not supported")
        target = stmt.targets[0]
        if isinstance(target, ast.Subscript):
            self.store(target, self.eval(stmt.value))
        elif isinstance(target, ast.Name):
            self.check_assignable(target)
            self.assign_name(target, self.eval(stmt.value, hint=target.id))
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.assign_unpack(target, stmt.value)
        else:
            raise self.error(target, "can only assign to a name, a tuple of names or a "
                                     "buffer element A[i, j]")

    def assign_unpack(self, target, value_node):
        names = []
        for elt in target.elts:
            if not isinstance(elt, ast.Name):
                raise self.error(elt, "can only unpack into plain names")
            self.check_assignable(elt)
            names.append(elt.id)
        if isinstance(value_node, (ast.Tuple, ast.List)) and len(value_node.elts) == len(names):
            value = [self.eval(elt, hint=name) for elt, name in zip(value_node.elts, names)]
        else:                               # vi, vj = T.axis.remap("SS", [i, j])
            value = self.eval(value_node, hint=tuple(names))
        if not isinstance(value, (list, tuple)) or len(value) != len(names):
            count = len(value) if isinstance(value, (list, tuple)) else "a single value"
            raise self.error(target, f"cannot unpack {count} into {len(names)} names "
                                     f"({', '.join(names)})")
        for elt, item in zip(target.elts, value):
            self.assign_name(elt, item)

    def check_assignable(self, target: ast.Name) -> None:
        current = self.evaluator.lookup(target.id)
        open_block_vars = {iv.var for frame in self.builder.blocks for iv in frame.iter_vars}
        if isinstance(current, E.Var) and (current in self.iteration_vars
                                           or current in open_block_vars):
            raise self.error(target, f"cannot assign to loop variable '{target.id}'; "
                                     "loop and block variables are read-only")

    def assign_name(self, target: ast.Name, value) -> None:
        """``x = value``: a name for a new object, or a LetStmt for an expression."""
        fresh_var = isinstance(value, E.Var) and value not in self.bound_vars
        if fresh_var or not isinstance(value, (E.PrimExpr, bool, int, float)):
            self.bind(target.id, value)
            return
        value = E.convert(value)
        self.let(target.id, E.Var(target.id, value.dtype), value)

    def let(self, name: str, var: E.Var, value) -> None:
        value = E.convert(value, var.dtype)
        self.builder.emit_wrapper(lambda rest: S.LetStmt(var, value, rest))
        self.bind(name, var)

    def visit_AnnAssign(self, stmt):
        if not isinstance(stmt.target, ast.Name):
            raise self.error(stmt.target, "an annotated assignment defines one name: "
                                          "`x: T.int32 = value`")
        self.check_assignable(stmt.target)
        annotation = self.eval(stmt.annotation)
        if not isinstance(annotation, DTypeFunc):
            raise self.error(stmt.annotation, f"expected a scalar type such as T.int32, found "
                                              f"{annotation!r}")
        if stmt.value is None:
            self.bind(stmt.target.id, E.Var(stmt.target.id, annotation.dtype))
            return
        value = self.eval(stmt.value)
        self.let(stmt.target.id, E.Var(stmt.target.id, annotation.dtype), value)

    def visit_AugAssign(self, stmt):
        if not isinstance(stmt.target, ast.Subscript) or type(stmt.op) not in _AUG:
            raise self.error(stmt, "only buffer elements can be updated in place "
                                   "(`A[i] += x`); variables in TIR are immutable")
        buffer, indices = self.store_target(stmt.target)
        current = make_load(buffer, indices)
        value = self.evaluator._apply(stmt, _AUG[type(stmt.op)], current, self.eval(stmt.value))
        self.builder.emit(S.BufferStore(buffer, value, indices))

    def store_target(self, target: ast.Subscript):
        buffer = self.eval(target.value)
        if not isinstance(buffer, Buffer):
            raise self.error(target.value, f"{ast.unparse(target.value)} is not a buffer; only "
                                           "buffer elements can be assigned")
        index = self.eval(target.slice)
        indices = index if isinstance(index, tuple) else (index,)
        if len(indices) != len(buffer.shape):
            raise self.error(target, f"buffer {buffer.name} has {len(buffer.shape)} "
                                     f"dimension(s), but is indexed with {len(indices)} "
                                     "index(es)")
        if any(isinstance(i, slice) for i in indices):     # A[0:4] = ...: a vector store
            try:
                return buffer, region_to_load(make_region(buffer, indices)).indices
            except ParseError as err:
                raise self.error(target, err.message) from None
        return buffer, tuple(E.convert(i) for i in indices)

    def store(self, target: ast.Subscript, value) -> None:
        buffer, indices = self.store_target(target)
        value = as_value(value)
        if isinstance(value, (BufferRegion, Buffer)) or not isinstance(
                value, (E.PrimExpr, bool, int, float)):
            raise self.error(target, f"cannot store a {type(value).__name__} into "
                                     f"{buffer.name}[...]; expected an expression")
        self.builder.emit(S.BufferStore(buffer, E.convert(value, buffer.dtype), indices))

    # -- control flow -------------------------------------------------------------------
    def visit_If(self, stmt):
        condition = self.eval(stmt.test)
        if not isinstance(condition, E.PrimExpr):
            for inner in (stmt.body if condition else stmt.orelse):   # decided while parsing
                self.visit(inner)
            return
        with self.scope():
            then_case = self.parse_body(stmt.body)
        else_case = None
        if stmt.orelse:
            with self.scope():
                else_case = self.parse_body(stmt.orelse)
        self.builder.emit(S.IfThenElse(condition, then_case, else_case))

    def visit_For(self, stmt):
        if stmt.orelse:
            raise self.error(stmt.orelse[0], "for ... else is not supported in TVMScript")
        spec = self.eval(stmt.iter)
        if not isinstance(spec, LoopSpec):
            raise self.error(stmt.iter, "a TVMScript loop iterates over range(...), T.grid, "
                                        "T.serial, T.parallel, T.vectorized, T.unroll or "
                                        f"T.thread_binding, found {type(spec).__name__}")
        targets = stmt.target.elts if isinstance(stmt.target, ast.Tuple) else [stmt.target]
        if len(targets) != len(spec.dims) or not all(isinstance(t, ast.Name) for t in targets):
            raise self.error(stmt.target, f"expected {len(spec.dims)} loop variable name(s) for "
                                          f"{ast.unparse(stmt.iter)}, found "
                                          f"`{ast.unparse(stmt.target)}`")
        loop_vars = [E.Var(t.id, dim.extent.dtype) for t, dim in zip(targets, spec.dims)]
        with self.scope():
            for target, var, dim in zip(targets, loop_vars, spec.dims):
                self.bind(target.id, var)
                self.iteration_vars.add(var)
                self.builder.loop_ranges[var] = E.Range(dim.min, dim.extent)
            body = self.parse_body(stmt.body)
        for var, dim in reversed(list(zip(loop_vars, spec.dims))):
            binding = None if dim.thread is None else thread_iter_var(
                dim.min, dim.extent, dim.thread, var.dtype)
            body = S.For(var, dim.min, dim.extent, dim.kind, body, binding, dict(dim.annotations))
        self.builder.emit(body)

    def visit_With(self, stmt):
        if len(stmt.items) != 1:
            raise self.error(stmt, "one context per `with` statement in TVMScript")
        item = stmt.items[0]
        hint = item.optional_vars.id if isinstance(item.optional_vars, ast.Name) else None
        self.builder.begin_body()       # catches the wrapper T.Assert/T.allocate emit
        try:
            spec = self.eval(item.context_expr, hint=hint)
        except BaseException:
            self.builder.abandon_body()
            raise
        if self.builder.pending_wrappers() == 1:
            self.parse_scoped_with(stmt, item, spec)
            return
        self.builder.abandon_body()
        if isinstance(spec, BlockSpec):
            self.parse_block(stmt, spec)
        elif isinstance(spec, InitSpec):
            self.parse_init(stmt)
        elif isinstance(spec, LetSpec):
            self.parse_let_with(stmt, item, spec)
        else:
            raise self.error(item.context_expr, "expected `with T.block(...)`, `with T.init()`, "
                                                "`with T.LetStmt(...) as x`, `with T.Assert(c, "
                                                "msg)`, `with T.allocate(...) as x` or `with "
                                                "T.decl_buffer(...) as x`")

    def parse_scoped_with(self, stmt: ast.With, item: ast.withitem, value) -> None:
        """``with T.Assert(c, "msg"):`` / ``with T.allocate(...) as p:`` /
        ``with T.decl_buffer(...) as B:``: the statement that the call wraps around the
        rest of the body wraps only the ``with`` body instead, so statements after the
        ``with`` stay outside it (``SeqStmt(AssertStmt(c, msg, body), after)``)."""
        target = item.optional_vars
        if (value is None) != (target is None):
            self.builder.abandon_body()
            expected = "binds no name" if value is None else "needs `as name`"
            raise self.error(stmt, f"`with {ast.unparse(item.context_expr)}` {expected}")
        if target is not None and not isinstance(target, ast.Name):
            self.builder.abandon_body()
            raise self.error(target, "`with ... as x` binds one plain name")
        with self.scope():
            if target is not None:
                self.bind(target.id, value)
            for inner in stmt.body:
                self.visit(inner)
        self.builder.emit(self.builder.end_body())

    def parse_block(self, stmt: ast.With, spec: BlockSpec) -> None:
        if stmt.items[0].optional_vars is not None:
            raise self.error(stmt.items[0].optional_vars, "`with T.block(...)` binds no name")
        frame = BlockFrame(spec.name)
        self.builder.blocks.append(frame)
        try:
            with self.scope():
                body = self.parse_body(stmt.body)
        finally:
            self.builder.blocks.pop()
        for iter_var in frame.iter_vars:
            self.iteration_vars.add(iter_var.var)
        realize = finish_block(frame, body, self.builder, top_level=not self.builder.blocks)
        self.builder.contains_block = True
        self.builder.emit(realize.block if spec.no_realize else realize)

    def parse_init(self, stmt: ast.With) -> None:
        frame = self.builder.blocks[-1] if self.builder.blocks else None
        if frame is None:
            raise self.error(stmt, "`with T.init()` is only allowed inside `with T.block(...)`")
        if frame.init is not None:
            raise self.error(stmt, f"block {frame.name!r} has two `with T.init()`")
        with self.scope():
            frame.init = self.parse_body(stmt.body)

    def parse_let_with(self, stmt: ast.With, item: ast.withitem, spec: LetSpec) -> None:
        if not isinstance(item.optional_vars, ast.Name):
            raise self.error(stmt, "write `with T.LetStmt(value) as x:`")
        name = item.optional_vars.id
        var = spec.var or E.Var(name, spec.value.dtype)
        with self.scope():
            self.bind(name, var)
            body = self.parse_body(stmt.body)
        self.builder.emit(S.LetStmt(var, E.convert(spec.value, var.dtype), body))


def _is_docstring(stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str))
