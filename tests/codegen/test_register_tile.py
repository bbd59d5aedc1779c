"""A scheduled register tile compiles to accumulators in registers, not memory."""
import numpy as np

from mlcbench.driver.build import build
from mlcbench.script import from_source

def register_tile_matmul(n: int, rows: int, cols: int) -> str:
    """What cache_write + reverse_compute_at + decompose_reduction print: a root-level
    full-size local accumulator, indexed by global coordinates inside a fused tile loop."""
    tiles_j = n // cols
    return f'''
@T.prim_func
def matmul(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    C_local = T.alloc_buffer(({n}, {n}), scope="local")
    for f in T.parallel({n // rows * tiles_j}):
        for ii in T.unroll({rows}):
            for jj in T.vectorized({cols}):
                with T.block("C_init"):
                    vi = T.axis.spatial({n}, f // {tiles_j} * {rows} + ii)
                    vj = T.axis.spatial({n}, f % {tiles_j} * {cols} + jj)
                    C_local[vi, vj] = T.float32(0)
        for k in range({n}):
            for ii in T.unroll({rows}):
                for jj in T.vectorized({cols}):
                    with T.block("C_update"):
                        vi = T.axis.spatial({n}, f // {tiles_j} * {rows} + ii)
                        vj = T.axis.spatial({n}, f % {tiles_j} * {cols} + jj)
                        vk = T.axis.reduce({n}, k)
                        C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
        for ii in range({rows}):
            for jj in T.vectorized({cols}):
                with T.block("C_local"):
                    vi = T.axis.spatial({n}, f // {tiles_j} * {rows} + ii)
                    vj = T.axis.spatial({n}, f % {tiles_j} * {cols} + jj)
                    C[vi, vj] = C_local[vi, vj]
'''


def _tile_body_ir(ir: str) -> str:
    start = ir.index("define internal fastcc void @") if "fastcc" in ir else ir.index("_body(")
    return ir[start:ir.index("\n}", start)]


def test_accumulators_live_in_vector_registers():
    lib = build(from_source(register_tile_matmul(64, 4, 16)))
    body = _tile_body_ir(lib.get_source("ll"))
    assert "alloca" not in body and "malloc" not in body and "aligned_alloc" not in body
    assert body.count("phi <16 x float>") >= 4          # one loop-carried vector per row
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 64), "float32"), rng.standard_normal((64, 64), "float32")
    c = np.zeros((64, 64), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
