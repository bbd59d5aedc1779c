"""A softmax row kernel: one block per row, the row's maximum and sum reduced through
shared memory by a tree of halving strides, exp in the kernel. It puts together what
a first kernel after the course needs: a tail guard (rows of 300 over 128 threads),
barriers that lowering inserts between the tree's steps, math calls, and the same
result on the simulated GPU, in the CUDA text and in PTX without library calls."""
import re
import warnings

import numpy as np

import mlcbench as tvm
from mlcbench.ir import IRModule
from mlcbench.script import tir as T

ROWS, N, TX = 4, 300, 128


@T.prim_func
def softmax(A: T.Buffer((ROWS, N), "float32"), B: T.Buffer((ROWS, N), "float32")):
    for row in T.thread_binding(ROWS, thread="blockIdx.x"):
        for tx in T.thread_binding(TX, thread="threadIdx.x"):
            rmax = T.allocate([TX], "float32", "shared")
            rmax_1 = T.decl_buffer((TX,), "float32", data=rmax, scope="shared")
            rsum = T.allocate([TX], "float32", "shared")
            rsum_1 = T.decl_buffer((TX,), "float32", data=rsum, scope="shared")
            rmax_1[tx] = T.float32(-3.4e38)
            for j in range(3):
                if j * TX + tx < N:
                    rmax_1[tx] = T.max(rmax_1[tx], A[row, j * TX + tx])
            for s in range(7):
                if tx < T.shift_right(64, s):
                    rmax_1[tx] = T.max(rmax_1[tx], rmax_1[tx + T.shift_right(64, s)])
            rsum_1[tx] = T.float32(0)
            for j in range(3):
                if j * TX + tx < N:
                    rsum_1[tx] = rsum_1[tx] + T.exp(A[row, j * TX + tx] - rmax_1[0])
            for s in range(7):
                if tx < T.shift_right(64, s):
                    rsum_1[tx] = rsum_1[tx] + rsum_1[tx + T.shift_right(64, s)]
            for j in range(3):
                if j * TX + tx < N:
                    B[row, j * TX + tx] = T.exp(A[row, j * TX + tx] - rmax_1[0]) / rsum_1[0]


def _reference(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_softmax_rows_on_the_simulated_gpu_match_numpy():
    rt_mod = tvm.build(IRModule({"main": softmax}), target="cuda")
    dev = tvm.cuda(0)
    # Large logits: without the maximum, exp overflows float32.
    a = (np.random.default_rng(0).standard_normal((ROWS, N)) * 30).astype("float32")
    b = tvm.nd.empty((ROWS, N), "float32", dev)
    with warnings.catch_warnings():
        # Sampled iterations divide by sums not yet formed: no warning may reach the user.
        warnings.simplefilter("error", RuntimeWarning)
        rt_mod["main"](tvm.nd.array(a, dev), b)
    np.testing.assert_allclose(b.numpy(), _reference(a), rtol=2e-5, atol=1e-7)


def test_softmax_cuda_text_and_ptx():
    rt_mod = tvm.build(IRModule({"main": softmax}), target="cuda")
    cuda = rt_mod.imported_modules[0].get_source()
    assert "__shared__ float rmax[128];" in cuda and "__launch_bounds__(128)" in cuda
    assert "expf(" in cuda and "fmaxf(" in cuda
    # A barrier after every step of each tree, outside the thread-dependent `if`.
    tree = re.search(r"for \(int s = 0; s < 7; \+\+s\) \{(.*?)\n  \}", cuda, re.S).group(1)
    assert tree.rstrip().endswith("__syncthreads();")
    ptx = rt_mod.imported_modules[0].get_source("ptx")
    assert "bar.sync" in ptx and "ld.shared" in ptx and "st.shared" in ptx
    assert not re.search(r"\bcall(\.uni)?\b", ptx)
