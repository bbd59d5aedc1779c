"""CompactBufferAllocation: intermediate buffers move to where they are used, shrunk."""
import itertools
import math

import numpy as np
from hypothesis import given, settings, strategies as st
from helpers.interp import run_lowered

from mlcbench.script import from_source
from mlcbench.tir import (Allocate, BufferStore, Evaluate, For, ForKind, IntImm, Ramp, Var,
                          post_order_visit)
from mlcbench.tir.transform import lower
from mlcbench.tir.transform.compact_buffer import _evaluate, _footprints_disjoint


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


def _loop(name, extent):
    return For(Var(name, "int32"), IntImm("int32", 0), IntImm("int32", extent), ForKind.SERIAL,
               Evaluate(IntImm("int32", 0)))


def _touched(region, loops, point):
    """The elements one iteration of ``loops`` touches in ``region``."""
    env = {loop.loop_var: value for loop, value in zip(loops, point)}
    boxes = [range(_evaluate(lo, env), _evaluate(lo, env) + int(size.value))
             for lo, size in region]
    return set(itertools.product(*boxes))


def _brute_force_disjoint(region, loops) -> bool:
    seen = set()
    for point in itertools.product(*[range(int(loop.extent.value)) for loop in loops]):
        elements = _touched(region, loops, point)
        if seen & elements:
            return False
        seen |= elements
    return True


@settings(max_examples=150, deadline=None)
@given(extents=st.lists(st.integers(1, 5), min_size=1, max_size=3), data=st.data())
def test_footprint_check_never_calls_overlapping_iterations_disjoint(extents, data):
    loops = [_loop(f"i{k}", extent) for k, extent in enumerate(extents)]
    region = []
    for _ in range(data.draw(st.integers(1, 2), label="dims")):
        lo = IntImm("int32", data.draw(st.integers(0, 3), label="offset"))
        for loop in loops:
            coefficient = data.draw(st.integers(0, 6), label="coefficient")
            if coefficient:
                lo = lo + loop.loop_var * coefficient
        if data.draw(st.booleans(), label="floordiv"):
            lo = lo // data.draw(st.integers(1, 3), label="divisor")
        region.append((lo, IntImm("int32", data.draw(st.integers(1, 4), label="size"))))
    if _footprints_disjoint(region, loops):
        assert _brute_force_disjoint(region, loops)


@settings(max_examples=40, deadline=None)
@given(extents=st.lists(st.integers(1, 6), min_size=1, max_size=3),
       sizes=st.tuples(st.integers(1, 8), st.integers(1, 8)))
def test_footprint_check_finds_the_tiles_of_a_fused_loop(extents, sizes):
    """Tile ``f`` of ``f // n`` rows and ``f % n`` columns, as a fused outer tile loop
    indexes a register tile: every iteration owns its own box."""
    n = extents[-1]
    fused = _loop("f", math.prod(extents))
    region = [((fused.loop_var // n) * sizes[0], IntImm("int32", sizes[0])),
              ((fused.loop_var % n) * sizes[1], IntImm("int32", sizes[1]))]
    assert _footprints_disjoint(region, [fused])
    assert _brute_force_disjoint(region, [fused])
    shifted = [(lo + 1, IntImm("int32", size + 1)) for (lo, _), size in zip(region, sizes)]
    assert _footprints_disjoint(shifted, [fused]) == (math.prod(extents) == 1)
