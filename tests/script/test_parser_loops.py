"""Loops: range, T.serial/parallel/vectorized/unroll/thread_binding, T.grid, int64."""
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench.ir import assert_structural_equal
from mlcbench.script import from_source
from mlcbench.script import tir as T
from mlcbench.tir import BufferStore, For, ForKind, IterType, PrimFunc, Var, decl_buffer


def _store_loop(kind, min_value, extent, **extra):
    a = Var("a", "handle")
    A = decl_buffer((128,), "float32", name="A")
    i = Var("i", getattr(extent, "dtype", "int32"))
    body = For(i, min_value, extent, kind, BufferStore(A, 0.0, (i,)), **extra)
    return PrimFunc((a,), body, {a: A})


@pytest.mark.parametrize("loop, kind", [("range(128)", ForKind.SERIAL),
                                        ("T.serial(128)", ForKind.SERIAL),
                                        ("T.parallel(128)", ForKind.PARALLEL),
                                        ("T.vectorized(128)", ForKind.VECTORIZED),
                                        ("T.unroll(128)", ForKind.UNROLLED),
                                        ("T.grid(128)", ForKind.SERIAL)])
def test_loop_kinds(loop, kind):
    func = from_source(f"""
@T.prim_func
def f(A: T.Buffer((128,), "float32")):
    for i in {loop}:
        A[i] = T.float32(0)
""")
    assert_structural_equal(func, _store_loop(kind, 0, 128))


def test_loop_with_start_and_stop():
    @T.prim_func
    def f(A: T.Buffer((128,), "float32")):
        for i in range(2, 10):
            A[i] = T.float32(0)

    @T.prim_func
    def g(A: T.Buffer((128,), "float32")):
        for i in T.parallel(2, 10):
            A[i] = T.float32(0)

    assert_structural_equal(f, _store_loop(ForKind.SERIAL, 2, 8))
    assert_structural_equal(g, _store_loop(ForKind.PARALLEL, 2, 8))


def test_symbolic_range_start_stop_gives_plain_extent():
    func = from_source("""
@T.prim_func
def f(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n * 4 + 4,))
    for i in range(n * 4, n * 4 + 4):
        A[i] = T.float32(0)
""")
    assert int(func.body.extent) == 4
    assert func.body.loop_var.dtype == "int32"


def test_loop_annotations_and_thread_binding():
    @T.prim_func
    def f(A: T.Buffer((128,), "float32")):
        for i in T.serial(0, 128, annotations={"pragma_unroll": 4}):
            A[i] = T.float32(0)
        for tx in T.thread_binding(0, 128, thread="threadIdx.x"):
            A[tx] = T.float32(1)

    first, second = f.body.seq
    assert first.annotations == {"pragma_unroll": 4}
    assert second.kind == ForKind.THREAD_BINDING
    binding = second.thread_binding
    assert binding.thread_tag == "threadIdx.x" and binding.iter_type == IterType.THREAD_INDEX
    assert int(binding.dom.extent) == 128


def test_grid_makes_nested_serial_loops():
    @T.prim_func
    def f(A: T.Buffer((4, 8, 16), "float32")):
        for i, j, k in T.grid(4, 8, 16):
            A[i, j, k] = T.float32(0)

    loops = [f.body, f.body.body, f.body.body.body]
    assert [int(loop.extent) for loop in loops] == [4, 8, 16]
    assert all(loop.kind == ForKind.SERIAL and int(loop.min) == 0 for loop in loops)
    assert isinstance(loops[-1].body, BufferStore)
    assert [v.name for v in loops[-1].body.indices] == ["i", "j", "k"]


def test_int64_extents_give_int64_loop_vars():
    @T.prim_func
    def f(A: T.Buffer((T.int64(4), T.int64(4)), "float32")):
        for i, j in T.grid(T.int64(4), T.int64(4)):
            A[i, j] = T.float32(0)
        for k in range(T.int64(2), T.int64(4)):
            A[k, k] = T.float32(1)

    nest, single = f.body.seq
    assert nest.loop_var.dtype == "int64" and nest.body.loop_var.dtype == "int64"
    assert nest.min.dtype == "int64" and nest.extent.dtype == "int64"
    assert single.loop_var.dtype == "int64" and int(single.extent) == 2


def test_loop_var_count_mismatch_is_an_error():
    from mlcbench.ir import ParseError
    with pytest.raises(ParseError, match="expected 2 loop variable"):
        from_source("""
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in T.grid(4, 4):
        A[i] = T.float32(0)
""")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 64), min_size=1, max_size=4))
def test_grid_extents_roundtrip(extents):
    names = [f"i{k}" for k in range(len(extents))]
    shape = ", ".join(map(str, extents))
    func = from_source(f"""
@T.prim_func
def f(A: T.Buffer(({shape},), "float32")):
    for {", ".join(names)} in T.grid({shape}):
        A[{", ".join(names)}] = T.float32(1)
""")
    loop, found = func.body, []
    while isinstance(loop, For):
        found.append(int(loop.extent))
        loop = loop.body
    assert found == extents
