"""VM code generation: each lowered Relax function becomes a flat list of instructions.

The input is a function after ``ToNonDataflow``, ``CallTIRRewrite`` and
``StaticPlanBlockMemory``: bindings of calls (kernels, packed functions, other Relax
functions), allocations, tuples, constants and ``If``. Every variable gets a register
slot; aliases (``lv0 = alloc``) share their value's slot, so they cost nothing at run
time. Values known before the call (constants, static shapes, the planned storages and
the tensors that view them) are placed in a *register template* once; a call copies
the template and runs only the instructions that remain.

The program is plain data (lists, ints, strings), so it travels as JSON inside an
exported library; :mod:`mlcbench.relax.vm` turns it into closures. Instructions::

    ["kernel", kernel, [[kind, reg], ...], fast, text]   kind: t tensor, s shape, p scalar
    ["packed", dst, name, [reg, ...], check, text]       a registered global function;
                                                         its result is checked (below)
    ["call", dst, function, [reg, ...], text]            another Relax function
    ["alloc", dst, [dim, ...], dtype, text]              a fresh tensor (outputs)
    ["tuple", dst, [reg, ...], text]      ["getitem", dst, src, index, text]
    ["shape", dst, [dim, ...], text]      ["prim", dst, dim, text]
    ["match_cast", dst, src, check, text]
    ["if", dst, cond, then_code, then_reg, else_code, else_reg, text]

A dim is an int, ``["var", reg]`` (a symbolic extent held in a register) or
``[op, dim, dim]`` with op in add/sub/mul/floordiv/floormod/min/max.
"""
from __future__ import annotations

from ..ir.errors import CodegenError
from ..ir.module import GlobalVar
from ..ir.op import Op
from ..tir import expr as E
from .expr import (Call, Constant, ExternFunc, Function, If, MatchCast, PrimValue, SeqExpr,
                   ShapeExpr, StringImm, Tuple, TupleGetItem, Var)
from .struct_info import (PrimStructInfo, ShapeStructInfo, TensorStructInfo,
                          TupleStructInfo, shape_text)

_DIM_OPS = {E.Add: "add", E.Sub: "sub", E.Mul: "mul", E.FloorDiv: "floordiv",
            E.FloorMod: "floormod", E.Min: "min", E.Max: "max"}
_ALLOC_OPS = ("relax.builtin.alloc_tensor", "relax.memory.alloc_tensor")


class ModuleContext:
    """What the function compilers share: kernel names and specs, Relax function names,
    and the constant pool (each Constant stored once)."""

    def __init__(self, kernel_names: dict, kernel_specs: dict, function_names: dict):
        self.kernel_names = kernel_names        # GlobalVar -> compiled kernel name
        self.kernel_specs = kernel_specs        # kernel name -> KernelSpec
        self.function_names = function_names    # GlobalVar -> Relax function name
        self.constants: list = []
        self._constant_index: dict = {}

    def constant(self, const: Constant) -> int:
        # By the array's identity: a weight bound in several places is stored once.
        key = id(const.data)
        if key not in self._constant_index:
            self._constant_index[key] = len(self.constants)
            self.constants.append(const.data)
        return self._constant_index[key]


def compile_function(func: Function, name: str, ctx: ModuleContext) -> dict:
    """The VM code of one lowered Relax function (see the module docstring)."""
    return _FunctionCompiler(name, ctx).compile(func)


