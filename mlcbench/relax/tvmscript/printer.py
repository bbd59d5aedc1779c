"""TVMScript text for Relax, in the style of TVM's printer::

    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((1, 128), dtype="float32") = R.call_tir(cls.linear0, (x, w0, b0), out_sinfo=R.Tensor((1, 128), dtype="float32"))
            ...
            R.output(gv)
        return gv

Symbolic dimensions print as strings (``R.Tensor(("n", 784), ...)``). Constants with at
most ``INLINE_CONSTANT_LIMIT`` elements print inline as ``R.const(...)``; larger ones as
``metadata["relax.expr.Constant"][k]``, which the parser cannot read back.
"""
from __future__ import annotations

import keyword
import re

import numpy as np

from ...ir.errors import InvalidTypeError
from ...ir.module import GlobalVar
from ...ir.op import Op
from ...tir.expr import IntImm, Var as TIRVar
from .. import expr as rx
from ..struct_info import (FuncStructInfo, ObjectStructInfo, PrimStructInfo, ShapeStructInfo,
                           StructInfo, TensorStructInfo, TupleStructInfo)

RELAX_IMPORT = "# from mlcbench.script import relax as R"
TIR_IMPORT = "# from mlcbench.script import tir as T"
INLINE_CONSTANT_LIMIT = 64
_RESERVED = {"R", "T", "I", "cls", "metadata", "tvm", "mlcbench"}
_CALL_DPS = {"relax.call_tir": "R.call_tir", "relax.call_dps_packed": "R.call_dps_packed"}


