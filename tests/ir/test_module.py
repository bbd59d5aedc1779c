import pytest

from mlcbench import tir
from mlcbench.ir import GlobalVar, IRModule
from mlcbench.ir.errors import CodegenError, InvalidTypeError
from mlcbench.ir.module import as_module


def _func():
    return tir.PrimFunc((), tir.Evaluate(tir.const(0)), attrs={"global_symbol": "f"})


def test_dict_like_access():
    f = _func()
    mod = IRModule({"f": f})
    assert mod["f"] is f and "f" in mod and len(mod) == 1
    gv = mod.get_global_var("f")
    assert isinstance(gv, GlobalVar) and mod[gv] is f
    g = _func()
    mod["f"] = g
    assert mod["f"] is g and len(mod) == 1
    mod.update_func(gv, f)
    assert mod["f"] is f
    assert [name.name_hint for name, _ in mod.functions.items()] == ["f"]


def test_missing_function_lists_what_exists():
    with pytest.raises(KeyError, match=r"'g' is not in the module; it has \['f'\]"):
        IRModule({"f": _func()})["g"]


def test_from_expr_uses_global_symbol():
    assert "f" in IRModule.from_expr(_func())


def test_with_function_leaves_original_untouched():
    mod = IRModule({"f": _func()})
    copy = mod.with_function("g", _func())
    assert "g" in copy and "g" not in mod


def test_as_module_wraps_a_function_and_keeps_a_module():
    f = _func()
    mod = IRModule({"f": f})
    assert as_module(mod, (tir.PrimFunc,), "t") is mod
    assert as_module(f, (tir.PrimFunc,), "t")["main"] is f
    assert as_module(f, (tir.PrimFunc,), "t", by_symbol=True)["f"] is f


def test_as_module_refuses_other_kinds_with_the_callers_error():
    with pytest.raises(InvalidTypeError, match=r"t: expected an IRModule or a PrimFunc, found str"):
        as_module("mod", (tir.PrimFunc,), "t")
    with pytest.raises(CodegenError, match="relax.build: expected an IRModule"):
        as_module(3, (tir.PrimFunc,), "relax.build", CodegenError)
