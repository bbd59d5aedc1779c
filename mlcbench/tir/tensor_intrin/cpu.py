"""Tensor intrinsics for CPUs with wide vector units.

``"f32_fma_16"``: ``C[0:16] += A[0] * B[0:16]`` -- one row of a matmul micro-kernel,
a broadcast of ``A`` times a 16-wide slice of ``B`` accumulated into ``C``. Its impl is
one 16-lane vector multiply-add (one AVX-512 ``vfmadd`` after LLVM)::

    sch.split(j, [None, 16]); sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block, k)
    sch.tensorize(j_1, "f32_fma_16")
"""
from ...script import tir as T
from .registry import TensorIntrin

F32_FMA_16 = "f32_fma_16"


@T.prim_func
def f32_fma_16_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (1,), "float32", offset_factor=1)
    B = T.match_buffer(b, (16,), "float32", offset_factor=1)
    C = T.match_buffer(c, (16,), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16], A[0:1], B[0:16])
        T.writes(C[0:16])
        for j in range(16):
            with T.block("update"):
                vj = T.axis.remap("S", [j])
                C[vj] = C[vj] + A[0] * B[vj]


@T.prim_func
def f32_fma_16_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (1,), "float32", offset_factor=1)
    B = T.match_buffer(b, (16,), "float32", offset_factor=1)
    C = T.match_buffer(c, (16,), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[0:16], A[0:1], B[0:16])
        T.writes(C[0:16])
        for j in T.vectorized(16):
            C[j] = C[j] + A[0] * B[j]


TensorIntrin.register(F32_FMA_16, f32_fma_16_desc, f32_fma_16_impl, override=True)
