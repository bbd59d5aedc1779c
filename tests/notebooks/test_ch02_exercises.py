"""Reference solutions of notebook 2's exercises, checked by the notebook's own checks."""
import pytest

from mlcbench import te
from mlcbench.script import tir as T, ir as I
from helpers.exercise_cells import exercise_namespace

NB = exercise_namespace("02_tensor_programs.ipynb")
tvm = NB["tvm"]


def broadcast_add():
    @I.ir_module
    class BroadcastAdd:
        @T.prim_func
        def add(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32"),
                C: T.Buffer((4, 4), "float32")):
            T.func_attr({"global_symbol": "add", "tir.noalias": True})
            for i, j in T.grid(4, 4):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = A[vi, vj] + B[vj]
    return BroadcastAdd


def conv2d():
    @I.ir_module
    class Conv2d:
        @T.prim_func
        def conv(A: T.Buffer((1, 1, 8, 8), "float32"), W: T.Buffer((2, 1, 3, 3), "float32"),
                 Out: T.Buffer((1, 2, 6, 6), "float32")):
            T.func_attr({"global_symbol": "conv", "tir.noalias": True})
            for b, o, h, w, c, y, x in T.grid(1, 2, 6, 6, 1, 3, 3):
                with T.block("Out"):
                    vb, vo, vh, vw, vc, vy, vx = T.axis.remap("SSSSRRR",
                                                              [b, o, h, w, c, y, x])
                    with T.init():
                        Out[vb, vo, vh, vw] = T.float32(0)
                    Out[vb, vo, vh, vw] = (Out[vb, vo, vh, vw]
                                           + A[vb, vc, vh + vy, vw + vx] * W[vo, vc, vy, vx])
    return Conv2d


def bmm_relu_te():
    A = te.placeholder((4, 64, 64), "float32", name="A")
    B = te.placeholder((4, 64, 64), "float32", name="B")
    k = te.reduce_axis((0, 64), "k")
    Y = te.compute((4, 64, 64), lambda n, i, j: te.sum(A[n, i, k] * B[n, k, j], axis=k),
                   name="Y")
    C = te.compute((4, 64, 64), lambda n, i, j: te.max(Y[n, i, j], 0), name="C")
    return tvm.IRModule({"bmm_relu": te.create_prim_func([A, B, C])})


def bmm_relu_k_declared_spatial():
    @I.ir_module
    class Lying:
        @T.prim_func
        def bmm_relu(A: T.Buffer((4, 64, 64), "float32"), B: T.Buffer((4, 64, 64), "float32"),
                     C: T.Buffer((4, 64, 64), "float32")):
            T.func_attr({"global_symbol": "bmm_relu", "tir.noalias": True})
            Y = T.alloc_buffer((4, 64, 64), "float32")
            for n, i, j, k in T.grid(4, 64, 64, 64):
                with T.block("Y"):
                    vn, vi, vj, vk = T.axis.remap("SSSS", [n, i, j, k])
                    with T.init():
                        Y[vn, vi, vj] = T.float32(0)
                    Y[vn, vi, vj] = Y[vn, vi, vj] + A[vn, vi, vk] * B[vn, vk, vj]
            for n, i, j in T.grid(4, 64, 64):
                with T.block("C"):
                    vn, vi, vj = T.axis.remap("SSS", [n, i, j])
                    C[vn, vi, vj] = T.max(Y[vn, vi, vj], T.float32(0))
    return Lying


def not_attempted():
    raise NotImplementedError


def test_exercise_1_reference_solution_passes():
    assert NB["check_exercise_1"](broadcast_add) is True


def test_exercise_1_rejects_a_transposed_broadcast():
    @I.ir_module
    class ByRow:
        @T.prim_func
        def add(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32"),
                C: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = A[vi, vj] + B[vi]
    with pytest.raises(AssertionError):
        NB["check_exercise_1"](lambda: ByRow)


def test_exercise_2_reference_solution_passes():
    assert NB["check_exercise_2"](conv2d) is True


def test_conv2d_reference_agrees_with_explicit_loops():
    rng = NB["np"].random.default_rng(0)
    data = rng.random((1, 1, 8, 8), dtype="float32")
    weight = rng.random((2, 1, 3, 3), dtype="float32")
    out = NB["conv2d_reference"](data, weight)
    assert out.shape == (1, 2, 6, 6)
    assert out[0, 1, 2, 3] == pytest.approx((data[0, 0, 2:5, 3:6] * weight[1, 0]).sum(),
                                            rel=1e-5)


def test_exercise_3_reference_solution_passes():
    assert NB["check_exercise_3"](bmm_relu_te) is True


def test_exercise_3_rejects_a_reduction_declared_spatial():
    with pytest.raises(AssertionError, match="SSSR"):
        NB["check_exercise_3"](bmm_relu_k_declared_spatial)


def test_unattempted_exercises_report_so(capsys):
    assert not any(NB[f"check_exercise_{k}"](not_attempted) for k in (1, 2, 3))
    assert capsys.readouterr().out.count("not attempted yet") == 3
