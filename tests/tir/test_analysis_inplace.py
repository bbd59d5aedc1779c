"""can_write_in_place: a kernel may write its output over an input it reads pointwise."""
import pytest

from mlcbench.script import tir as T
from mlcbench.tir.analysis import can_write_in_place


@T.prim_func
def relu(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.max(A[vi, vj], T.float32(0))


@T.prim_func
def bias_add(A: T.Buffer((4, 8), "float32"), bias: T.Buffer((8,), "float32"),
             B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + bias[vj]


@T.prim_func
def transpose(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]


@T.prim_func
def stencil(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + A[(vi + 1) % 8]


@T.prim_func
def matmul(A: T.Buffer((8, 8), "float32"), W: T.Buffer((8, 8), "float32"),
           B: T.Buffer((8, 8), "float32")):
    for i, j, k in T.grid(8, 8, 8):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                B[vi, vj] = T.float32(0)
            B[vi, vj] = B[vi, vj] + A[vi, vk] * W[vk, vj]


@T.prim_func
def pool(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    for i, j, r in T.grid(4, 4, 2):
        with T.block("B"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                B[vi, vj] = T.min_value("float32")
            B[vi, vj] = T.max(B[vi, vj], A[vi, (vj + vr) % 4])


@T.prim_func
def softmax(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
    total = T.alloc_buffer((2,), "float32")
    for i, k in T.grid(2, 4):
        with T.block("total"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                total[vi] = T.float32(0)
            total[vi] = total[vi] + T.exp(A[vi, vk])
    for i, j in T.grid(2, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.exp(A[vi, vj]) / total[vi]


@T.prim_func
def broadcast_input(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[0, vj]


@T.prim_func
def twice_per_element(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for repeat, i in T.grid(2, 8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + T.float32(1)


@T.prim_func
def two_blocks(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
    for i in range(8):
        with T.block("B2"):
            vi = T.axis.remap("S", [i])
            B[vi] = B[vi] + A[vi]


@pytest.mark.parametrize("func, source, target", [(relu, 0, 1), (bias_add, 0, 2)])
def test_elementwise_kernels_may_write_over_their_input(func, source, target):
    assert can_write_in_place(func, source, target)


@pytest.mark.parametrize("func, source, target", [
    (transpose, 0, 1), (stencil, 0, 1), (matmul, 0, 2), (pool, 0, 1), (softmax, 0, 1),
    (broadcast_input, 0, 1), (twice_per_element, 0, 1), (two_blocks, 0, 1),
    (bias_add, 1, 2),                 # the bias has another shape
    (relu, 1, 0), (relu, 0, 0), (relu, 0, 5)])
def test_kernels_reading_other_elements_are_refused(func, source, target):
    assert not can_write_in_place(func, source, target)
