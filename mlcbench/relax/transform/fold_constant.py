"""FoldConstant: compute at compile time what depends only on constants.

Before (weights bound by ``BindParams``)::

    with R.dataflow():
        lv0 = R.permute_dims(R.const(w))              # only constants: folded
        lv1 = R.call_tir(cls.scale, (R.const(b),), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.matmul(x, lv0)                          # x is a parameter: kept
        gv1 = R.add(gv, lv1)
        R.output(gv1)

After::

    with R.dataflow():
        gv = R.matmul(x, R.const(w.T))
        gv1 = R.add(gv, R.const(scale(b)))
        R.output(gv1)

How a call is evaluated: a high-level op is legalized to a PrimFunc (its registry entry,
as ``LegalizeOps`` does), which is compiled with ``mlcbench.build`` and run on the
constants; a ``call_tir`` of a PrimFunc of the module is compiled and run the same way.
Kernels are compiled once per pass run (equal PrimFuncs share one build). Calls that
cannot be evaluated this way (no legalization, symbolic shapes, packed functions) are
left as they are. A variable bound to a constant is replaced by the constant.
"""
from __future__ import annotations

from ...ir.errors import CodegenError, MLCBenchError
from ...ir.module import GlobalVar, IRModule
from ...ir.op import Op
from ...ir.structural import structural_equal, structural_hash
from ...ir.transform import module_pass
from ...runtime import ndarray
from ...tir.expr import FloatImm, IntImm
from ..block_builder import BlockBuilder
from ..expr import (Call, Constant, Function, MatchCast, PrimValue, ShapeExpr, StringImm, Tuple,
                    VarBinding)
from ..expr_functor import ExprMutator
from ..op.registry import get_op_info, legalize_call
from ..struct_info import TensorStructInfo, TupleStructInfo, struct_info_equal


@module_pass(opt_level=0, name="FoldConstant")
class FoldConstant:
    """Evaluate calls whose arguments are all constants (see the module docstring).

    Example
    -------
    >>> mod = relax.transform.BindParams("main", params)(mod)
    >>> mod = relax.transform.FoldConstant()(mod)
    """

    def transform_module(self, mod: IRModule, ctx) -> IRModule:
        evaluator = ConstantEvaluator(mod)
        out = None
        for gv, func in mod.items():
            if not isinstance(func, Function):
                continue
            new = _Folder(mod, evaluator).visit_expr(func)
            if new is not func:
                out = out or mod.copy()
                out[gv] = new
        return out or mod


def is_constant_like(expr) -> bool:
    """A Constant, or a tuple whose fields all are."""
    if isinstance(expr, Tuple):
        return all(is_constant_like(f) for f in expr.fields)
    return isinstance(expr, Constant)


def _static_argument(expr) -> bool:
    """An argument known at compile time: a constant, a static shape, a scalar, a string."""
    if isinstance(expr, Tuple):
        return all(_static_argument(f) for f in expr.fields)
    if isinstance(expr, ShapeExpr):
        return all(isinstance(v, IntImm) for v in expr.values)
    if isinstance(expr, PrimValue):
        return isinstance(expr.value, (IntImm, FloatImm))
    return isinstance(expr, (Constant, StringImm))


def _has_tensor_constant(expr) -> bool:
    if isinstance(expr, Tuple):
        return any(_has_tensor_constant(f) for f in expr.fields)
    return isinstance(expr, Constant)


