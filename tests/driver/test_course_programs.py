"""The course's first tensor programs, end to end: TVMScript -> build -> numbers vs numpy.

Each program is also printed and parsed back (round trip) before it is built, so the
printer, the parser, lowering and code generation are exercised together.
"""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench.driver.kernels import MM_RELU
from mlcbench.script import from_source
from mlcbench.script import tir as T


@T.prim_func
def vector_add(A: T.Buffer[128, "float32"], B: T.Buffer[128, "float32"],
               C: T.Buffer[128, "float32"]):
    T.func_attr({"global_symbol": "vector_add", "tir.noalias": True})
    for i in range(128):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] + B[vi]


MMRelu = from_source(MM_RELU)


@T.prim_func
def bmm_relu(A: T.Buffer((16, 128, 128), "float32"), B: T.Buffer((16, 128, 128), "float32"),
             C: T.Buffer((16, 128, 128), "float32")):
    T.func_attr({"global_symbol": "bmm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((16, 128, 128), "float32")
    for n, i, j, k in T.grid(16, 128, 128, 128):
        with T.block("Y"):
            vn, vi, vj, vk = T.axis.remap("SSSR", [n, i, j, k])
            with T.init():
                Y[vn, vi, vj] = T.float32(0)
            Y[vn, vi, vj] = Y[vn, vi, vj] + A[vn, vi, vk] * B[vn, vk, vj]
    for n, i, j in T.grid(16, 128, 128):
        with T.block("C"):
            vn, vi, vj = T.axis.remap("SSS", [n, i, j])
            C[vn, vi, vj] = T.max(Y[vn, vi, vj], T.float32(0))


@T.prim_func
def broadcast_add(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"global_symbol": "broadcast_add", "tir.noalias": True})
    A = T.match_buffer(a, (4, 4), "int64")
    B = T.match_buffer(b, (4,), "int64")
    C = T.match_buffer(c, (4, 4), "int64")
    for i, j in T.grid(4, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vj]


N, CI, H, W, CO, K = 1, 1, 8, 8, 2, 3
OUT_H, OUT_W = H - K + 1, W - K + 1


@T.prim_func
def conv(X: T.Buffer((N, CI, H, W), "int64"), Wt: T.Buffer((CO, CI, K, K), "int64"),
         Out: T.Buffer((N, CO, OUT_H, OUT_W), "int64")):
    T.func_attr({"global_symbol": "conv", "tir.noalias": True})
    for b, k, i, j, di, dj, q in T.grid(N, CO, OUT_H, OUT_W, K, K, CI):
        with T.block("conv"):
            vb, vk, vi, vj, vdi, vdj, vq = T.axis.remap("SSSSRRR", [b, k, i, j, di, dj, q])
            with T.init():
                Out[vb, vk, vi, vj] = T.int64(0)
            Out[vb, vk, vi, vj] = Out[vb, vk, vi, vj] + X[vb, vq, vi + vdi, vj + vdj] * Wt[vk, vq, vdi, vdj]


@T.prim_func
def softmax(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8, 64), "float32")):
    T.func_attr({"global_symbol": "softmax", "tir.noalias": True})
    row_max = T.alloc_buffer((8,), "float32")
    row_sum = T.alloc_buffer((8,), "float32")
    for i, k in T.grid(8, 64):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                row_max[vi] = T.min_value("float32")
            row_max[vi] = T.max(row_max[vi], A[vi, vk])
    for i, k in T.grid(8, 64):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                row_sum[vi] = T.float32(0)
            row_sum[vi] = row_sum[vi] + T.exp(A[vi, vk] - row_max[vi])
    for i, j in T.grid(8, 64):
        with T.block("out"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.exp(A[vi, vj] - row_max[vi]) / row_sum[vi]


@T.prim_func
def loop_kinds(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "loop_kinds", "tir.noalias": True})
    for i in T.parallel(64):
        for j0 in T.unroll(4):
            for j1 in T.vectorized(16):
                with T.block("B"):
                    vi = T.axis.spatial(64, i)
                    vj = T.axis.spatial(64, j0 * 16 + j1)
                    B[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)


