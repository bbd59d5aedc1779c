"""Reference solutions of notebook 9's exercises, checked by the notebook's own checks."""
import pytest

import mlcbench as tvm
from mlcbench import relax, topi
from mlcbench.ir.errors import MLCBenchError
from mlcbench.relax.dpl import is_op, rewrite_call, wildcard
from helpers.exercise_cells import exercise_namespace

NB = exercise_namespace("09_graph_optimization.ipynb")


def solution_1(func):
    a, b, a2, c = wildcard(), wildcard(), wildcard(), wildcard()
    multiply = is_op("relax.multiply")
    pattern = is_op("relax.add")(multiply(a, b), multiply(a2, c))

    def factor(call, matches):
        if matches[a] is not matches[a2]:
            return call
        return relax.op.multiply(matches[a], relax.op.add(matches[b], matches[c]))
    return rewrite_call(pattern, factor, func)


def _primitive(name, params, body):
    """A Primitive Relax function ``name`` computing ``body(*param_vars)``."""
    bb = relax.BlockBuilder()
    variables = [relax.Var(n, sinfo) for n, sinfo in params]
    with bb.function(name, variables):
        with bb.dataflow():
            gv = bb.emit_output(body(bb, *variables))
        bb.emit_func_output(gv)
    return bb.get()[name].with_attr("Primitive", 1)


@relax.expr_functor.mutator
class DenseFusor(relax.PyExprMutator):
    """relu(add(matmul)) (``with_relu``) or add(matmul) into one Primitive sub-function.
    Calls are visited after their arguments, so the two shapes are fused in two passes:
    in one, an add would be fused before the relu that consumes it is seen."""

    def __init__(self, mod, with_relu):
        super().__init__(mod)
        self.mod_, self.with_relu = mod, with_relu
        self.counter = len(mod.functions)

    def fuse(self, ops, call):
        x, w, b = ops
        relu = call.op == tvm.ir.Op.get("relax.nn.relu")

        def body(bb, px, pw, pb):
            out = bb.emit(relax.op.add(bb.emit(relax.op.matmul(px, pw)), pb))
            return relax.op.nn.relu(out) if relu else out
        name = f"fused_dense{self.counter}"
        self.counter += 1
        fn = _primitive(name, [("x", x.struct_info), ("w", w.struct_info),
                               ("b", b.struct_info)], body)
        return relax.Call(self.builder_.add_func(fn, name), [x, w, b], None, None)

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        if self.with_relu:
            is_relu = call.op == tvm.ir.Op.get("relax.nn.relu")
            add = self.lookup_binding(call.args[0]) if is_relu else None
        else:
            add = call
        if not isinstance(add, relax.Call) or add.op != tvm.ir.Op.get("relax.add"):
            return call
        dense = self.lookup_binding(add.args[0])
        if not isinstance(dense, relax.Call) or dense.op != tvm.ir.Op.get("relax.matmul"):
            return call
        return self.fuse((dense.args[0], dense.args[1], add.args[1]), call)

    def transform(self):
        func = relax.analysis.remove_all_unused(self.visit_expr(self.mod_["main"]))
        self.builder_.update_func(self.mod_.get_global_var("main"), func)
        return self.builder_.get()


@relax.expr_functor.mutator
class LowerToTensorIR(relax.PyExprMutator):
    """Each operator of every Relax function to a PrimFunc made by call_te."""
    TOPI = {"relax.matmul": topi.nn.matmul, "relax.add": topi.add,
            "relax.nn.relu": topi.nn.relu}

    def __init__(self, mod):
        super().__init__(mod)
        self.mod_ = mod

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        name = getattr(call.op, "name", None)
        return self.builder_.call_te(self.TOPI[name], *call.args) if name in self.TOPI else call

    def transform(self):
        for gvar, func in self.mod_.functions.items():
            if isinstance(func, relax.Function):
                self.builder_.update_func(gvar, self.visit_expr(func))
        return self.builder_.get()


def solution_2(mod):
    fused = DenseFusor(DenseFusor(mod, with_relu=True).transform(), with_relu=False).transform()
    return relax.transform.FuseTIR()(LowerToTensorIR(fused).transform())


def not_attempted(_):
    raise NotImplementedError


def test_exercise_1_reference_solution_passes():
    assert NB["check_exercise_1"](solution_1) is True


def test_exercise_1_rejects_the_unchanged_program():
    with pytest.raises(MLCBenchError):
        NB["check_exercise_1"](lambda func: func)


def test_exercise_2_reference_solution_passes():
    assert NB["check_exercise_2"](solution_2) is True


def test_exercise_2_rejects_the_unfused_model():
    with pytest.raises(AssertionError, match="calls 5 kernels, expected 2"):
        NB["check_exercise_2"](lambda mod: mod)


def test_unattempted_exercises_report_so():
    assert NB["check_exercise_1"](not_attempted) is False
    assert NB["check_exercise_2"](not_attempted) is False