class _FunctionCompiler:
    def __init__(self, name: str, ctx: ModuleContext):
        self.name, self.ctx = name, ctx
        self.regs: dict = {}            # relax Var or tir Var -> register
        self.num_regs = 0
        self.init: list = []            # [reg, spec] entries of the register template
        self.static: dict = {}          # register -> spec, for registers in the template
        self.code: list = []
        self.aliases: dict = {}         # Var -> name of the variable that later aliases it
        self.alloc_vars: set = set()    # variables bound to an allocation

    # -- registers ----------------------------------------------------------------------
    def new_reg(self) -> int:
        self.num_regs += 1
        return self.num_regs - 1

    def template(self, spec) -> int:
        reg = self.new_reg()
        self.init.append([reg, spec])
        self.static[reg] = spec
        return reg

    def fail(self, text: str, message: str):
        raise CodegenError(f"relax.build: function {self.name!r}: {text}: {message}")

    # -- functions ----------------------------------------------------------------------
    def compile(self, func: Function) -> dict:
        params = []
        for param in func.params:
            reg = self.new_reg()
            self.regs[param] = reg
            check = self.check_spec(param.struct_info)
            params.append({"name": param.name_hint, "reg": reg, "check": check})
        result = self.seq(func.body) if isinstance(func.body, SeqExpr) \
            else self.expr(func.body, "return")
        return {"name": self.name, "params": params, "num_regs": self.num_regs,
                "init": self.init, "code": self.code, "result": result}

    def check_spec(self, sinfo):
        """What the VM checks of a value of ``sinfo``; binds symbolic dims seen first."""
        if isinstance(sinfo, TensorStructInfo):
            dims = None if sinfo.dims is None else [self.check_dim(d) for d in sinfo.dims]
            return ["tensor", str(sinfo.dtype or ""), sinfo.ndim, dims]
        if isinstance(sinfo, TupleStructInfo):
            return ["tuple", [self.check_spec(f) for f in sinfo.fields]]
        if isinstance(sinfo, ShapeStructInfo):
            dims = None if sinfo.values is None else [self.check_dim(d) for d in sinfo.values]
            return ["shape", sinfo.ndim, dims]
        if isinstance(sinfo, PrimStructInfo):
            return ["prim", str(sinfo.dtype)]
        return ["object"]

    def result_check(self, call: Call):
        """What a packed function's result must be: Python code may return anything, and
        kernels later read it trusting its struct info."""
        spec = self.check_spec(call.struct_info)
        if _binds(spec):
            self.fail(_expr_text(call), "the result of a packed function may not introduce "
                                        "new symbolic dimensions; bind them with match_cast")
        return spec

    def check_dim(self, dim):
        if isinstance(dim, E.Var) and dim not in self.regs:
            self.regs[dim] = self.new_reg()
            return ["bind", self.regs[dim]]
        return ["check", self.dim(dim)]

    def dim(self, dim):
        if isinstance(dim, E.IntImm):
            return dim.value
        if isinstance(dim, E.Var):
            if dim not in self.regs:
                self.fail(dim.name, "this symbolic dimension is bound by no parameter or "
                                    "match_cast before its use")
            return ["var", self.regs[dim]]
        if type(dim) in _DIM_OPS:
            return [_DIM_OPS[type(dim)], self.dim(dim.a), self.dim(dim.b)]
        self.fail(str(dim), "shape expressions may use + - * // % min max of ints and "
                            "symbolic dimensions only")

    # -- bindings -----------------------------------------------------------------------
    def seq(self, seq: SeqExpr, result_text: str = "return") -> int:
        # Aliases are noted first, so error texts name outputs as the source names them.
        bindings = [b for block in seq.blocks for b in block.bindings]
        for binding in bindings:
            if isinstance(binding.value, Var):
                self.aliases.setdefault(binding.value, binding.var.name_hint)
            elif isinstance(binding.value, Tuple):
                for field in binding.value.fields:
                    if isinstance(field, Var):
                        self.aliases.setdefault(field, binding.var.name_hint)
        for binding in bindings:
            self.binding(binding)
        return self.expr(seq.body, result_text)

    def binding(self, binding) -> None:
        text = self.binding_text(binding)
        if isinstance(binding, MatchCast):
            src = self.expr(binding.value, text)
            dst = self.new_reg()
            self.code.append(["match_cast", dst, src, self.check_spec(binding.struct_info),
                              text])
            self.regs[binding.var] = dst
            return
        reg = self.expr(binding.value, text)
        value = binding.value
        if isinstance(value, If) or (isinstance(value, Call)
                                     and value.op in self.ctx.function_names):
            # The variable's struct info may be an annotation the value does not honour;
            # kernels will trust it, so check it (binding any new symbolic dims).
            spec = self.check_spec(binding.var.struct_info)
            if spec != ["object"]:
                reg = self.emit(["match_cast", None, reg, spec, text])
        self.regs[binding.var] = reg
        if isinstance(value, Call) and isinstance(value.op, Op) and value.op.name in _ALLOC_OPS:
            self.alloc_vars.add(binding.var)

    def binding_text(self, binding) -> str:
        value = binding.value
        if isinstance(value, Call) and isinstance(value.op, (GlobalVar, ExternFunc)) \
                and value.op not in self.ctx.function_names:
            outputs = [a for a in value.args if self.is_alloc(a)]
            inputs = [a for a in value.args if not self.is_alloc(a)]
            names = [self.aliases.get(o, o.name_hint) for o in outputs] or [binding.var.name_hint]
            kind = "call_tir" if isinstance(value.op, GlobalVar) else "call_dps_packed"
            callee = value.op.name_hint if isinstance(value.op, GlobalVar) \
                else f'"{value.op.global_symbol}"'
            return f"{', '.join(names)} = {kind}({callee}, ({_args_text(inputs)}))"
        if isinstance(value, Call) and getattr(value.op, "name", "") == "relax.call_pure_packed":
            callee, args = value.args[0].global_symbol, value.args[1:]
            return f'{binding.var.name_hint} = call_pure_packed("{callee}", ({_args_text(args)}))'
        return f"{binding.var.name_hint} = {_expr_text(value)}"

    def is_alloc(self, arg) -> bool:
        """Whether ``arg`` is bound to an allocation itself: an output of a DPS call."""
        return isinstance(arg, Var) and arg in self.alloc_vars

    # -- expressions --------------------------------------------------------------------
    def expr(self, expr, text: str) -> int:
        if isinstance(expr, Var):
            if expr not in self.regs:
                self.fail(text, f"variable {expr.name_hint!r} is used before it is bound")
            return self.regs[expr]
        if isinstance(expr, Constant):
            return self.template(["const", self.ctx.constant(expr)])
        if isinstance(expr, StringImm):
            return self.template(["value", expr.value])
        if isinstance(expr, ShapeExpr):
            dims = [self.dim(d) for d in expr.values]
            if all(isinstance(d, int) for d in dims):
                return self.template(["shape", dims])
            return self.emit(["shape", None, dims, text])
        if isinstance(expr, PrimValue):
            # dim() handles integer expressions only; a float stays a plain value.
            value = self.dim(expr.value) if not isinstance(expr.value, E.FloatImm) \
                else expr.value.value
            if isinstance(value, (int, float)):
                return self.template(["value", value])
            return self.emit(["prim", None, value, text])
        if isinstance(expr, Tuple):
            return self.emit(["tuple", None, [self.expr(f, text) for f in expr.fields], text])
        if isinstance(expr, TupleGetItem):
            return self.emit(["getitem", None, self.expr(expr.tuple_value, text), expr.index,
                              text])
        if isinstance(expr, Call):
            return self.call(expr, text)
        if isinstance(expr, If):
            return self.if_expr(expr, text)
        if isinstance(expr, SeqExpr):
            return self.seq(expr, text)
        self.fail(text, f"the VM cannot evaluate a {type(expr).__name__} here "
                        "(functions are called by name: cls.f(...))")

    def emit(self, instruction: list) -> int:
        dst = self.new_reg()
        instruction[1] = dst
        self.code.append(instruction)
        return dst

    def if_expr(self, node: If, text: str) -> int:
        cond = self.expr(node.cond, text)
        outer, arms = self.code, []
        for arm in (node.true_branch, node.false_branch):
            # Each arm compiles into its own code list, run only when the arm is taken.
            self.code = []
            result = self.expr(arm, text)
            arms.append((self.code, result))
        self.code = outer
        return self.emit(["if", None, cond, arms[0][0], arms[0][1], arms[1][0], arms[1][1],
                          f"if {_expr_text(node.cond)} (for {text})"])

    # -- calls --------------------------------------------------------------------------
    def call(self, call: Call, text: str) -> int:
        op = call.op
        if isinstance(op, GlobalVar) and op in self.ctx.kernel_names:
            return self.kernel_call(self.ctx.kernel_names[op], call.args, text)
        if isinstance(op, GlobalVar) and op in self.ctx.function_names:
            args = [self.expr(a, text) for a in call.args]
            return self.emit(["call", None, self.ctx.function_names[op], args, text])
        if isinstance(op, ExternFunc):
            args = [self.expr(a, text) for a in call.args]
            return self.emit(["packed", None, op.global_symbol, args,
                              self.result_check(call), text])
        if isinstance(op, Op):
            return self.op_call(call, text)
        if isinstance(op, GlobalVar):
            self.fail(text, f"the module has no function {op.name_hint!r}")
        self.fail(text, f"cannot call a {type(op).__name__}; call module functions as "
                        "cls.f(...) and packed functions by name")

    def op_call(self, call: Call, text: str) -> int:
        name = call.op.name
        if name == "relax.call_pure_packed":
            args = [self.expr(a, text) for a in call.args[1:]]
            return self.emit(["packed", None, call.args[0].global_symbol, args,
                              self.result_check(call), text])
        if name == "relax.builtin.alloc_tensor":
            dims = [self.dim(d) for d in call.args[0].values]
            return self.emit(["alloc", None, dims, str(call.attrs.dtype), text])
        if name == "relax.memory.alloc_storage":
            size = call.args[0]
            if not (isinstance(size, ShapeExpr) and isinstance(size.values[0], E.IntImm)):
                self.fail(text, "alloc_storage needs a constant size in bytes")
            return self.template(["storage", size.values[0].value, str(call.attrs.dtype)])
        if name == "relax.memory.alloc_tensor":
            return self.view(call, text)
        if name == "relax.null_value":
            return self.template(["value", None])
        if name in ("relax.call_tir", "relax.call_dps_packed"):
            self.fail(text, f"{name} must be lowered first: run relax.transform."
                            "CallTIRRewrite (relax.build does)")
        self.fail(text, f"operator {name} has no VM implementation; lower it to call_tir "
                        "with relax.transform.LegalizeOps (relax.build's default pipeline "
                        "does)")

    def view(self, call: Call, text: str) -> int:
        storage = self.expr(call.args[0], text)
        shape = call.struct_info.static_shape()
        spec = self.static.get(storage)
        if spec is None or spec[0] != "storage" or shape is None:
            self.fail(text, "memory.alloc_tensor needs a constant shape and a storage from "
                            "memory.alloc_storage")
        return self.template(["view", storage, list(shape), str(call.attrs.dtype),
                              int(call.attrs.get("offset", 0))])

    def kernel_call(self, kernel: str, args, text: str) -> int:
        spec = self.ctx.kernel_specs[kernel]
        operands = [[_operand_kind(a), self.expr(a, text)] for a in args]
        fast = self.verify_kernel_args(spec, args, text)
        # A kernel writes into its output arguments; the call itself yields nothing.
        self.code.append(["kernel", kernel, operands, fast, text])
        return self.template(["value", None])

    def verify_kernel_args(self, spec, args, text: str) -> bool:
        """Check at build time what can be checked; True when the call may skip run-time
        argument checks (every argument a tensor of constant shape that matches)."""
        # Symbolic kernel shapes are checked at run time, when the extents are known.
        if spec.shape_vars or len(args) != len(spec.params):
            # A shape operand expands into several scalars: only all-tensor calls compare counts.
            if len(args) != len(spec.params) and all(_operand_kind(a) == "t" for a in args):
                self.fail(text, f"kernel {kernel_label(spec)} takes {len(spec.params)} "
                                f"arguments, the call passes {len(args)}")
            return False
        for arg, param in zip(args, spec.params):
            sinfo = arg.struct_info
            if param.kind != "buffer" or not isinstance(sinfo, TensorStructInfo):
                return False
            shape = sinfo.static_shape()
            if shape is None:
                return False
            if shape != param.shape or str(sinfo.dtype) != param.dtype:
                self.fail(text, f"kernel {kernel_label(spec)} parameter {param.name} is "
                                f"{param.dtype}{shape_text_ints(param.shape)}, the argument "
                                f"is {sinfo.dtype}{shape_text_ints(shape)}")
        return True


