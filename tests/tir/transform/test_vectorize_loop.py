"""VectorizeLoop: Ramp/Broadcast vector code, and the serial fallbacks."""
import numpy as np
from hypothesis import given, settings, strategies as st
from helpers.interp import run_lowered
from helpers.lowering_programs import buf, loops, prim_func

import mlcbench
from mlcbench import tir
from mlcbench.tir import (Broadcast, BufferLoad, BufferStore, Call, Cast, For, ForKind,
                          IfThenElse, LetStmt, Ramp, Select, Var, const)
from mlcbench.tir.transform import VectorizeLoop


def _apply(func, pass_=None):
    return (pass_ or VectorizeLoop())(mlcbench.IRModule.from_expr(func))["main"]


def _vector_loop(buffers, body, n=4, lanes=8, inner_kind="vectorized"):
    return prim_func(buffers, loops([n, lanes], body, kinds=["serial", inner_kind]))


def test_contiguous_access_becomes_ramp():
    A, B, C = buf("A", (32,)), buf("B", (32,)), buf("C", (32,))
    func = _vector_loop([A, B, C], lambda i, v: BufferStore(C, A[i * 8 + v] + B[i * 8 + v],
                                                            (i * 8 + v,)))

    def vload(X, i):
        return BufferLoad(X, (Ramp(i * 8, const(1), 8),), "float32x8")
    expected = loops([4], lambda i: BufferStore(C, vload(A, i) + vload(B, i),
                                                (Ramp(i * 8, const(1), 8),)))
    mlcbench.assert_structural_equal(_apply(func), prim_func([A, B, C], expected))


def test_scalars_are_broadcast():
    A, C, s = buf("A", (32,)), buf("C", (32,)), buf("s", (1,))
    func = _vector_loop([A, C, s], lambda i, v: BufferStore(
        C, A[i * 8 + v] * s[0] + const(1.0), (i * 8 + v,)))
    store = _apply(func).body.body
    product = store.value.a
    assert isinstance(product.b, Broadcast) and product.b.value.buffer is s
    assert isinstance(store.value.b, Broadcast) and store.value.dtype == "float32x8"


def test_select_cast_call_and_max_are_lanewise():
    A, C = buf("A", (32,)), buf("C", (32,), "float64")

    def body(i, v):
        x = A[i * 8 + v]
        value = Select(x > const(0.0), tir.exp(x), tir.max(x, const(-1.0)))
        return BufferStore(C, Cast("float64", value), (i * 8 + v,))
    store = _apply(_vector_loop([A, C], body)).body.body
    assert store.value.dtype == "float64x8" and isinstance(store.value, Cast)
    select = store.value.value
    assert isinstance(select, Select) and select.condition.dtype == "boolx8"
    assert isinstance(select.true_value, Call) and select.true_value.dtype == "float32x8"
    assert select.false_value.dtype == "float32x8"


def test_bit_level_calls_are_lanewise():
    """``x * 2**k`` built from exponent bits (softmax's exp) stays one vector expression."""
    A, C = buf("A", (32,)), buf("C", (32,))

    def body(i, v):
        bits = Call("int32", "tir.reinterpret", (A[i * 8 + v],))
        shifted = Call("int32", "tir.shift_left", (bits, const(1, "int32")))
        return BufferStore(C, Call("float32", "tir.reinterpret", (shifted,)), (i * 8 + v,))
    store = _apply(_vector_loop([A, C], body)).body.body
    assert isinstance(store, BufferStore) and store.value.dtype == "float32x8"
    assert store.value.args[0].dtype == "int32x8"
    assert store.value.args[0].args[0].dtype == "int32x8"