def py_value(value) -> str:
    """A Python literal for an attribute value: strings in double quotes."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        inner = ", ".join(py_value(v) for v in value)
        return f"({inner},)" if isinstance(value, tuple) and len(value) == 1 else (
            f"({inner})" if isinstance(value, tuple) else f"[{inner}]")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_value(k)}: {py_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, IntImm):
        return str(value.value)
    return repr(value)


class RelaxPrinter:
    def __init__(self, indent: int = 4, in_module: bool = False, module_name: str = "Module"):
        self.indent = indent
        self.in_module = in_module
        self.module_name = module_name
        self.uses_module = False     # a GlobalVar was printed as ``cls.f``
        self.names: dict[int, str] = {}
        self.used: set = set(_RESERVED) | {module_name}
        self.keep_alive: list = []
        self.constants: list = []

    # -- names --------------------------------------------------------------------------
    def define(self, var) -> str:
        base = re.sub(r"\W", "_", var.name_hint or "v") or "v"
        if base[0].isdigit() or keyword.iskeyword(base):
            base = "v_" + base
        name, k = base, 1
        while name in self.used:
            name, k = f"{base}{k}", k + 1
        self.used.add(name)
        self.names[id(var)] = name
        self.keep_alive.append(var)
        return name

    def name(self, var) -> str:
        return self.names.get(id(var)) or self.define(var)

    # -- struct info --------------------------------------------------------------------
    def dim(self, dim) -> str:
        if isinstance(dim, IntImm):
            return str(dim.value)
        if isinstance(dim, TIRVar):
            return f'"{dim.name}"'
        return '"' + dim.script().replace('"', "'") + '"'

    def dims(self, values) -> str:
        inner = ", ".join(self.dim(d) for d in values)
        return f"({inner},)" if len(values) == 1 else f"({inner})"

    def sinfo(self, sinfo: StructInfo) -> str:
        if isinstance(sinfo, TensorStructInfo):
            parts = []
            if isinstance(sinfo.shape, rx.ShapeExpr):
                parts.append(self.dims(sinfo.shape.values))
            elif isinstance(sinfo.shape, rx.Var):
                parts.append(self.name(sinfo.shape))
            elif sinfo.ndim >= 0:
                parts.append(f"ndim={sinfo.ndim}")
            if sinfo.dtype:
                parts.append(f'dtype="{sinfo.dtype}"')
            return f"R.Tensor({', '.join(parts)})" if parts else "R.Tensor"
        if isinstance(sinfo, TupleStructInfo):
            return f"R.Tuple({', '.join(self.sinfo(f) for f in sinfo.fields)})"
        if isinstance(sinfo, ShapeStructInfo):
            if sinfo.values is not None:
                return f"R.Shape([{', '.join(self.dim(d) for d in sinfo.values)}])"
            return f"R.Shape(ndim={sinfo.ndim})" if sinfo.ndim >= 0 else "R.Shape"
        if isinstance(sinfo, PrimStructInfo):
            return f'R.Prim("{sinfo.dtype}")'
        if isinstance(sinfo, FuncStructInfo):
            params = ", ".join(self.sinfo(p) for p in sinfo.params)
            params = f"({params},)" if len(sinfo.params) == 1 else f"({params})"
            return f"R.Callable({params}, {self.sinfo(sinfo.ret)})"
        assert isinstance(sinfo, ObjectStructInfo), sinfo
        return "R.Object"

    # -- expressions --------------------------------------------------------------------
    def expr(self, e) -> str:
        if isinstance(e, rx.Var):
            return self.name(e)
        if isinstance(e, GlobalVar):
            self.uses_module = self.uses_module or self.in_module
            return f"cls.{e.name_hint}" if self.in_module else e.name_hint
        if isinstance(e, rx.Call):
            return self.call(e)
        if isinstance(e, rx.Tuple):
            return self.tuple_text(e.fields)
        if isinstance(e, rx.TupleGetItem):
            return f"{self.expr(e.tuple_value)}[{e.index}]"
        if isinstance(e, rx.Constant):
            return self.constant(e)
        if isinstance(e, rx.ShapeExpr):
            return f"R.shape([{', '.join(self.dim(d) for d in e.values)}])"
        if isinstance(e, rx.PrimValue):
            return f"R.prim_value({e.value.script()})"
        if isinstance(e, rx.StringImm):
            return f"R.str({py_value(e.value)})"
        if isinstance(e, rx.ExternFunc):
            return f"R.ExternFunc({py_value(e.global_symbol)})"
        if isinstance(e, Op):
            return "R." + e.name[len("relax."):]
        if isinstance(e, rx.Function):
            raise NotImplementedError("nested functions are printed only as module members")
        raise InvalidTypeError(f"cannot print {type(e).__name__} as Relax TVMScript")

    def tuple_text(self, fields) -> str:
        if not fields:
            return "R.tuple()"
        inner = ", ".join(self.expr(f) for f in fields)
        return f"({inner},)" if len(fields) == 1 else f"({inner})"

    def constant(self, c) -> str:
        array = c.data.numpy()
        if array.size <= INLINE_CONSTANT_LIMIT:
            return f'R.const({array.tolist()!r}, "{array.dtype if array.dtype != np.bool_ else "bool"}")'
        self.constants.append(c)
        return f'metadata["relax.expr.Constant"][{len(self.constants) - 1}]'

    def out_sinfo(self, call) -> str:
        sinfo = call.sinfo_args[0]
        if isinstance(sinfo, TupleStructInfo):
            return "[" + ", ".join(self.sinfo(f) for f in sinfo.fields) + "]"
        return self.sinfo(sinfo)

    def call(self, call) -> str:
        op = call.op
        if isinstance(op, Op) and op.name in _CALL_DPS:
            callee = call.args[0]
            callee = py_value(callee.global_symbol) if isinstance(callee, rx.ExternFunc) \
                else self.expr(callee)
            args = call.args[1]
            args_text = self.tuple_text(args.fields) if isinstance(args, rx.Tuple) \
                else self.expr(args)
            text = f"{_CALL_DPS[op.name]}({callee}, {args_text}, out_sinfo={self.out_sinfo(call)}"
            if len(call.args) > 2:
                text += f", tir_vars={self.expr(call.args[2])}"
            return text + ")"
        if isinstance(op, Op) and op.name == "relax.call_pure_packed":
            args = [py_value(call.args[0].global_symbol)] + [self.expr(a) for a in call.args[1:]]
            sinfo = ", ".join(self.sinfo(s) for s in call.sinfo_args)
            return f"R.call_pure_packed({', '.join(args)}, sinfo_args=[{sinfo}])"
        parts = [self.expr(a) for a in call.args]
        parts += [f"{k}={py_value(v)}" for k, v in call.attrs.items() if v is not None]
        if not isinstance(op, Op) and call.sinfo_args:
            parts.append("sinfo_args=[" + ", ".join(self.sinfo(s) for s in call.sinfo_args)
                          + "]")
        return f"{self.expr(op)}({', '.join(parts)})"

    # -- statements ---------------------------------------------------------------------
    def binding_lines(self, binding, depth: int) -> list[str]:
        pad = " " * (self.indent * depth)
        value = binding.value
        if isinstance(binding, rx.MatchCast):
            name = self.define(binding.var)
            return [f"{pad}{name} = R.match_cast({self.expr(value)}, "
                    f"{self.sinfo(binding.struct_info)})"]
        if isinstance(value, rx.If):
            return self.if_lines(binding.var, value, depth)
        text = self.expr(value)
        name = self.define(binding.var)
        return [f"{pad}{name}: {self.sinfo(binding.var.struct_info)} = {text}"]

    def if_lines(self, var, node, depth) -> list[str]:
        pad = " " * (self.indent * depth)
        lines = [f"{pad}if {self.expr(node.cond)}:"]
        branches = []
        for branch in (node.true_branch, node.false_branch):
            body_lines = []
            for block in branch.blocks:
                body_lines += self.block_lines(block, depth + 1)
            branches.append((body_lines, branch.body))
        name = self.define(var)
        for k, (body_lines, body) in enumerate(branches):
            if k == 1:
                lines.append(f"{pad}else:")
            lines += body_lines
            lines.append(f"{pad}{' ' * self.indent}{name}: {self.sinfo(var.struct_info)} = "
                         f"{self.expr(body)}")
        return lines

    def block_lines(self, block, depth: int) -> list[str]:
        if not isinstance(block, rx.DataflowBlock):
            return [line for b in block.bindings for line in self.binding_lines(b, depth)]
        pad = " " * (self.indent * depth)
        lines = [f"{pad}with R.dataflow():"]
        for binding in block.bindings:
            lines += self.binding_lines(binding, depth + 1)
        outputs = [self.name(b.var) for b in block.bindings
                   if not isinstance(b.var, rx.DataflowVar)]
        lines.append(f"{pad}{' ' * self.indent}R.output({', '.join(outputs)})")
        return lines

    def function(self, func, name: str, depth: int = 0) -> str:
        pad = " " * (self.indent * depth)
        inner = " " * (self.indent * (depth + 1))
        attrs = dict(func.attrs)
        private = "global_symbol" not in attrs
        if attrs.get("global_symbol") == name:
            del attrs["global_symbol"]
        options = [] if func.is_pure else ["pure=False"]
        options += ["private=True"] if private else []
        decorator = f"@R.function({', '.join(options)})" if options else "@R.function"
        params = ", ".join(f"{self.define(p)}: {self.sinfo(p.struct_info)}" for p in func.params)
        lines = [f"{pad}{decorator}",
                 f"{pad}def {name}({params}) -> {self.sinfo(func.ret_struct_info)}:"]
        if attrs:
            lines.append(f"{inner}R.func_attr({py_value(attrs)})")
        body = func.body
        blocks, result = (body.blocks, body.body) if isinstance(body, rx.SeqExpr) else ((), body)
        self.uses_module = False
        body_lines = [line for block in blocks for line in self.block_lines(block, depth + 1)]
        body_lines.append(f"{inner}return {self.expr(result)}")
        if self.uses_module:
            # as TVM prints it: the functions of the module being defined are ``cls.f``
            lines.append(f"{inner}cls = {self.module_name}")
        return "\n".join(lines + body_lines)


def _with_header(text: str) -> str:
    header = [RELAX_IMPORT] + ([TIR_IMPORT] if "T." in text else [])
    return "\n".join(header) + "\n\n" + text


def format_function(func, name: str | None = None, indent: int = 4) -> str:
    """A standalone ``@R.function`` with its import header."""
    name = name or func.attrs.get("global_symbol") or "main"
    return _with_header(RelaxPrinter(indent).function(func, name))


def module_function_printer(func, name, depth, indent, module_name: str = "Module") -> str:
    """The hook ``register_function_printer`` calls for Relax functions in a module."""
    return RelaxPrinter(indent, in_module=True, module_name=module_name).function(func, name,
                                                                                  depth)


def script(obj, name: str | None = None, indent_spaces: int = 4, **options) -> str | None:
    """Text of a Relax node, or None for nodes of other IR levels."""
    if isinstance(obj, rx.Function):
        return format_function(obj, name, indent_spaces)
    printer = RelaxPrinter(indent_spaces)
    if isinstance(obj, StructInfo):
        return printer.sinfo(obj)
    if isinstance(obj, (rx.Expr, Op)) and not isinstance(obj, rx.SeqExpr):
        return printer.expr(obj)
    if isinstance(obj, rx.SeqExpr):
        lines = [line for block in obj.blocks for line in printer.block_lines(block, 0)]
        return "\n".join(lines + [f"return {printer.expr(obj.body)}"])
    if isinstance(obj, rx.BindingBlock):
        return "\n".join(printer.block_lines(obj, 0))
    if isinstance(obj, (rx.VarBinding, rx.MatchCast)):
        return "\n".join(printer.binding_lines(obj, 0))
    return None
