"""Older TVM tutorials' te schedules run as written (sizes made small)."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import te


def test_gemm_on_cpu_tutorial_packing_and_write_cache():
    # "How to optimize GEMM on CPU", its last step (array packing + write cache + parallel)
    M = K = N = 64
    bn = 16
    ctx = tvm.context("llvm", 0)
    rng = np.random.default_rng(0)
    a = tvm.nd.array(rng.random((M, K)).astype("float32"), ctx)
    b = tvm.nd.array(rng.random((K, N)).astype("float32"), ctx)
    k = te.reduce_axis((0, K), "k")
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    packedB = te.compute((N / bn, K, bn), lambda x, y, z: B[y, x * bn + z], name="packedB")
    C = te.compute((M, N), lambda x, y: te.sum(
        A[x, k] * packedB[tvm.tir.indexdiv(y, bn), k, tvm.tir.indexmod(y, bn)], axis=k),
        name="C")
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "global")
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], bn, bn)
    s[CC].compute_at(s[C], yo)
    xc, yc = s[CC].op.axis
    (k,) = s[CC].op.reduce_axis
    ko, ki = s[CC].split(k, factor=4)
    s[CC].reorder(ko, xc, ki, yc)
    s[CC].unroll(ki)
    s[CC].vectorize(yc)
    s[C].parallel(xo)
    x, y, z = s[packedB].op.axis
    s[packedB].vectorize(z)
    s[packedB].parallel(x)

    text = str(tvm.lower(s, [A, B, C], simple_mode=True))
    assert "for x in T.parallel(4):" in text                    # packing, outer axis
    assert text.count("T.Broadcast(A_1[") == 4                   # ki unrolled by 4
    func = tvm.build(s, [A, B, C], target="llvm", name="mmult")
    c = tvm.nd.array(np.zeros((M, N), dtype="float32"), ctx)
    func(a, b, c)
    np.testing.assert_allclose(c.asnumpy(), a.asnumpy() @ b.asnumpy(), rtol=1e-5)
    assert func.time_evaluator(func.entry_name, ctx, number=2)(a, b, c).mean > 0


def test_gpu_style_schedule_records_its_bindings():
    # the shared/local caching pattern of the GPU tutorials, checked as TensorIR
    n = 64
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    AS = s.cache_read(A, "shared", [C])
    AL = s.cache_read(AS, "local", [C])
    CL = s.cache_write(C, "local")
    by, ty = s[C].split(C.op.axis[0], factor=16)
    bx, tx = s[C].split(C.op.axis[1], factor=16)
    s[C].reorder(by, bx, ty, tx)
    for axis, tag in ((by, "blockIdx.y"), (bx, "blockIdx.x"), (ty, "threadIdx.y"),
                      (tx, "threadIdx.x")):
        s[C].bind(axis, te.thread_axis(tag))
    s[CL].compute_at(s[C], tx)
    ko, ki = s[CL].split(s[CL].op.reduce_axis[0], factor=8)
    s[AS].compute_at(s[CL], ko)
    s[AL].compute_at(s[CL], ki)
    text = s.to_tir_schedule([A, B, C]).mod.script()
    assert text.count("T.thread_binding(") == 4
    # A_shared is filled once per ko (16 x 8 elements), A_shared_local per ki
    shared = text.index('T.block("A_shared")')
    assert "for ax0_2, ax1_2 in T.grid(16, 8):" in text[:shared]
    assert text.index('T.block("A_shared_local")') > shared


@pytest.mark.parametrize("split", [{"factor": 4}, {"nparts": 3}])
def test_vector_add_tutorial_with_symbolic_length(split):
    # "Getting started with tensor expressions": n is a variable, the loop is split,
    # parallelized and vectorized; every length runs
    tgt = tvm.target.Target(target="llvm", host="llvm")
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    C = te.compute(A.shape, lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C.op)
    outer, inner = s[C].split(C.op.axis[0], **split)
    s[C].parallel(outer)
    s[C].vectorize(inner)
    text = str(tvm.lower(s, [A, B, C], simple_mode=True))
    assert "T.parallel(" in text and "< n" in text                # guarded tail
    fadd = tvm.build(s, [A, B, C], tgt, target_host="llvm", name="myadd_parallel")
    dev = tvm.device(tgt.kind.name, 0)
    for length in (1, 5, 64):
        a = tvm.nd.array(np.random.uniform(size=length).astype(A.dtype), dev)
        b = tvm.nd.array(np.random.uniform(size=length).astype(B.dtype), dev)
        c = tvm.nd.array(np.zeros(length, dtype=C.dtype), dev)
        fadd(a, b, c)
        np.testing.assert_allclose(c.numpy(), a.numpy() + b.numpy())
