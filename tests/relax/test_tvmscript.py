"""TVMScript for Relax: the course's end-to-end module parses, prints TVM-style, and
round-trips through text."""
from __future__ import annotations   # the 2022 course's bare `Tensor(...)` annotations

import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir import ParseError
from mlcbench.script import from_source, ir as I, relax as R, tir as T


@I.ir_module
class MyModule:
    @T.prim_func
    def relu0(X: T.Buffer((1, 128), "float32"), Y: T.Buffer((1, 128), "float32")):
        T.func_attr({"global_symbol": "relu0", "tir.noalias": True})
        for i, j in T.grid(1, 128):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @T.prim_func
    def linear0(X: T.Buffer((1, 784), "float32"), W: T.Buffer((128, 784), "float32"),
                B: T.Buffer((128,), "float32"), Z: T.Buffer((1, 128), "float32")):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        Y = T.alloc_buffer((1, 128), "float32")
        for i, j, k in T.grid(1, 128, 784):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, 128):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @T.prim_func
    def linear1(X: T.Buffer((1, 128), "float32"), W: T.Buffer((10, 128), "float32"),
                B: T.Buffer((10,), "float32"), Z: T.Buffer((1, 10), "float32")):
        T.func_attr({"global_symbol": "linear1", "tir.noalias": True})
        Y = T.alloc_buffer((1, 10), "float32")
        for i, j, k in T.grid(1, 10, 128):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(1, 10):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor((1, 784), "float32"),
             w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"),
             w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), R.Tensor((1, 128), dtype="float32"))
            lv1 = R.call_tir(cls.relu0, (lv0,), R.Tensor((1, 128), dtype="float32"))
            out = R.call_tir(cls.linear1, (lv1, w1, b1), R.Tensor((1, 10), dtype="float32"))
            R.output(out)
        return out


@I.ir_module
class MyModuleWithExternCall:
    @R.function
    def main(x: R.Tensor((1, 784), "float32"),
             w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"),
             w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0), R.Tensor((1, 128), dtype="float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((1, 128), dtype="float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((1, 10), dtype="float32"))
            R.output(out)
        return out


def round_trip(obj):
    again = from_source(obj.script())
    tvm.ir.assert_structural_equal(obj, again)
    return again


def test_course_module_parses_with_global_var_references():
    main = MyModule["main"]
    assert isinstance(main, relax.Function)
    calls = [b.value for b in main.body.blocks[0].bindings]
    assert [c.args[0] for c in calls] == [MyModule.get_global_var(n)
                                          for n in ("linear0", "relu0", "linear1")]
    assert isinstance(main.body.blocks[0].bindings[0].var, relax.DataflowVar)
    assert main.ret_struct_info.static_shape() == (1, 10)


def test_course_module_prints_like_tvm():
    text = MyModule.script()
    assert "# from mlcbench.script import relax as R" in text
    assert ('lv0: R.Tensor((1, 128), dtype="float32") = R.call_tir(cls.linear0, (x, w0, b0), '
            'out_sinfo=R.Tensor((1, 128), dtype="float32"))') in text
    assert "@T.prim_func\n    def linear0" in text and "@R.function\n    def main" in text
    assert "        R.output(out)\n        return out" in text


@pytest.mark.parametrize("mod", [MyModule, MyModuleWithExternCall], ids=["call_tir", "dps"])
def test_course_modules_round_trip(mod):
    round_trip(mod)


def test_extern_call_names_the_packed_function():
    call = MyModuleWithExternCall["main"].body.blocks[0].bindings[1].value
    assert call.op.name == "relax.call_dps_packed"
    assert call.args[0].global_symbol == "env.relu"
    assert 'R.call_dps_packed("env.relu", (lv0,), out_sinfo=' in MyModuleWithExternCall.script()


@R.function
def high_level(x: R.Tensor(("n", 784), "float32"), w: R.Tensor((128, 784), "float32"),
               b: R.Tensor((128,), "float32")) -> R.Tensor(("n", 128), "float32"):
    R.func_attr({"num_input": 1})
    with R.dataflow():
        lv0 = R.matmul(x, R.permute_dims(w))
        lv1 = R.add(lv0, b)
        lv2 = R.nn.relu(lv1)
        parts = R.split(lv2, 2, axis=1)
        first = parts[0]
        scaled = R.multiply(first, R.const(0.5, "float32"))
        gv = R.concat((scaled, parts[1]), axis=1)
        R.output(gv)
    return gv


def test_high_level_ops_and_symbolic_shapes_round_trip():
    params = high_level.params
    n = params[0].struct_info.dims[0]
    assert isinstance(n, tvm.tir.Var) and high_level.ret_struct_info.dims[0] is n
    assert high_level.attrs == {"num_input": 1, "global_symbol": "high_level"}
    again = round_trip(high_level)
    assert again.ret_struct_info.dims[0] is again.params[0].struct_info.dims[0]


@R.function
def with_control_flow(cond: R.Tensor((), "bool"), x: R.Tensor((2, 3), "float32")):
    y = R.match_cast(x, R.Tensor(("m", 3), "float32"))
    if cond:
        a = R.exp(y)
        r = R.add(a, a)
    else:
        r = R.multiply(y, y)
    s = R.sum(r, axis=[0, 1])
    t = R.reshape(r, R.shape([3, 2]))
    return (s, t)


def test_if_and_match_cast_round_trip():
    bindings = with_control_flow.body.blocks[0].bindings
    assert isinstance(bindings[0], relax.MatchCast)
    assert isinstance(bindings[1].value, relax.If)
    round_trip(with_control_flow)


