"""Visitors and mutators in the course's style, and the analyses built on them."""
import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir import Op
from mlcbench.script import from_source, ir as I, relax as R


@I.ir_module
class MyModule:
    @R.function
    def main(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
        with R.dataflow():
            lv0 = relax.op.multiply(x, y)
            gv0 = relax.op.add(lv0, y)
            R.output(gv0)
        return gv0


@relax.expr_functor.mutator
class EwiseFMARewriter(relax.PyExprMutator):
    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        add_op = tvm.ir.Op.get("relax.add")
        multiply_op = tvm.ir.Op.get("relax.multiply")
        ewise_fma_op = tvm.ir.Op.get("relax.ewise_fma")
        if call.op != add_op:
            return call
        value = self.lookup_binding(call.args[0])
        if not isinstance(value, relax.Call) or value.op != multiply_op:
            return call
        return relax.Call(ewise_fma_op, [value.args[0], value.args[1], call.args[1]], None, None)


@R.function
def expected_fma(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
    R.func_attr({"global_symbol": "main"})
    with R.dataflow():
        lv0 = R.multiply(x, y)
        gv0 = R.ewise_fma(x, y, y)
        R.output(gv0)
    return gv0


def test_course_ewise_fma_rewriter_then_remove_all_unused():
    updated = EwiseFMARewriter().visit_expr(MyModule["main"])
    tvm.ir.assert_structural_equal(updated, expected_fma)
    cleaned = relax.analysis.remove_all_unused(updated)
    (block,) = cleaned.body.blocks
    assert [b.value.op.name for b in block.bindings] == ["relax.ewise_fma"]
    assert "R.ewise_fma(x, y, y)" in cleaned.script()


def test_mutator_returns_the_same_function_when_nothing_changes():
    func = expected_fma
    assert relax.PyExprMutator().visit_expr(func) is func


class DenseAddFusor(relax.PyExprMutator):
    """The course's fusion of matmul + add into a separate primitive function."""

    def __init__(self, mod):
        super().__init__(mod)
        self.mod_ = mod
        self.counter = 0

    def transform(self):
        for global_var, func in self.mod_.functions.items():
            if not isinstance(func, relax.Function) or "Primitive" in func.attrs:
                continue
            updated = relax.analysis.remove_all_unused(self.visit_expr(func))
            self.builder_.update_func(global_var, updated)
        return self.builder_.get()

    def visit_call_(self, call):
        call = self.visit_expr_post_order(call)
        if call.op != Op.get("relax.add"):
            return call
        value = self.lookup_binding(call.args[0])
        if not isinstance(value, relax.Call) or value.op != Op.get("relax.matmul"):
            return call
        x, w, b = value.args[0], value.args[1], call.args[1]
        params = [relax.Var(n, relax.TensorStructInfo(v.struct_info.shape, v.struct_info.dtype))
                  for n, v in zip("xwb", (x, w, b))]
        bb = relax.BlockBuilder()
        name = f"fused_dense_add{self.counter}"
        self.counter += 1
        with bb.function(name, params):
            with bb.dataflow():
                lv0 = bb.emit(relax.op.matmul(params[0], params[1]))
                gv = bb.emit_output(relax.op.add(lv0, params[2]))
            bb.emit_func_output(gv)
        fused = bb.get()[name].with_attr("Primitive", 1)
        global_var = self.builder_.add_func(fused, name)
        return relax.Call(global_var, [x, w, b], None, None)


@I.ir_module
class TwoLayers:
    @R.function
    def main(x: R.Tensor((1, 8), "float32"), w0: R.Tensor((8, 4), "float32"),
             b0: R.Tensor((4,), "float32"), w1: R.Tensor((4, 2), "float32"),
             b1: R.Tensor((2,), "float32")):
        with R.dataflow():
            lv0 = R.matmul(x, w0)
            lv1 = R.add(lv0, b0)
            lv2 = R.nn.relu(lv1)
            lv3 = R.matmul(lv2, w1)
            gv = R.add(lv3, b1)
            R.output(gv)
        return gv


def test_course_dense_add_fusor_adds_functions_and_calls_them():
    mod = DenseAddFusor(TwoLayers).transform()
    assert sorted(g.name_hint for g in mod.get_global_vars()) == \
        ["fused_dense_add0", "fused_dense_add1", "main"]
    bindings = mod["main"].body.blocks[0].bindings
    assert [b.value.op.name_hint if isinstance(b.value.op, relax.GlobalVar) else b.value.op.name
            for b in bindings] == ["fused_dense_add0", "relax.nn.relu", "fused_dense_add1"]
    assert bindings[0].var.struct_info.static_shape() == (1, 4)
    assert mod["main"].ret_struct_info.static_shape() == (1, 2)
    again = from_source(mod.script())
    tvm.ir.assert_structural_equal(mod, again)


def test_visitor_and_variable_analyses():
    func = MyModule["main"]
    seen = []

    class CallNames(relax.PyExprVisitor):
        def visit_call_(self, call):
            seen.append(call.op.name)
            super().visit_call_(call)

    CallNames().visit_expr(func)
    assert seen == ["relax.multiply", "relax.add"]
    x, y = func.params
    body_bindings = func.body.blocks[0].bindings
    assert relax.analysis.free_vars(func) == []
    assert relax.analysis.free_vars(body_bindings[1].value) == [body_bindings[0].var, y]
    assert set(relax.analysis.all_vars(func)) == {x, y, *(b.var for b in body_bindings)}
    kinds = []
    relax.analysis.post_order_visit(func, lambda e: kinds.append(type(e).__name__))
    assert kinds[-1] == "Function" and kinds.count("Call") == 2


def test_remove_all_unused_keeps_what_the_result_needs():
    x = relax.Var("x", R.Tensor((2,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("f", [x]):
        with bb.dataflow():
            used = bb.emit(relax.op.exp(x))
            bb.emit(relax.op.log(used))           # dead
            dead_chain = bb.emit(relax.op.sqrt(x))
            bb.emit(relax.op.tanh(dead_chain))    # dead, and makes sqrt dead
            gv = bb.emit_output(relax.op.negative(used))
        bb.emit_func_output(gv)
    cleaned = relax.analysis.remove_all_unused(bb.get()["f"])
    ops = [b.value.op.name if isinstance(b.value, relax.Call) else "var"
           for b in cleaned.body.blocks[0].bindings]
    assert ops == ["relax.exp", "relax.negative"]
