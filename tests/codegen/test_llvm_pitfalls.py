"""Programs that once made LLVM's optimizer produce wrong code, checked against numpy."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench.script import from_source
from mlcbench.target import Target


def _fused_reduction(m, n, k):
    # A reduction loop around a fused spatial loop, with the init under `if k == 0`:
    # the vectorizer used to interleave this loop and read B[k, f % n] as B[k, f].
    return from_source(f'''
@T.prim_func
def main(A: T.Buffer(({m}, {k}), "float32"), B: T.Buffer(({k}, {n}), "float32"),
         C: T.Buffer(({m}, {n}), "float32")):
    for r, f in T.grid({k}, {m * n}):
        if r == 0:
            C[f // {n}, f % {n}] = T.float32(0)
        C[f // {n}, f % {n}] = C[f // {n}, f % {n}] + A[f // {n}, r] * B[r, f % {n}]
''')


@pytest.mark.parametrize("m, n, k", [(8, 16, 12), (16, 8, 12), (4, 32, 3), (64, 2, 3)])
def test_fused_spatial_loop_under_reduction_loop(m, n, k):
    lib = tvm.build(_fused_reduction(m, n, k))
    rng = np.random.default_rng(0)
    a, b = rng.random((m, k), dtype="float32"), rng.random((k, n), dtype="float32")
    c = np.zeros((m, n), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


_SPLIT_FUSED_REDUCTION = '''
@T.prim_func
def main(A: T.Buffer((8, 12), "float32"), B: T.Buffer((12, 16), "float32"),
         C: T.Buffer((8, 16), "float32")):
    Y = T.alloc_buffer((128,))
    for k, f0, f1 in T.grid(12, 32, 4):
        if k == 0:
            Y[f0 * 4 + f1] = T.float32(0)
        Y[f0 * 4 + f1] = Y[f0 * 4 + f1] + A[f0 // 4, k] * B[k, f0 % 4 * 4 + f1]
    for i, j in T.grid(8, 16):
        C[i, j] = T.max(Y[i * 16 + j], T.float32(0))
'''


@pytest.mark.xfail(Target("llvm").vector_width_bits == 512, strict=True,
                   reason="On AVX-512, LLVM 22's loop vectorizer and unroller, together, "
                   "miscompile an init under `if k == 0` inside a split fused spatial loop "
                   "(either one alone is correct); schedules that decompose_reduction, as "
                   "the default schedules and the tuner do, never produce this shape")
def test_split_fused_spatial_loop_under_reduction_loop():
    lib = tvm.build(from_source(_SPLIT_FUSED_REDUCTION))
    rng = np.random.default_rng(0)
    a, b = rng.random((8, 12), dtype="float32"), rng.random((12, 16), dtype="float32")
    c = np.zeros((8, 16), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5)