class ConstantEvaluator:
    """Evaluates calls on constants by compiling kernels; one cache of kernels per instance.

    ``evaluate(call)`` returns a Constant (or a Tuple of them), or None when the call
    cannot be evaluated at compile time.
    """

    _KERNEL = "fold_constant_kernel"

    def __init__(self, mod: IRModule):
        self.mod = mod
        self.kernels: dict[int, list] = {}     # structural hash -> [(PrimFunc, kernel)]
        self.builds = 0

    def evaluate(self, call: Call):
        if not isinstance(call.op, Op):
            return None
        if call.op.name == "relax.call_tir":
            return self.run_call_tir(call, self.mod)
        if not all(_static_argument(a) for a in call.args):
            return None
        # Without a tensor constant to compute from, folding would only embed a new tensor.
        if not any(_has_tensor_constant(a) for a in call.args) \
                or get_op_info(call.op).legalize is None:
            return None
        builder = BlockBuilder()
        try:
            lowered = legalize_call(builder, call)
        except MLCBenchError:
            return None                  # this op cannot be legalized with these arguments
        if not (isinstance(lowered, Call) and lowered.op == Op.get("relax.call_tir")):
            return None
        return self.run_call_tir(lowered, builder.get())

    def run_call_tir(self, call: Call, mod: IRModule):
        gvar, args = call.args[0], call.args[1]
        func = mod[gvar] if isinstance(gvar, GlobalVar) and gvar in mod else None
        inputs = list(args.fields) if isinstance(args, Tuple) else [args]
        outputs = _static_outputs(call.sinfo_args[0])
        if getattr(func, "ir_level", None) != "tir" or len(call.args) > 2 or outputs is None \
                or not all(isinstance(a, Constant) for a in inputs) \
                or len(func.params) != len(inputs) + len(outputs):
            return None
        kernel = self.kernel(func)
        if kernel is None:
            return None
        results = [ndarray.empty(shape, dtype) for shape, dtype in outputs]
        kernel(*(c.data for c in inputs), *results)
        constants = [Constant(r) for r in results]
        return Tuple(constants) if isinstance(call.sinfo_args[0], TupleStructInfo) \
            else constants[0]

    def kernel(self, func):
        """The compiled ``func`` (built once per evaluator), or None if it cannot be built."""
        # One symbol for every kernel, so equal PrimFuncs under different names hash alike.
        func = func.with_attr("global_symbol", self._KERNEL)
        bucket = self.kernels.setdefault(structural_hash(func), [])
        for known, kernel in bucket:
            if structural_equal(known, func):
                return kernel
        from ...target import Target
        from ...tir.build import build   # looked up per call, so tests can count builds
        try:
            # Run here, at build time: compiled for this host, not for the build's target
            # (code for -mcpu=znver4 ends an AVX2 host's process with SIGILL).
            kernel = build(IRModule({self._KERNEL: func}), Target("llvm"))[self._KERNEL]
            self.builds += 1
        except CodegenError:
            kernel = None
        bucket.append((func, kernel))
        return kernel


def _static_outputs(sinfo):
    """[(shape, dtype)] of a call's outputs when all are tensors of static shape."""
    fields = sinfo.fields if isinstance(sinfo, TupleStructInfo) else [sinfo]
    out = []
    for field in fields:
        if not isinstance(field, TensorStructInfo) or field.static_shape() is None \
                or not field.dtype:
            return None
        out.append((field.static_shape(), field.dtype))
    return out


class _Folder(ExprMutator):
    """Folds calls bottom-up; a variable bound to a constant is replaced by the constant
    (its binding is dropped: every use now holds the constant)."""

    def __init__(self, mod, evaluator: ConstantEvaluator):
        super().__init__(mod)
        self.evaluator = evaluator
        self.constants: dict = {}

    def visit_var_(self, var):
        if var in self.constants:
            return self.constants[var]
        return super().visit_var_(var)

    visit_dataflow_var_ = visit_var_

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        folded = self.evaluator.evaluate(call)
        return call if folded is None else folded

    def visit_tuple_getitem_(self, item):
        item = self.visit_expr_post_order(item)
        # An item of a literal (folded) tuple is the field itself.
        if isinstance(item.tuple_value, Tuple):
            return item.tuple_value.fields[item.index]
        return item

    def visit_binding(self, binding):
        value = self.visit_expr(binding.value)
        if isinstance(binding, VarBinding) and is_constant_like(value):
            self.constants[binding.var] = value
            return
        if value is binding.value and binding.var not in self.var_remap_:
            self.builder_.emit_normalized(binding)
            return
        value = self.builder_.normalize(value)
        var = binding.var
        sinfo = binding.struct_info if isinstance(binding, MatchCast) \
            else self.builder_.struct_info_of(value)
        # Folding can sharpen the struct info (a constant's shape is exact): rebind the variable.
        if not struct_info_equal(sinfo, var.struct_info):
            var = type(var)(var.name_hint, sinfo)
            self.var_remap_[binding.var] = var
        self.builder_.emit_normalized(binding.replace(var=var, value=value))


__all__ = ["ConstantEvaluator", "FoldConstant", "is_constant_like"]
