"""AnnotateTIROpPattern: each PrimFunc's fusion kind, read from its blocks."""
import pytest

from mlcbench import relax
from mlcbench.relax import op
from mlcbench.relax.op import OpPatternKind as K
from mlcbench.relax.transform.annotate_tir_op_pattern import analyze_op_pattern
from mlcbench.script import ir as I, tir as T


@T.prim_func
def elemwise(A: T.Buffer((4, 5), "float32"), B: T.Buffer((4, 5), "float32")):
    for i, j in T.grid(4, 5):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.exp(A[vi, vj])


@T.prim_func
def broadcast(A: T.Buffer((5,), "float32"), B: T.Buffer((4, 5), "float32")):
    for i, j in T.grid(4, 5):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj]


@T.prim_func
def unit_dim_broadcast(A: T.Buffer((1, 5), "float32"), B: T.Buffer((4, 5), "float32")):
    for i, j in T.grid(4, 5):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[0, vj]


@T.prim_func
def bias_add(A: T.Buffer((4, 5), "float32"), C: T.Buffer((5,), "float32"),
             B: T.Buffer((4, 5), "float32")):
    for i, j in T.grid(4, 5):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + C[vj]


@T.prim_func
def transpose(A: T.Buffer((5, 4), "float32"), B: T.Buffer((4, 5), "float32")):
    for i, j in T.grid(4, 5):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]


@T.prim_func
def row_sum(A: T.Buffer((4, 5), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 5):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def matmul(A: T.Buffer((4, 3), "float32"), W: T.Buffer((3, 5), "float32"),
           B: T.Buffer((4, 5), "float32")):
    for i, j, k in T.grid(4, 5, 3):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                B[vi, vj] = T.float32(0)
            B[vi, vj] = B[vi, vj] + A[vi, vk] * W[vk, vj]


@T.prim_func
def window_max(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 2):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(-1e30)
            B[vi] = T.max(B[vi], A[vi * 2 + vk])


@T.prim_func
def sum_then_scale(A: T.Buffer((4, 5), "float32"), B: T.Buffer((4,), "float32")):
    S = T.alloc_buffer((4,), "float32")
    for i, k in T.grid(4, 5):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]
    for i in range(4):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = S[vi] * T.float32(0.2)


@T.prim_func
def two_stores(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(2):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
            B[vi + 2] = A[vi + 2]


@T.prim_func
def constant_index(A: T.Buffer((4, 5), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi, 0] + A[0, vi]


@pytest.mark.parametrize("func, expected", [
    (elemwise, K.ELEMWISE), (broadcast, K.BROADCAST), (unit_dim_broadcast, K.BROADCAST),
    (bias_add, K.ELEMWISE), (transpose, K.INJECTIVE), (row_sum, K.COMM_REDUCE),
    (matmul, K.OUT_EWISE_FUSABLE), (window_max, K.OUT_EWISE_FUSABLE),
    (sum_then_scale, K.OUT_EWISE_FUSABLE), (two_stores, K.OPAQUE),
    (constant_index, K.INJECTIVE),
], ids=["elemwise", "broadcast", "unit_dim_broadcast", "bias_add", "transpose", "row_sum",
        "matmul", "window_max", "sum_then_scale", "two_stores", "constant_index"])
def test_hand_written_prim_funcs(func, expected):
    assert analyze_op_pattern(func) == expected


def tensor(name, shape, dtype="float32"):
    return relax.Var(name, relax.TensorStructInfo(shape, dtype))


X, W, B, IMG, KER = (tensor("x", (2, 4)), tensor("w", (4, 5)), tensor("b", (4,)),
                     tensor("img", (1, 3, 8, 8)), tensor("k", (4, 3, 3, 3)))


@pytest.mark.parametrize("call, expected", [
    (op.matmul(X, W), K.OUT_EWISE_FUSABLE),
    (op.nn.conv2d(IMG, KER, padding=1), K.OUT_EWISE_FUSABLE),
    (op.nn.max_pool2d(IMG, 2, 2), K.OUT_EWISE_FUSABLE),
    (op.nn.softmax(X), K.OUT_EWISE_FUSABLE),
    (op.add(X, B), K.ELEMWISE),
    (op.nn.relu(X), K.ELEMWISE),
    (op.expand_dims(B, [0]), K.BROADCAST),
    (op.permute_dims(X), K.INJECTIVE),
    (op.reshape(X, (8,)), K.INJECTIVE),
    (op.flatten(IMG), K.INJECTIVE),
    (op.sum(X, axis=1), K.COMM_REDUCE),
    (op.max(X, axis=0), K.COMM_REDUCE),
], ids=["matmul", "conv2d", "max_pool2d", "softmax", "add", "relu", "expand_dims",
        "permute_dims", "reshape", "flatten", "sum", "max"])
def test_legalized_ops_get_tvm_kinds(call, expected):
    bb = relax.BlockBuilder()
    lowered = op.legalize_call(bb, call)
    assert analyze_op_pattern(bb.get()[lowered.args[0]]) == expected


@I.ir_module
class Kernels:
    @T.prim_func
    def exp(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = T.exp(A[vi])

    @T.prim_func
    def total(A: T.Buffer((4,), "float32"), B: T.Buffer((), "float32")):
        T.func_attr({"op_pattern": 8})
        for k in range(4):
            with T.block("B"):
                vk = T.axis.remap("R", [k])
                with T.init():
                    B[()] = T.float32(0)
                B[()] = B[()] + A[vk]


def test_pass_sets_op_pattern_and_keeps_given_ones():
    mod = relax.transform.AnnotateTIROpPattern()(Kernels)
    assert mod["exp"].attrs["op_pattern"] == 0
    assert mod["total"].attrs["op_pattern"] == 8      # given by the author: kept
    assert "op_pattern" not in Kernels["exp"].attrs    # the input is not changed
    assert relax.transform.AnnotateTIROpPattern()(mod) is mod


def test_course_mlp_kernels(course_mlp):
    mod = relax.transform.AnnotateTIROpPattern()(course_mlp)
    assert mod["linear0"].attrs["op_pattern"] == K.OUT_EWISE_FUSABLE
    assert mod["relu0"].attrs["op_pattern"] == K.ELEMWISE
