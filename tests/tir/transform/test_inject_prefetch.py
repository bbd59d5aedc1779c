"""InjectPrefetch: a loop annotated ``pragma_prefetch_ahead`` prefetches its vector loads
that many iterations ahead, one prefetch per cache line, unrolled copies once; scalar
loads and addresses bound inside the loop are left alone; the result computes as before."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench.arith import Analyzer
from mlcbench.driver.build import build, lower
from mlcbench.ir.errors import IRError
from mlcbench.script import from_source
from mlcbench.target import Target
from mlcbench.tir import expr as E
from mlcbench.tir.functor import post_order_visit, substitute
from mlcbench.tir.op import prefetch
from mlcbench.tir.stmt import Evaluate, For
from mlcbench.tir.transform.inject_prefetch import PREFETCH_ANNOTATION


def _tile(depth=256, cols=32, ahead=4, rows=8):
    annotation = f', annotations={{"{PREFETCH_ANNOTATION}": {ahead}}}' if ahead else ""
    return from_source(f'''
@T.prim_func
def tile(A: T.Buffer(({rows}, {depth}), "float32"), B: T.Buffer(({depth}, {cols}), "float32"),
         C: T.Buffer(({rows}, {cols}), "float32")):
    T.func_attr({{"global_symbol": "tile", "tir.noalias": True}})
    C_local = T.alloc_buffer(({rows}, {cols}), scope="local")
    for i in T.unroll({rows}):
        for j in T.vectorized({cols}):
            with T.block("C_init"):
                vi, vj = T.axis.remap("SS", [i, j])
                C_local[vi, vj] = T.float32(0)
    for k in T.serial({depth}{annotation}):
        for i in T.unroll({rows}):
            for j in T.vectorized({cols}):
                with T.block("C_update"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
    for i in T.unroll({rows}):
        for j in T.vectorized({cols}):
            with T.block("C_local"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = C_local[vi, vj]
''')


def _k_loop(mod):
    loops = []
    post_order_visit(mod["tile"].body,
                     lambda n: loops.append(n) if isinstance(n, For) and n.loop_var.name == "k"
                     else None)
    assert len(loops) == 1
    return loops[0]


def _prefetches(stmt) -> list:
    calls = []
    post_order_visit(stmt, lambda n: calls.append(n) if isinstance(n, E.Call)
                     and n.op == "tir.prefetch" else None)
    return calls


def _offset_at(call, k_loop, k: int) -> int:
    """The element offset the prefetch reads at iteration ``k``."""
    offset = substitute(call.args[0].args[2], {k_loop.loop_var: E.IntImm("int32", k)})
    return int(Analyzer().simplify(offset).value)


def test_the_panel_is_prefetched_one_line_at_a_time_four_rows_ahead():
    loop = _k_loop(lower(_tile()))
    assert PREFETCH_ANNOTATION not in (loop.annotations or {})
    first = loop.body.seq[:2]
    assert all(isinstance(s, Evaluate) and s.value.op == "tir.prefetch" for s in first)
    # B's rows are 32 floats (two 64-byte lines); A's broadcasts are scalar loads.
    calls = _prefetches(loop.body)
    assert len(calls) == 2
    assert [c.args[0].args[1].name for c in calls] == ["B", "B"]
    assert [_offset_at(c, loop, 0) for c in calls] == [4 * 32, 4 * 32 + 16]
    assert [_offset_at(c, loop, 10) for c in calls] == [14 * 32, 14 * 32 + 16]
    assert [a.value for a in calls[0].args[1:]] == [0, 3, 1]


def test_without_the_annotation_nothing_is_prefetched():
    assert _prefetches(lower(_tile(ahead=0))["tile"].body) == []


def test_an_address_bound_inside_the_loop_is_left_to_the_hardware():
    mod = from_source(f'''
@T.prim_func
def tile(A: T.Buffer((64, 128), "float32"), C: T.Buffer((8, 16), "float32")):
    T.func_attr({{"global_symbol": "tile", "tir.noalias": True}})
    for k in T.serial(64, annotations={{"{PREFETCH_ANNOTATION}": 2}}):
        for i in range(8):
            for j in T.vectorized(16):
                with T.block("acc"):
                    vk, vi, vj = T.axis.remap("RSS", [k, i, j])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vk, vi * 16 + vj]
''')
    assert _prefetches(lower(mod)["tile"].body) == []


def test_a_local_buffer_is_not_prefetched():
    mod = from_source(f'''
@T.prim_func
def tile(B: T.Buffer((16, 32), "float32"), C: T.Buffer((16, 32), "float32")):
    T.func_attr({{"global_symbol": "tile", "tir.noalias": True}})
    L = T.alloc_buffer((16, 32), scope="local")
    for k, j in T.grid(16, 32):
        with T.block("fill"):
            vk, vj = T.axis.remap("SS", [k, j])
            L[vk, vj] = T.float32(1)
    for k in T.serial(16, annotations={{"{PREFETCH_ANNOTATION}": 2}}):
        for j in T.vectorized(32):
            with T.block("c"):
                vk, vj = T.axis.remap("SS", [k, j])
                C[vk, vj] = L[vk, vj] + B[vk, vj]
''')
    calls = _prefetches(lower(mod)["tile"].body)
    assert [c.args[0].args[1].name for c in calls] == ["B", "B"]


@settings(max_examples=12, deadline=None)
@given(ahead=st.integers(1, 16), cols=st.sampled_from([8, 16, 32, 64]))
def test_one_prefetch_per_line_at_the_distance_asked(ahead, cols):
    loop = _k_loop(lower(_tile(depth=64, cols=cols, ahead=ahead, rows=4)))
    calls = _prefetches(loop.body)
    assert len(calls) == max(1, cols // 16)
    assert [_offset_at(c, loop, 3) for c in calls] == \
        [(3 + ahead) * cols + line for line in range(0, cols, 16)]


def test_prefetching_past_the_end_computes_the_same():
    mod = _tile(depth=128, ahead=16)
    rng = np.random.default_rng(0)
    a = rng.random((8, 128), dtype="float32")
    b = rng.random((128, 32), dtype="float32")
    c = np.full((8, 32), np.nan, "float32")
    build(mod, target="llvm")["tile"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_cascadelake_code_issues_the_prefetches():
    asm = build(_tile(), target=Target("llvm -mcpu=cascadelake")).get_source("asm")  # not run
    assert sum("prefetcht0" in line for line in asm.splitlines()) == 2


@pytest.mark.parametrize("kwargs, message", [
    ({"rw": 2}, "rw is an integer constant from 0 to 1, found 2"),
    ({"locality": 4}, "locality is an integer constant from 0 to 3, found 4"),
    ({"cache_type": -1}, "cache_type is an integer constant from 0 to 1, found -1"),
    ({"locality": "high"}, "locality is an integer constant from 0 to 3, found 'high'"),
])
def test_prefetch_arguments_are_small_constants(kwargs, message):
    with pytest.raises(IRError, match=message):
        prefetch(E.IntImm("int64", 0), **kwargs)


def test_the_code_generator_wants_an_address_to_prefetch():
    from mlcbench.ir.errors import CodegenError
    mod = from_source('''
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    T.func_attr({"global_symbol": "f", "tir.noalias": True})
    T.evaluate(T.prefetch(T.int64(0)))
    A[0] = T.float32(1)
''')
    with pytest.raises(CodegenError, match="tir.prefetch expects an address"):
        build(mod, target="llvm")