def _binds(spec) -> bool:
    """Whether a check spec binds a symbolic dimension somewhere."""
    if isinstance(spec, list):
        return (len(spec) == 2 and spec[0] == "bind") or any(_binds(x) for x in spec)
    return False


def kernel_label(spec) -> str:
    return repr(spec.name)


def shape_text_ints(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _operand_kind(arg) -> str:
    sinfo = arg.struct_info
    if isinstance(sinfo, ShapeStructInfo):
        return "s"
    if isinstance(sinfo, PrimStructInfo):
        return "p"
    return "t"


def _args_text(args) -> str:
    return ", ".join(_expr_text(a) for a in args) + ("," if len(args) == 1 else "")


def _expr_text(expr) -> str:
    """A one-line description of a value for error messages."""
    if isinstance(expr, Var):
        return expr.name_hint
    if isinstance(expr, GlobalVar):
        return expr.name_hint
    if isinstance(expr, Constant):
        return f"const{tuple(expr.data.shape)}"
    if isinstance(expr, ShapeExpr):
        return f"R.shape({shape_text(expr.values)})"
    if isinstance(expr, Tuple):
        return f"({_args_text(expr.fields)})"
    if isinstance(expr, TupleGetItem):
        return f"{_expr_text(expr.tuple_value)}[{expr.index}]"
    if isinstance(expr, Call):
        op = expr.op
        callee = op.name if isinstance(op, Op) else (
            f'R.ExternFunc("{op.global_symbol}")' if isinstance(op, ExternFunc)
            else _expr_text(op))
        return f"{callee}({', '.join(_expr_text(a) for a in expr.args)})"
    if isinstance(expr, If):
        return f"if {_expr_text(expr.cond)} ..."
    if isinstance(expr, ExternFunc):
        return f'"{expr.global_symbol}"'
    return type(expr).__name__


__all__ = ["ModuleContext", "compile_function"]
