"""A built Module gives its native memory back when it is collected.

Each build links its code into a JIT engine of its own (``codegen.llvm.jit``); the
engine goes when the last Module or PackedFunc referring to it goes, never earlier.
"""
import gc

import llvmlite.binding as llvm
import numpy as np
import pytest

import mlcbench
from mlcbench.codegen.llvm import engine as llvm_engine
from mlcbench.codegen.llvm.jit import JITLibrary, live_engines
from mlcbench.script import from_source
from mlcbench.target import Target

ADD_ONE = """
@T.prim_func
def add_one(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
"""


@pytest.fixture(scope="module")
def add_one():
    return from_source(ADD_ONE)


def _run(func) -> np.ndarray:
    a = np.arange(16, dtype="float32")
    b = np.zeros(16, "float32")
    func(a, b)
    return b


def test_collected_module_releases_its_engine(add_one):
    gc.collect()
    before = live_engines()
    module = mlcbench.build(add_one, target="llvm")
    library = module._keepalive
    assert isinstance(library, JITLibrary) and not library.released
    assert live_engines() == before + 1
    del module
    gc.collect()
    assert not library.released  # still referenced here
    del library
    gc.collect()
    assert live_engines() == before


def test_function_outlives_its_module_and_then_releases(add_one):
    gc.collect()
    before = live_engines()
    module = mlcbench.build(add_one, target="llvm")
    name = module.entry_name
    func, evaluator = module[name], module.time_evaluator(name, mlcbench.cpu(), number=1)
    del module
    gc.collect()
    assert live_engines() == before + 1
    np.testing.assert_array_equal(_run(func), np.arange(16, dtype="float32") + 1)
    del func
    gc.collect()
    assert live_engines() == before + 1  # the evaluator still calls the code
    assert evaluator(np.zeros(16, "float32"), np.zeros(16, "float32")).mean >= 0
    del evaluator
    gc.collect()
    assert live_engines() == before


def test_repeated_builds_keep_no_engine(add_one):
    gc.collect()
    before = live_engines()
    for _ in range(20):
        np.testing.assert_array_equal(_run(mlcbench.build(add_one, target="llvm")),
                                      np.arange(16, dtype="float32") + 1)
    gc.collect()
    assert live_engines() == before


def test_release_is_explicit_and_idempotent(add_one):
    library = mlcbench.build(add_one, target="llvm")._keepalive
    before = live_engines()
    library.release()
    library.release()
    assert library.released and live_engines() == before - 1
    assert "released" in repr(library)


def test_optimizer_frees_its_pass_pipeline(monkeypatch):
    """llvmlite 0.50's ModulePassManager never frees itself (about 75 KB per build)."""
    managers = []
    make_builder = llvm.create_pass_builder

    def recording_builder(machine, options):
        builder = make_builder(machine, options)
        make_manager = builder.getModulePassManager
        builder.getModulePassManager = lambda: managers.append(make_manager()) or managers[-1]
        return builder

    monkeypatch.setattr(llvm_engine.llvm, "create_pass_builder", recording_builder)
    ir_text = ('define i32 @f(ptr %p) {\n  store float 1.0, ptr %p\n  ret i32 0\n}\n')
    artifact = llvm_engine.compile_ir(ir_text, Target("llvm -mcpu=znver3"), name="f")
    assert "define" in artifact.get_source("ll")
    assert len(managers) == 1 and managers[0].closed