def _round_trip(program):
    text = program.script()
    again = from_source(text)
    tvm.ir.assert_structural_equal(again, program)
    return again


def _run(program, name, *arrays):
    lib = tvm.build(_round_trip(program), target="llvm")
    nds = [tvm.nd.array(a) for a in arrays]
    lib[name](*nds)
    return [x.numpy() for x in nds]


def _rand(*shape, dtype="float32", rng=np.random.default_rng(0)):
    if np.dtype(dtype).kind == "i":
        return rng.integers(-5, 5, size=shape).astype(dtype)
    return rng.random(shape, dtype=np.float32).astype(dtype)


def test_vector_add_old_buffer_spelling():
    a, b = _rand(128), _rand(128)
    *_, c = _run(vector_add, "vector_add", a, b, np.zeros(128, "float32"))
    np.testing.assert_allclose(c, a + b, rtol=1e-6)


def test_mm_relu():
    a, b = _rand(128, 128) - 0.5, _rand(128, 128) - 0.5
    *_, c = _run(MMRelu, "mm_relu", a, b, np.zeros((128, 128), "float32"))
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


def test_batched_matmul_relu():
    a, b = _rand(16, 128, 128) - 0.5, _rand(16, 128, 128) - 0.5
    *_, c = _run(bmm_relu, "bmm_relu", a, b, np.zeros((16, 128, 128), "float32"))
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-5)


def test_int64_broadcast_add():
    a, b = _rand(4, 4, dtype="int64"), _rand(4, dtype="int64")
    *_, c = _run(broadcast_add, "broadcast_add", a, b, np.zeros((4, 4), "int64"))
    np.testing.assert_array_equal(c, a + b)


def test_int64_direct_convolution():
    x, w = _rand(N, CI, H, W, dtype="int64"), _rand(CO, CI, K, K, dtype="int64")
    *_, out = _run(conv, "conv", x, w, np.zeros((N, CO, OUT_H, OUT_W), "int64"))
    expected = np.zeros_like(out)
    for i in range(OUT_H):
        for j in range(OUT_W):
            patch = x[:, :, i:i + K, j:j + K]                     # (N, CI, K, K)
            expected[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w)
    np.testing.assert_array_equal(out, expected)


def test_softmax_uses_exp_and_max_reduction():
    a = _rand(8, 64) * 10
    _, b = _run(softmax, "softmax", a, np.zeros((8, 64), "float32"))
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(b, e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_parallel_vectorized_unrolled_loops_in_tvmscript():
    a = _rand(64, 64)
    _, b = _run(loop_kinds, "loop_kinds", a, np.zeros((64, 64), "float32"))
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)
    lowered = tvm.lower(loop_kinds)
    text = lowered.script()
    assert "T.parallel(64)" in text
    assert "T.Broadcast(T.float32(2), 16)" in text          # 16-lane vector arithmetic
    assert "T.vectorized" not in text and "T.unroll" not in text


@pytest.mark.parametrize("bad_args", [
    ("too few", lambda a, b, c: (a, b)),
    ("wrong shape", lambda a, b, c: (a, b, tvm.nd.empty((128, 64), "float32"))),
    ("wrong dtype", lambda a, b, c: (a, b, tvm.nd.empty((128, 128), "float64"))),
    ("not an array", lambda a, b, c: (a, b, 3)),
    ("non-contiguous", lambda a, b, c: (a, b, np.zeros((128, 256), "float32")[:, ::2])),
], ids=lambda p: p[0])
def test_compiled_entry_rejects_bad_arguments_without_crashing(bad_args):
    lib = tvm.build(MMRelu, target="llvm")
    a, b, c = (tvm.nd.array(np.zeros((128, 128), "float32")) for _ in range(3))
    with pytest.raises((TypeError, ValueError), match="mm_relu"):
        lib["mm_relu"](*bad_args[1](a, b, c))
