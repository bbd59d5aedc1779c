"""Inside an ``@I.ir_module`` class, a Relax function that refers to functions of its
module binds ``cls = <class name>`` after its attributes and calls them as ``cls.f``,
as TVM prints it; the text parses back to the same module."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.script import from_source, ir as I, relax as R, tir as T


@I.ir_module
class Fused:
    @T.prim_func
    def relu(X: T.Buffer((1, 4), "float32"), Y: T.Buffer((1, 4), "float32")):
        for i, j in T.grid(1, 4):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @R.function
    def fused_add(x: R.Tensor((1, 4), "float32"), b: R.Tensor((4,), "float32")):
        R.func_attr({"Primitive": 1})
        with R.dataflow():
            gv = R.add(x, b)
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((1, 4), "float32")):
        cls = Fused
        with R.dataflow():
            lv = cls.fused_add(x, R.const([1.0, -2.0, 3.0, -4.0], "float32"))
            gv = R.call_tir(cls.relu, (lv,), out_sinfo=R.Tensor((1, 4), "float32"))
            R.output(gv)
        return gv


def _function_text(text: str, name: str) -> str:
    start = text.index(f"    def {name}(")
    end = text.find("\n\n", start)
    return text[start:] if end < 0 else text[start:end]


def test_cls_is_bound_after_the_attributes_in_functions_that_call_the_module():
    text = Fused.script()
    main = _function_text(text, "main").splitlines()
    assert main[1] == "        cls = Module"
    assert main[2] == "        with R.dataflow():"
    assert "= cls.fused_add(x, R.const(" in main[3]
    assert "R.call_tir(cls.relu, (lv,)" in main[4]
    assert "cls" not in _function_text(text, "fused_add")    # calls no module function


def test_cls_follows_func_attr_and_uses_the_printed_class_name():
    mod = tvm.IRModule({gv: func.with_attr("global_symbol", "entry") if gv.name_hint == "main"
                        else func for gv, func in Fused.functions.items()})
    text = mod.script(name="MLPFused")
    assert "class MLPFused:" in text
    main = _function_text(text, "main").splitlines()
    assert main[1:3] == ['        R.func_attr({"global_symbol": "entry"})',
                         "        cls = MLPFused"]
    tvm.ir.assert_structural_equal(from_source(text), mod)


def test_printed_module_parses_back_and_runs():
    again = from_source(Fused.script())
    tvm.ir.assert_structural_equal(again, Fused)
    assert again["main"].body.blocks[0].bindings[0].value.op is again.get_global_var("fused_add")
    vm = relax.VirtualMachine(relax.build(again, "llvm"), tvm.cpu())
    x = np.array([[0.5, 0.5, -5.0, 5.0]], "float32")
    expected = np.maximum(x + np.array([1.0, -2.0, 3.0, -4.0], "float32"), 0)
    np.testing.assert_allclose(vm["main"](tvm.nd.array(x)).numpy(), expected)


@pytest.mark.parametrize("name", ["cls", "Module"])
def test_a_variable_named_like_the_alias_is_renamed(name):
    @I.ir_module
    class Mod:
        @R.function
        def inc(x: R.Tensor((2,), "float32")):
            return R.add(x, R.const([1.0, 1.0], "float32"))

        @R.function
        def main(x: R.Tensor((2,), "float32")):
            cls = Mod
            y = cls.inc(x)
            return y

    main = Mod["main"]
    binding = main.body.blocks[0].bindings[0]
    renamed = main.replace(body=main.body.replace(blocks=(main.body.blocks[0].replace(
        bindings=(binding.replace(var=relax.Var(name, binding.var.struct_info)),)),),
        body=relax.Var(name, binding.var.struct_info)))
    text = tvm.IRModule({"inc": Mod["inc"], "main": renamed}).script()
    assert f"        {name}: R.Tensor" not in text
    assert "        cls = Module" in text
