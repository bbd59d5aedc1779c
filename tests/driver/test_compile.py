"""tvm.compile (current TVM's name) and the older top-level names tvm.context, tvm.gpu,
tvm.module.load."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir.errors import MLCBenchError
from mlcbench.script import ir as I, relax as R, tir as T


@I.ir_module
class AddOne:
    @T.prim_func
    def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.func_attr({"global_symbol": "add_one", "tir.noalias": True})
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] + T.float32(1)

    @R.function
    def main(x: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
        cls = AddOne
        with R.dataflow():
            y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((8,), "float32"))
            R.output(y)
        return y


def test_compile_builds_a_relax_module_for_the_vm():
    ex = tvm.compile(AddOne, target="llvm")
    assert isinstance(ex, relax.Executable)
    x = np.arange(8, dtype="float32")
    np.testing.assert_array_equal(relax.VirtualMachine(ex, tvm.cpu())["main"](x).numpy(), x + 1)


def test_compile_builds_a_tir_module_as_build_does():
    lib = tvm.compile(tvm.IRModule({"add_one": AddOne["add_one"]}), target="llvm")
    a, b = tvm.nd.array(np.ones(8, "float32")), tvm.nd.empty((8,), "float32")
    lib["add_one"](a, b)
    np.testing.assert_array_equal(b.numpy(), np.full(8, 2, "float32"))


def test_old_device_names():
    assert tvm.context("llvm", 0) == tvm.cpu(0) and tvm.context("cpu") == tvm.device("cpu")
    assert tvm.gpu(0) == tvm.cuda(0) and tvm.gpu(0).exist     # the simulated GPU


def test_module_load_is_load_module(tmp_path):
    lib = tvm.build(tvm.IRModule({"add_one": AddOne["add_one"]}), target="llvm")
    lib.export_library(tmp_path / "lib.tar")
    loaded = tvm.module.load(str(tmp_path / "lib.tar"))
    a, b = tvm.nd.array(np.zeros(8, "float32")), tvm.nd.empty((8,), "float32")
    loaded["add_one"](a, b)
    np.testing.assert_array_equal(b.numpy(), np.ones(8, "float32"))


def test_compile_refuses_what_is_not_a_module():
    with pytest.raises(MLCBenchError):
        tvm.compile("model.py", target="llvm")
