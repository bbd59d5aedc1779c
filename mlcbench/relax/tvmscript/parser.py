"""Parse ``@R.function`` (standalone, or in an ``@I.ir_module`` class) into a Function.

Statements understood::

    R.func_attr({...})
    lv: R.Tensor((1, 128), dtype="float32") = R.call_tir(cls.linear0, (x, w0, b0), ...)
    y = R.match_cast(x, R.Tensor(("n", 4), "float32"))
    with R.dataflow():
        ...
        R.output(gv)
    if cond:            # both arms end by assigning the same name
        ...
    return gv

``cls.f`` names the module's function ``f``. Annotations give the bound variable's
struct info (a call of another Relax function, or of a packed function, needs one).
"""
from __future__ import annotations

import ast
import operator

from ...ir.errors import MLCBenchError
from ...ir.module import GlobalVar
from ...script.parser import text_policy
from .. import expr as rx
from ..struct_info import StructInfo
from . import namespace as R_ns

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


class _FunctionParser:
    def __init__(self, source, env: dict, module):
        self.source, self.env, self.module = source, env, module
        self.scope: dict = {}
        self.symbols: dict = {}
        self.attrs: dict = {}
        self.module_aliases: set = {"cls"}    # names bound by ``cls = Module``

    def error(self, node, message):
        return self.source.error(node, message)

    # -- expressions --------------------------------------------------------------------
    def eval(self, node):
        try:
            return self._eval(node)
        except text_policy.RefusedText as err:
            raise self.error(node, str(err)) from None
        except RecursionError:
            raise self.error(node, "the expression nests too deeply (split it into named "
                                   "parts)") from None
        except MLCBenchError as err:
            if getattr(err, "span", None) is not None:
                raise
            raise self.error(node, str(err)) from None
        except (TypeError, ValueError, KeyError, AttributeError) as err:
            raise self.error(node, f"{type(err).__name__}: {err}") from None

    def _eval(self, node):
        if isinstance(node, ast.Name):
            return self.lookup(node)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and self.names_module(node.value.id):
                return self.global_var(node)
            owner = self._eval(node.value)
            if not self.source.trusted:
                return text_policy.attribute(owner, node.attr)
            return getattr(owner, node.attr)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.Tuple, ast.List)):
            values = [self._eval(e) for e in node.elts]
            return tuple(values) if isinstance(node, ast.Tuple) else values
        if isinstance(node, ast.Dict):
            return {self._eval(k): self._eval(v) for k, v in zip(node.keys, node.values)}
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self._eval(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            op, left, right = _BINOPS[type(node.op)], self._eval(node.left), self._eval(node.right)
            if not self.source.trusted:
                text_policy.check_operands(op, left, right)
            return op(left, right)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        raise self.error(node, f"unsupported syntax in a Relax function: {ast.unparse(node)}")

    def names_module(self, name: str) -> bool:
        """Whether ``name`` stands for the enclosing module: ``cls``, an alias made by
        ``cls = Module``, or the class's own name (not an earlier object of that name)."""
        if name in self.scope:
            return False
        return name in self.module_aliases or (self.module is not None
                                               and name == self.module.name)

    def lookup(self, node: ast.Name):
        if node.id in self.scope:
            return self.scope[node.id]
        if self.module is not None and node.id == self.module.name:
            raise self.error(node, f"'{node.id}' is the module being defined: bind it with "
                                   f"`cls = {node.id}` and call its functions as `cls.f`")
        if node.id in self.env:
            return self.env[node.id]
        if self.module is not None and node.id in self.module.global_vars:
            return self.module.global_vars[node.id]   # the 2022 course's bare names
        if node.id == "Tensor":     # the 2022 course's bare `x: Tensor((3, 4), "float32")`
            return R_ns.Tensor
        if node.id == "metadata":
            raise self.error(node, "large constants print as metadata[...] references, which "
                                   "cannot be parsed back; build them with R.const instead")
        raise self.error(node, f"undefined name '{node.id}'")

    def global_var(self, node: ast.Attribute) -> GlobalVar:
        if self.module is None:
            raise self.error(node, "`cls.` refers to the enclosing @I.ir_module class; this "
                                   "function is not in one")
        if node.attr not in self.module.global_vars:
            raise self.error(node, f"the module has no function '{node.attr}'; it has "
                                   f"{sorted(self.module.global_vars)}")
        return self.module.global_vars[node.attr]

    def call(self, node: ast.Call):
        func = self._eval(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self._eval(a.value))
            else:
                args.append(self._eval(a))
        kwargs = {k.arg: self._eval(k.value) for k in node.keywords}
        if isinstance(func, (rx.Expr, GlobalVar)):
            sinfo_args = kwargs.pop("sinfo_args", ())
            if kwargs:
                raise self.error(node, f"unexpected keyword arguments {sorted(kwargs)} in a "
                                       "call of a function value")
            sinfo_args = sinfo_args if isinstance(sinfo_args, (list, tuple)) else [sinfo_args]
            return rx.Call(func, [self.as_expr(a, node) for a in args], None,
                           [R_ns.as_struct_info(s) for s in sinfo_args])
        if not self.source.trusted:
            text_policy.check_callable(func)
        return func(*args, **kwargs)

    def subscript(self, node: ast.Subscript):
        base = self._eval(node.value)
        index = self._eval(node.slice)
        if isinstance(base, rx.Expr):
            return rx.TupleGetItem(base, index)
        return base[index]

    def as_expr(self, value, node):
        if isinstance(value, (rx.Expr, GlobalVar)):
            return value
        if isinstance(value, (list, tuple)):
            return rx.Tuple([self.as_expr(v, node) for v in value])
        if isinstance(value, (bool, int, float)):
            return rx.const(value)
        raise self.error(node, f"expected a Relax expression, found {type(value).__name__}: "
                               f"{value!r}")

    def sinfo(self, node):
        value = R_ns.as_struct_info(self.eval(node))
        if not isinstance(value, StructInfo):
            raise self.error(node, f"expected struct info such as R.Tensor((1, 784), "
                                   f"\"float32\"), found {value!r}")
        return value

    # -- statements ---------------------------------------------------------------------
    def parse(self, fdef: ast.FunctionDef, pure: bool, private: bool) -> rx.Function:
        with R_ns.symbolic_scope(self.symbols):
            params = []
            for arg in fdef.args.args:
                if arg.annotation is None:
                    raise self.error(arg, f"parameter '{arg.arg}' needs a struct info "
                                          "annotation such as R.Tensor((1, 784), \"float32\")")
                var = rx.Var(arg.arg, self.sinfo(arg.annotation))
                self.scope[arg.arg] = var
                params.append(var)
            ret = self.sinfo(fdef.returns) if fdef.returns is not None else None
            blocks, body = self.statements(fdef.body, fdef, needs_return=True)
        attrs = dict(self.attrs)
        if not private:
            attrs.setdefault("global_symbol", fdef.name)
        return rx.Function(params, rx.SeqExpr(blocks, body), ret, pure, attrs)

    def statements(self, stmts, owner, needs_return: bool):
        """(blocks, result) of a statement list; ``result`` is the returned expression."""
        blocks, pending = [], []
        for index, stmt in enumerate(stmts):
            if isinstance(stmt, ast.Return):
                if index != len(stmts) - 1:
                    raise self.error(stmts[index + 1], "statements after `return`")
                if pending:
                    blocks.append(rx.BindingBlock(pending))
                return blocks, self.as_expr(self.eval(stmt.value), stmt)
            if isinstance(stmt, ast.With):
                if pending:
                    blocks.append(rx.BindingBlock(pending))
                    pending = []
                blocks.append(self.dataflow_block(stmt))
            else:
                self.statement(stmt, pending, outputs=None)
        if needs_return:
            raise self.error(owner, "a Relax function ends with `return <value>`")
        if pending:
            blocks.append(rx.BindingBlock(pending))
        return blocks, None

    def statement(self, stmt, bindings: list, outputs):
        if isinstance(stmt, ast.Expr):
            if isinstance(stmt.value, ast.Constant):
                return
            value = self.eval(stmt.value)
            if isinstance(stmt.value, ast.Call) and self._eval(stmt.value.func) \
                    is R_ns.func_attr:
                self.attrs.update(value)
                return
            raise self.error(stmt, "a statement's value is unused; bind it to a name")
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            self.assignment(stmt, bindings, outputs)
            return
        if isinstance(stmt, ast.If):
            self.if_statement(stmt, bindings, outputs)
            return
        if isinstance(stmt, ast.Pass):
            return
        raise self.error(stmt, f"unsupported statement in a Relax function: "
                               f"{ast.unparse(stmt).splitlines()[0]}")

    def target_name(self, stmt) -> str:
        target = stmt.target if isinstance(stmt, ast.AnnAssign) else stmt.targets[0]
        if isinstance(stmt, ast.Assign) and len(stmt.targets) != 1 or \
                not isinstance(target, ast.Name):
            raise self.error(target, "bind one name per statement: `lv = R.add(x, y)`")
        return target.id

    def new_var(self, name, sinfo, outputs):
        dataflow = outputs is not None and name not in outputs
        var = (rx.DataflowVar if dataflow else rx.Var)(name, sinfo)
        self.scope[name] = var
        return var

    def assignment(self, stmt, bindings, outputs):
        name = self.target_name(stmt)
        if isinstance(stmt.value, ast.Name) and self.names_module(stmt.value.id):
            # ``cls = Module`` (TVM prints it first in a function): no binding, an alias
            self.scope.pop(name, None)
            self.module_aliases.add(name)
            return
        value = self.eval(stmt.value)
        annotation = getattr(stmt, "annotation", None)
        if isinstance(value, R_ns.MatchCastSpec):
            var = self.new_var(name, value.struct_info, outputs)
            bindings.append(rx.MatchCast(var, self.as_expr(value.value, stmt),
                                         value.struct_info))
            return
        value = self.flatten(self.as_expr(value, stmt.value), bindings, outputs)
        sinfo = self.sinfo(annotation) if annotation is not None else value.struct_info
        bindings.append(rx.VarBinding(self.new_var(name, sinfo, outputs), value))

    def flatten(self, value, bindings, outputs):
        """A-normal form, as the builder makes it: a nested call gets its own binding."""
        if isinstance(value, rx.Call):
            args = [self.flatten_argument(a, bindings, outputs) for a in value.args]
            if any(a is not b for a, b in zip(args, value.args)):
                return rx.Call(value.op, args, value.attrs, value.sinfo_args)
        if isinstance(value, rx.Tuple):
            fields = [self.flatten_argument(f, bindings, outputs) for f in value.fields]
            if any(a is not b for a, b in zip(fields, value.fields)):
                return rx.Tuple(fields)
        return value

    def flatten_argument(self, arg, bindings, outputs):
        if rx.is_leaf(arg) or isinstance(arg, rx.Tuple):
            return self.flatten(arg, bindings, outputs)
        arg = self.flatten(arg, bindings, outputs)
        kind = rx.DataflowVar if outputs is not None else rx.Var
        var = kind("lv", arg.struct_info)
        bindings.append(rx.VarBinding(var, arg))
        return var

    def dataflow_block(self, stmt: ast.With) -> rx.DataflowBlock:
        item = stmt.items[0].context_expr if len(stmt.items) == 1 else None
        if not (isinstance(item, ast.Call) and self._eval(item.func) is R_ns.dataflow):
            raise self.error(stmt, "only `with R.dataflow():` blocks are allowed here")
        body = stmt.body
        last = body[-1]
        if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
                and self._eval(last.value.func) is R_ns.output):
            raise self.error(last, "a dataflow block ends with R.output(...) naming the values "
                                   "that leave it")
        outputs = {a.id for a in last.value.args if isinstance(a, ast.Name)}
        bindings: list = []
        for inner in body[:-1]:
            self.statement(inner, bindings, outputs)
        return rx.DataflowBlock(bindings)

    def if_statement(self, stmt: ast.If, bindings, outputs):
        cond = self.as_expr(self.eval(stmt.test), stmt.test)
        arms, name, sinfo = [], None, None
        for arm in (stmt.body, stmt.orelse):
            last = arm[-1] if arm else stmt
            if not arm or not isinstance(last, (ast.Assign, ast.AnnAssign)):
                raise self.error(last, "each arm of an `if` ends by assigning its result")
            saved = dict(self.scope)
            arm_bindings: list = []
            for inner in arm[:-1]:
                self.statement(inner, arm_bindings, None)
            name = self.target_name(last)
            result = self.as_expr(self.eval(last.value), last.value)
            if getattr(last, "annotation", None) is not None:
                sinfo = self.sinfo(last.annotation)
            blocks = [rx.BindingBlock(arm_bindings)] if arm_bindings else []
            arms.append(rx.SeqExpr(blocks, result))
            self.scope = saved
        node = rx.If(cond, arms[0], arms[1])
        var = self.new_var(name, sinfo or node.struct_info, outputs)
        bindings.append(rx.VarBinding(var, node))


def parse_relax_function(fdef, source, env, module, pure: bool = True, private: bool = False):
    """The parser hook for ``@R.function`` (see ``register_function_parser``)."""
    return _FunctionParser(source, env, module).parse(fdef, pure, private)
