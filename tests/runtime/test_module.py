import gc
import weakref

import numpy as np
import pytest

import mlcbench.runtime as rt
from mlcbench.ir.errors import RuntimeError_
from mlcbench.runtime import KernelSpec, Module
from mlcbench.runtime import ndarray as nd


def test_lookup_and_membership(kernels):
    assert "add_one" in kernels and "nope" not in kernels
    assert kernels.get_function("add_one") is kernels["add_one"]  # built once, cached
    assert kernels.entry_name == "add_one" and kernels.type_key == "llvm"
    assert kernels.function_names == ["add_one", "axpb", "count_calls", "always_fail"]
    assert kernels.kernel_specs["axpb"].shape_vars == ("n",)


def test_missing_function_is_attribute_error_listing_names(kernels):
    with pytest.raises(AttributeError, match="no function 'nope' .*add_one, axpb") as info:
        kernels["nope"]
    assert isinstance(info.value, RuntimeError_)


def test_calling_module_runs_entry_function(kernels):
    a, b = nd.array(np.zeros(16, "float32")), nd.empty((16,))
    kernels(a, b)
    assert b.numpy().tolist() == [1.0] * 16


def test_imported_modules_are_searched_on_request(kernels):
    outer = Module({})
    outer.import_module(kernels)
    assert outer.imported_modules == [kernels] and outer.entry_name == ""
    assert outer.get_function("add_one", query_imports=True) is kernels["add_one"]
    with pytest.raises(AttributeError):
        outer.get_function("add_one")
    with pytest.raises(TypeError):
        outer.import_module("not a module")


def test_get_source_ll_and_asm(kernels):
    assert "define i32 @add_one" in kernels.get_source()
    assert "define i32 @add_one" in kernels.get_source("ll")
    assert "add_one:" in kernels.get_source("asm")
    with pytest.raises(RuntimeError_, match="unknown format"):
        kernels.get_source("cuda")
    with pytest.raises(RuntimeError_, match="no source"):
        Module({}).get_source()


def test_bad_kernel_table_rejected():
    with pytest.raises(TypeError, match="must map to"):
        Module({"f": (KernelSpec("f", "f", ()),)})


def test_function_keeps_jit_engine_alive(make_module):
    module = make_module()
    func = module["add_one"]
    library = module._keepalive
    engine = weakref.ref(library)
    del module, library
    gc.collect()
    assert engine() is not None and not engine().released  # the PackedFunc still holds it
    a, b = nd.array(np.full(16, 2, "float32")), nd.empty((16,))
    func(a, b)
    assert b.numpy().tolist() == [3.0] * 16
    del func
    gc.collect()
    assert engine() is None  # and nothing else does


def test_repr(kernels):
    assert repr(kernels) == "Module(llvm, functions=['add_one', 'axpb', 'count_calls', 'always_fail'])"
    assert rt.Module is Module
