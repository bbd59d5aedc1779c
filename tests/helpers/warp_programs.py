"""Kernels with a "warp" buffer: a rotation by one lane (32 lanes, one element each)
and one by one lane of two elements in groups of 16 lanes."""
from mlcbench.script import tir as T


@T.prim_func
def warp_rotate(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            W = T.allocate([32], "float32", "warp")
            W_1 = T.Buffer((32,), data=W, scope="warp")
            W_1[tx] = A[bx * 32 + tx]
            B[bx * 32 + tx] = W_1[(tx + 1) % 32] + W_1[tx]


@T.prim_func
def warp_pairs(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    # two elements per lane, 16 lanes per group (two groups per warp along threadIdx.y)
    for ty in T.thread_binding(2, thread="threadIdx.y"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            W = T.allocate([32], "float32", "warp")
            W_1 = T.Buffer((32,), data=W, scope="warp")
            for j in range(2):
                W_1[tx * 2 + j] = A[ty * 32 + tx * 2 + j]
            for j in range(2):
                B[ty * 32 + tx * 2 + j] = W_1[(tx * 2 + 2) % 32 + j]
