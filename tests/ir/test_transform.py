import pytest

from mlcbench import tir
from mlcbench.ir import IRModule, MLCBenchError
from mlcbench.ir.instrument import PassTimingInstrument, RecordingInstrument, pass_instrument
from mlcbench.ir.transform import (PassContext, Sequential, function_pass, module_pass,
                                   prim_func_pass)


def _module():
    body = tir.Evaluate(tir.const(0))
    return IRModule({"main": tir.PrimFunc((), body, attrs={"global_symbol": "main"})})


@prim_func_pass(opt_level=0, name="TagFunc")
def tag_func(func, mod, ctx):
    return func.with_attr("tagged", True)


@module_pass(opt_level=3, name="Expensive")
def expensive(mod, ctx):
    return mod.with_function("extra", mod["main"])


def test_prim_func_pass_applies_to_every_function():
    out = tag_func(_module())
    assert out["main"].attrs["tagged"] is True
    assert "tagged" not in _module()["main"].attrs


def test_opt_level_gates_passes():
    with PassContext(opt_level=2):
        assert "extra" not in expensive(_module())
    with PassContext(opt_level=3):
        assert "extra" in expensive(_module())
    with PassContext(opt_level=2, required_pass=["Expensive"]):
        assert "extra" in expensive(_module())
    with PassContext(opt_level=3, disabled_pass=["Expensive"]):
        assert "extra" not in expensive(_module())


def test_instruments_see_ir_before_and_after_each_pass_in_order():
    recorder, timing = RecordingInstrument(), PassTimingInstrument()
    with PassContext(opt_level=3, instruments=[recorder, timing]):
        out = Sequential([tag_func, expensive])(_module())
    assert [r.name for r in recorder.records] == ["TagFunc", "Expensive"]
    assert "tagged" not in recorder.records[0].before["main"].attrs
    assert recorder.records[0].after["main"].attrs["tagged"] is True
    assert recorder.records[1].after is out
    assert all(r.changed for r in recorder.records)
    assert [name for name, _ in timing.timings] == ["TagFunc", "Expensive"]
    assert "total" in timing.render()


def test_should_run_can_skip_a_pass():
    @pass_instrument
    class SkipTag:
        def should_run(self, mod, info):
            return info.name != "TagFunc"

    with PassContext(instruments=[SkipTag()]):
        assert "tagged" not in tag_func(_module())["main"].attrs


def test_class_based_pass_and_function_pass():
    @module_pass(opt_level=0)
    class Rename:
        def __init__(self, new_name):
            self.new_name = new_name

        def transform_module(self, mod, ctx):
            return IRModule({self.new_name: mod["main"]})

    assert "renamed" in Rename("renamed")(_module())

    @function_pass(opt_level=0)
    def identity(func, mod, ctx):
        return func

    mod = _module()
    assert identity(mod)["main"] is mod["main"]


def test_pass_rejects_non_module_and_bad_results():
    with pytest.raises(TypeError, match="expects an IRModule"):
        tag_func(_module()["main"])

    @module_pass(opt_level=0, name="Broken")
    def broken(mod, ctx):
        return None

    with pytest.raises(MLCBenchError, match="Broken returned NoneType"):
        broken(_module())