def test_floordiv_within_one_block_is_a_broadcast():
    A, C = buf("A", (4,)), buf("C", (32,))
    func = _vector_loop([A, C], lambda i, v: BufferStore(C, A[(i * 8 + v) // 8],
                                                         (i * 8 + v,)))
    value = _apply(func).body.body.value
    assert isinstance(value, Broadcast) and isinstance(value.value, BufferLoad)


def test_vector_let_gets_a_vector_variable():
    A, C = buf("A", (32,)), buf("C", (32,))
    x = Var("x", "float32")
    func = _vector_loop([A, C], lambda i, v: LetStmt(
        x, A[i * 8 + v] * const(2.0), BufferStore(C, x + x, (i * 8 + v,))))
    let = _apply(func).body.body
    assert isinstance(let, LetStmt) and let.var.dtype == "float32x8"
    assert let.body.value.a is let.var


def test_inner_loop_is_kept_and_its_body_vectorized():
    A, C = buf("A", (64,)), buf("C", (8,))
    func = prim_func([A, C], loops([8, 8], lambda v, k: BufferStore(
        C, C[v] + A[v * 8 + k], (v,)), kinds=["vectorized", "serial"]))
    inner = _apply(func).body
    assert isinstance(inner, For) and inner.kind == ForKind.SERIAL
    load = inner.body.value.b
    assert isinstance(load.indices[0], Ramp) and load.indices[0].stride.value == 8


def _falls_back(func):
    after = _apply(func)
    kinds = []
    tir.functor.post_order_visit(after, lambda n: kinds.append(n.kind)
                                 if isinstance(n, For) else None)
    assert ForKind.VECTORIZED not in kinds and kinds.count(ForKind.SERIAL) == 2
    return after


def test_reduction_across_lanes_stays_serial():
    A, S = buf("A", (32,)), buf("S", (1,))
    _falls_back(_vector_loop([A, S], lambda i, v: BufferStore(S, S[0] + A[i * 8 + v], (0,))))


def test_lane_dependent_if_stays_serial():
    A, C = buf("A", (32,)), buf("C", (32,))
    _falls_back(_vector_loop([A, C], lambda i, v: IfThenElse(
        v < 3, BufferStore(C, A[i * 8 + v], (i * 8 + v,)))))


def test_gather_index_stays_serial():
    A, C = buf("A", (64,)), buf("C", (32,))
    _falls_back(_vector_loop([A, C], lambda i, v: BufferStore(C, A[v * v], (i * 8 + v,))))


def test_symbolic_extent_stays_serial():
    A, n = buf("A", (32,)), Var("n")
    func = prim_func([A, n], For(Var("v"), 0, n, ForKind.VECTORIZED,
                                 BufferStore(A, const(0.0), (0,))))
    assert _apply(func).body.kind == ForKind.SERIAL


def test_disabled_vectorization_makes_loops_serial():
    A, C = buf("A", (32,)), buf("C", (32,))
    func = _vector_loop([A, C], lambda i, v: BufferStore(C, A[i * 8 + v], (i * 8 + v,)))
    assert _apply(func, VectorizeLoop(enable_vectorize=False)).body.body.kind == ForKind.SERIAL


def test_no_vectorized_loop_returns_same_function():
    A, C = buf("A", (32,)), buf("C", (32,))
    func = _vector_loop([A, C], lambda i, v: BufferStore(C, A[i * 8 + v], (i * 8 + v,)),
                        inner_kind="serial")
    assert _apply(func) is func


_BODIES = {
    "affine": lambda A, C, i, v, L: BufferStore(C, A[i * L + v] * const(3.0), (i * L + v,)),
    "reversed": lambda A, C, i, v, L: BufferStore(C, A[(L - 1 - v) + i * L], (i * L + v,)),
    "strided": lambda A, C, i, v, L: BufferStore(C, A[v * 2], (i * L + v,)),
    "select": lambda A, C, i, v, L: BufferStore(C, Select(
        A[i * L + v] > const(0.0), A[i * L + v], -A[i * L + v]), (i * L + v,)),
    "if_then_else": lambda A, C, i, v, L: BufferStore(C, tir.if_then_else(
        v < 2, const(1.0), tir.exp(A[i * L + v] * const(0.1))), (i * L + v,)),
    "mod": lambda A, C, i, v, L: BufferStore(C, A[(i * L + v) % 3], (i * L + v,)),
}
# A gather (unless lanes == 3); a guarded load whose guard ``v < 2`` fails on some lane
# (unless lanes == 2): the versioned loop keeps only its serial version.
_STAYS_SERIAL = {"if_then_else": 2, "mod": 3}


@settings(max_examples=25, deadline=None)
@given(lanes=st.integers(2, 24), kind=st.sampled_from(sorted(_BODIES)),
       seed=st.integers(0, 2**16))
def test_vector_code_computes_what_the_serial_loop_computes(lanes, kind, seed):
    A, C = buf("A", (3 * lanes,)), buf("C", (3 * lanes,))
    func = prim_func([A, C], loops([3, lanes], lambda i, v: _BODIES[kind](A, C, i, v, lanes),
                                   kinds=["serial", "vectorized"]))
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(3 * lanes).astype("float32")
    results = []
    for pass_ in (VectorizeLoop(), VectorizeLoop(enable_vectorize=False)):
        out = np.zeros(3 * lanes, "float32")
        lowered = _apply(func, pass_)
        run_lowered(lowered, data.copy(), out)
        results.append(out)
    vectorized = not isinstance(_apply(func).body.body, For)
    assert vectorized == (kind not in _STAYS_SERIAL or lanes == _STAYS_SERIAL[kind])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)