def test_struct_info_printing():
    assert repr(R.Tensor((1, 784), "float32")) == 'R.Tensor((1, 784), dtype="float32")'
    assert repr(R.Tensor(ndim=2, dtype="int64")) == 'R.Tensor(ndim=2, dtype="int64")'
    assert repr(R.Tuple(R.Tensor((2,), "float32"), R.Object)) == \
        'R.Tuple(R.Tensor((2,), dtype="float32"), R.Object)'
    assert repr(R.Shape([1, "n"])) == 'R.Shape([1, "n"])'


def test_large_constants_print_as_metadata_and_small_inline():
    x = relax.Var("x", R.Tensor((100,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        y = bb.emit(relax.op.add(x, relax.const(np.arange(100, dtype="float32"))))
        z = bb.emit(relax.op.multiply(y, relax.const(np.float32(0.1))))
        bb.emit_func_output(z)
    text = bb.get().script()
    assert 'metadata["relax.expr.Constant"][0]' in text
    assert 'R.const(0.10000000149011612, "float32")' in text
    with pytest.raises(ParseError, match="metadata"):
        from_source(text)


def test_parse_errors_point_at_the_source():
    text = '''
@R.function
def f(x: R.Tensor((2,), "float32")):
    y = R.add(x, R.const([1.0, 2.0, 3.0], "float32"))
    return y
'''
    with pytest.raises(ParseError, match=r"<string>:4:.*relax.add: shapes \(2,\) and \(3,\)"):
        from_source(text)
    with pytest.raises(ParseError, match="undefined name 'z'"):
        from_source(text.replace("2.0, 3.0", "2.0").replace("return y", "return z"))
    with pytest.raises(ParseError, match="ends with R.output"):
        from_source('''
@R.function
def f(x: R.Tensor((2,), "float32")):
    with R.dataflow():
        y = R.exp(x)
    return y
''')
    with pytest.raises(ParseError, match="not in one"):
        from_source('''
@R.function
def f(x: R.Tensor((2,), "float32")):
    y = R.call_tir(cls.g, (x,), R.Tensor((2,), "float32"))
    return y
''')


def test_older_course_spelling_is_accepted():
    text = MyModule.script().replace("cls.linear0", "linear0").replace(
        'out_sinfo=R.Tensor((1, 128), dtype="float32"))', '(1, 128), dtype="float32")')
    assert "R.call_tir(linear0, (x, w0, b0), (1, 128), dtype=" in text
    tvm.ir.assert_structural_equal(from_source(text), MyModule)


def test_cls_assigned_from_the_class_names_the_module_being_defined():
    # Course chapter 4 writes `cls = MyModule` inside the class; an earlier cell had bound
    # MyModule to another module (here: this file's MyModule), which must not be used.
    @I.ir_module
    class MyModule:
        @T.prim_func
        def relu0(X: T.Buffer((1, 4), "float32"), Y: T.Buffer((1, 4), "float32")):
            for i, j in T.grid(1, 4):
                with T.block("Y"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

        @R.function
        def main(x: R.Tensor((1, 4), "float32")):
            with R.dataflow():
                cls = MyModule
                out = R.call_tir(cls.relu0, (x,), out_sinfo=R.Tensor((1, 4), dtype="float32"))
                R.output(out)
            return out

    (binding,) = MyModule["main"].body.blocks[0].bindings
    assert binding.value.args[0] is MyModule.get_global_var("relu0")
    vm = relax.VirtualMachine(relax.build(MyModule, "llvm"), tvm.cpu())
    x = np.array([[-1, 2, -3, 4]], "float32")
    np.testing.assert_allclose(vm["main"](tvm.nd.array(x)).numpy(), np.maximum(x, 0))


def test_cls_equals_module_in_text_as_tvm_prints_it():
    text = MyModule.script().replace("        with R.dataflow():",
                                     "        cls = Module\n        with R.dataflow():", 1)
    assert "cls = Module" in text
    tvm.ir.assert_structural_equal(from_source(text), MyModule)


def test_module_name_used_as_a_value_is_refused():
    text = MyModule.script().replace("R.output(out)",
                                     "y = R.add(out, Module)\n            R.output(out)")
    with pytest.raises(ParseError, match="module being defined: bind it with `cls = Module`"):
        from_source(text)


def test_2022_course_spelling_of_chapter_9_parses_and_rewrites():
    @I.ir_module
    class MyModule:
        @R.function
        def main(x: Tensor((3, 4), "float32"), y: Tensor((3, 4), "float32")):  # noqa: F821
            with relax.dataflow():
                lv0 = relax.multiply(x, y)
                gv0 = relax.add(lv0, y)
                relax.output(gv0)
            return gv0

    @relax.expr_functor.mutator
    class EwiseFMARewriter(relax.PyExprMutator):
        def visit_call_(self, call):
            call = self.visit_expr_post_order(call)
            if call.op != tvm.ir.Op.get("relax.add"):
                return call
            value = self.lookup_binding(call.args[0])
            if not isinstance(value, relax.Call) or value.op != tvm.ir.Op.get("relax.multiply"):
                return call
            return relax.Call(tvm.ir.Op.get("relax.ewise_fma"),
                              [value.args[0], value.args[1], call.args[1]], None, None)

    (block,) = MyModule["main"].body.blocks
    assert isinstance(block, relax.DataflowBlock)
    assert MyModule["main"].params[0].struct_info.static_shape() == (3, 4)
    fused = relax.analysis.remove_all_unused(EwiseFMARewriter().visit_expr(MyModule["main"]))
    (binding,) = fused.body.blocks[0].bindings
    assert binding.value.op == tvm.ir.Op.get("relax.ewise_fma")
    old_type = relax.DynTensorType(2, "float32")
    assert (old_type.ndim, old_type.dtype, old_type.shape) == (2, "float32", None)
    assert relax.vm.build is relax.build
