"""Seed 001 (notes on TVM, Relax and TensorIR), its programs as written.

Changed only where the environment forces it: nothing in this seed. The notes show
code fragments; the ones that are programs run here whole.
"""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax.frontend import nn
from mlcbench.script import ir as I, tir as T


class MLPModel(nn.Module):
    def __init__(self):
        super(MLPModel, self).__init__()
        self.fc1 = nn.Linear(784, 256)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = self.fc1(x)
        x = self.relu1(x)
        x = self.fc2(x)
        return x


def test_seed_001_mlp_through_tvm_compile_and_the_vm(capsys):
    mod, param_spec = MLPModel().export_tvm(
        spec={"forward": {"x": nn.spec.Tensor((1, 784), "float32")}}
    )
    mod.show()

    target = tvm.target.Target("llvm")
    ex = tvm.compile(mod, target)
    device = tvm.cpu()
    vm = relax.VirtualMachine(ex, device)
    data = np.random.rand(1, 784).astype("float32")
    tvm_data = tvm.nd.array(data, device=device)
    params = [np.random.rand(*param.shape).astype("float32") for _, param in param_spec]
    params = [tvm.nd.array(param, device=device) for param in params]
    print(vm["forward"](tvm_data, *params).numpy())

    # what the program printed is the model's output, checked against numpy
    w1, b1, w2, b2 = (p.numpy() for p in params)
    expected = np.maximum(data @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(vm["forward"](tvm_data, *params).numpy(), expected, rtol=1e-4)
    assert "R.matmul" in capsys.readouterr().out


def test_seed_001_vector_add_with_the_old_buffer_spelling():
    @T.prim_func
    def vector_add(A: T.Buffer[128, "float32"],
                   B: T.Buffer[128, "float32"],
                   C: T.Buffer[128, "float32"]):
        # 并行执行元素级加法
        for i in T.parallel(128):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                C[vi] = A[vi] + B[vi]

    lib = tvm.build(vector_add, target="llvm")
    a, b = np.random.rand(128).astype("float32"), np.random.rand(128).astype("float32")
    c = tvm.nd.empty((128,), "float32")
    lib(tvm.nd.array(a), tvm.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a + b)


def test_seed_001_split_parallel_unroll_vectorize(capsys):
    IPython = pytest.importorskip("IPython", reason="the seed shows its IR with IPython")

    @tvm.script.ir_module
    class MyAdd:
        @T.prim_func
        def add(A: T.Buffer((4, 4), "int64"),
                B: T.Buffer((4, 4), "int64"),
                C: T.Buffer((4, 4), "int64")):
            T.func_attr({"global_symbol": "add", "tir.noalias": True})
            for i, j in T.grid(4, 4):
                with T.block("C"):
                    vi = T.axis.spatial(4, i)
                    vj = T.axis.spatial(4, j)
                    C[vi, vj] = A[vi, vj] + B[vi, vj]

    sch = tvm.tir.Schedule(MyAdd)
    block = sch.get_block("C", func_name="add")
    i, j = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[2, 2])
    sch.parallel(i0)
    sch.unroll(i1)
    sch.vectorize(j)
    print(IPython.display.Code(sch.mod.script(), language="python"))

    lib = tvm.build(sch.mod, target="llvm")
    a, b = np.arange(16).reshape(4, 4), np.ones((4, 4), "int64")
    c = tvm.nd.empty((4, 4), "int64")
    lib["add"](tvm.nd.array(a), tvm.nd.array(b), c)
    np.testing.assert_array_equal(c.numpy(), a + b)
    assert "T.parallel(2)" in sch.mod.script() and "T.vectorized(4)" in sch.mod.script()
