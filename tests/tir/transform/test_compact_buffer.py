"""CompactBufferAllocation: intermediate buffers move to where they are used, shrunk."""
import numpy as np
from hypothesis import given, settings, strategies as st
from interp import run_lowered

from mlcbench.script import from_source
from mlcbench.tir import Allocate, BufferStore, For, ForKind, Ramp, post_order_visit
from mlcbench.tir.transform import lower


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


CARRIED_PARTIAL_SUM = '''
@T.prim_func
def main(A: T.Buffer((8, 12), "float32"), B: T.Buffer((12, 16), "float32"),
         C: T.Buffer((8, 16), "float32")):
    Y = T.alloc_buffer((8, 16))
    for k in range(12):
        for i, j in T.grid(8, 16):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(8, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
'''


def _allocations(func):
    """[(allocated buffer, enclosing loop kinds outermost first)]."""
    found = []

    def walk(stmt, kinds):
        if isinstance(stmt, Allocate):
            found.append((stmt.buffer, kinds))
        if isinstance(stmt, For):
            kinds = kinds + (stmt.kind,)
        for name in ("body", "then_case", "else_case"):
            child = getattr(stmt, name, None)
            if child is not None:
                walk(child, kinds)
        for child in getattr(stmt, "seq", ()):
            walk(child, kinds)
    walk(func.body, ())
    return found


def _lowered(source):
    return next(iter(lower(from_source(source)).functions.values()))


def test_register_tile_moves_into_parallel_loop_at_tile_size():
    func = _lowered(register_tile_matmul(64, 8, 32))
    [(buffer, kinds)] = _allocations(func)
    assert [int(s.value) for s in buffer.shape] == [8 * 32]
    assert kinds == (ForKind.PARALLEL,)


def test_accumulator_update_is_vectorized_with_constant_indices():
    func = _lowered(register_tile_matmul(64, 8, 32))
    stores = []
    post_order_visit(func.body, lambda n: stores.append(n) if isinstance(n, BufferStore)
                     and n.buffer.scope == "local" else None)
    assert len(stores) == 16                      # 8 init rows + 8 update rows, unrolled
    for store in stores:
        [index] = store.indices
        assert isinstance(index, Ramp) and index.lanes == 32
        assert isinstance(index.base.value, int)  # a constant row offset after unrolling


@settings(max_examples=6, deadline=None)
@given(rows=st.sampled_from([1, 2, 4, 8]), cols=st.sampled_from([4, 8, 16]), seed=st.integers(0, 9))
def test_register_tile_matches_numpy(rows, cols, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((16, 16), "float32"), rng.standard_normal((16, 16), "float32")
    c = np.zeros((16, 16), "float32")
    run_lowered(_lowered(register_tile_matmul(16, rows, cols)), a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_value_carried_across_iterations_keeps_its_allocation_outside():
    func = _lowered(CARRIED_PARTIAL_SUM)
    [(buffer, kinds)] = _allocations(func)
    assert kinds == ()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((8, 12), "float32"), rng.standard_normal((12, 16), "float32")
    c = np.zeros((8, 16), "float32")
    run_lowered(func, a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)
