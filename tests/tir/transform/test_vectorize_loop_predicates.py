"""VectorizeLoop versions a loop whose statements a lane-dependent ``if`` (a split's tail
predicate) guards: vector code for the tiles where it holds on every lane, the serial
loop for the tail."""
import numpy as np
from helpers.codegen_helpers import compile_kernels
from helpers.interp import run_lowered
from helpers.lowering_programs import buf, loops, prim_func
from hypothesis import given, settings, strategies as st

import mlcbench
from mlcbench.tir import BufferStore, For, ForKind, IfThenElse, Var, const
from mlcbench.tir.op import all as all_of
from mlcbench.tir.transform import VectorizeLoop


def _apply(func):
    return VectorizeLoop()(mlcbench.IRModule.from_expr(func))["main"]


def _tail(A, C, n, tiles, lanes, extra=None):
    """``if i * lanes + v < n (and extra): C[i * lanes + v] = A[i * lanes + v] + 1``."""
    def body(i, v):
        x = i * lanes + v
        cond = x < n if extra is None else all_of(extra, x < n)
        return IfThenElse(cond, BufferStore(C, A[x] + const(1.0), (x,)), None)
    return prim_func([A, C], loops([tiles, lanes], body, kinds=["serial", "vectorized"]))


def test_tail_predicate_is_versioned():
    A, C = buf("A", (113,)), buf("C", (113,))
    body = _apply(_tail(A, C, 113, 15, 8)).body.body
    assert isinstance(body, IfThenElse)
    vector, serial = body.then_case, body.else_case
    assert isinstance(vector, BufferStore) and vector.value.dtype == "float32x8"
    assert isinstance(serial, For) and serial.kind == ForKind.SERIAL


def test_lane_independent_conjunct_stays_an_if_around_the_vector_code():
    A, C, flag = buf("A", (113,)), buf("C", (113,)), Var("flag", "int32")
    func = _tail(A, C, 113, 15, 8, extra=flag > 0)
    vector = _apply(prim_func([A, C, flag], func.body)).body.body.then_case
    assert isinstance(vector, IfThenElse) and vector.condition.dtype == "bool"
    assert vector.then_case.value.dtype == "float32x8"


def test_if_with_an_else_stays_serial():
    A, C = buf("A", (16,)), buf("C", (16,))
    func = prim_func([A, C], loops([2, 8], lambda i, v: IfThenElse(
        v < 3, BufferStore(C, A[i * 8 + v], (i * 8 + v,)),
        BufferStore(C, const(0.0), (i * 8 + v,))), kinds=["serial", "vectorized"]))
    assert _apply(func).body.body.kind == ForKind.SERIAL


def test_predicate_on_an_inner_loop_variable_stays_serial():
    A, C = buf("A", (32,)), buf("C", (32,))
    k = Var("k")
    func = prim_func([A, C], loops([2, 8], lambda i, v: For(k, 0, 2, ForKind.SERIAL, IfThenElse(
        v + k < 8, BufferStore(C, A[i * 8 + v + k], (i * 8 + v,)), None)),
        kinds=["serial", "vectorized"]))
    assert _apply(func).body.body.kind == ForKind.SERIAL


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 70), lanes=st.sampled_from([2, 4, 8, 16]), seed=st.integers(0, 99))
def test_versioned_tail_computes_every_element(n, lanes, seed):
    """Interpreted and compiled, against numpy; ``A`` and ``C`` end at ``n``, so the
    vector code must never touch the tail."""
    tiles = -(-n // lanes)
    A, C = buf("A", (n,)), buf("C", (n,))
    lowered = _apply(_tail(A, C, n, tiles, lanes))
    a = np.random.default_rng(seed).standard_normal(n).astype("float32")
    out = np.zeros(n, "float32")
    run_lowered(lowered, a.copy(), out)
    np.testing.assert_array_equal(out, a + 1)
    out = np.zeros(n, "float32")
    compile_kernels(lowered.with_attr("global_symbol", "tail"))["tail"](a, out)
    np.testing.assert_array_equal(out, a + 1)
