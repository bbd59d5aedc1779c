"""Fixtures shared by the Relax VM tests: the MLC course's end-to-end MLP, written in
TVMScript twice (kernels through ``R.call_tir``, and library functions through
``R.call_dps_packed`` registered in numpy), its weights and its numpy reference."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench.script import ir as I, relax as R, tir as T


@I.ir_module
class CourseMLP:
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
    def relu0(X: T.Buffer((1, 128), "float32"), Y: T.Buffer((1, 128), "float32")):
        T.func_attr({"global_symbol": "relu0", "tir.noalias": True})
        for i, j in T.grid(1, 128):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

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
    def main(x: R.Tensor((1, 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), R.Tensor((1, 128), dtype="float32"))
            lv1 = R.call_tir(cls.relu0, (lv0,), R.Tensor((1, 128), dtype="float32"))
            out = R.call_tir(cls.linear1, (lv1, w1, b1), R.Tensor((1, 10), dtype="float32"))
            R.output(out)
        return out


@I.ir_module
class CourseMLPWithExternCall:
    @R.function
    def main(x: R.Tensor((1, 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0), R.Tensor((1, 128), dtype="float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((1, 128), dtype="float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((1, 10), dtype="float32"))
            R.output(out)
        return out


def numpy_linear(x, w, b, out):
    """``env.linear`` in destination-passing style, as the course registers it."""
    np.matmul(np.from_dlpack(x), np.from_dlpack(w).T, out=np.from_dlpack(out))
    np.add(np.from_dlpack(out), np.from_dlpack(b), out=np.from_dlpack(out))


def numpy_relu(x, out):
    np.maximum(np.from_dlpack(x), 0, out=np.from_dlpack(out))


@pytest.fixture
def course_mlp():
    return CourseMLP


@pytest.fixture
def course_mlp_extern():
    tvm.register_func("env.linear", numpy_linear, override=True)
    tvm.register_func("env.relu", numpy_relu, override=True)
    return CourseMLPWithExternCall


@pytest.fixture(scope="session")
def mlp_weights():
    """(x, w0, b0, w1, b1) as float32 numpy arrays, and the numpy forward of them."""
    rng = np.random.default_rng(7)
    shapes = [(1, 784), (128, 784), (128,), (10, 128), (10,)]
    args = [rng.uniform(-1, 1, size=s).astype("float32") for s in shapes]
    x, w0, b0, w1, b1 = args
    expected = np.maximum(x @ w0.T + b0, 0) @ w1.T + b1
    return args, expected
