"""VectorizeLoop versions a loop whose loads a lane-dependent if_then_else guards: vector
code when the guard holds on every lane, the serial loop otherwise."""
import numpy as np
from helpers.codegen_helpers import assert_interpreted_and_compiled
from helpers.lowering_programs import buf, loops, prim_func
from hypothesis import given, settings, strategies as st

import mlcbench
from mlcbench import tir
from mlcbench.tir.op import all as all_of
from mlcbench.tir import (BufferLoad, BufferStore, Call, For, ForKind, IfThenElse, Ramp, Var,
                          const)
from mlcbench.tir.transform import VectorizeLoop
from mlcbench.tir.transform.pipeline import lower

NEG_INF = const(float("-inf"))


def _apply(func, pass_=None):
    return (pass_ or VectorizeLoop())(mlcbench.IRModule.from_expr(func))["main"]


def _padded_window(A, C, stride, pad, tap, rows, lanes, row_ok=None):
    """``C[i, v] = A[stride * (i * lanes + v) + tap - pad]`` where that is inside ``A``,
    else -inf: one tap of a padded strided pooling window, lanes along the output."""
    n = A.shape[0]

    def body(i, v):
        x = stride * (i * lanes + v) + tap - pad
        guard = all_of(x >= 0, x < n) if row_ok is None else all_of(row_ok, x >= 0, x < n)
        return BufferStore(C, tir.if_then_else(guard, A[x], NEG_INF), (i * lanes + v,))
    return prim_func([A, C], loops([rows, lanes], body, kinds=["serial", "vectorized"]))


def test_guarded_load_is_versioned():
    A, C = buf("A", (64,)), buf("C", (32,))
    body = _apply(_padded_window(A, C, 2, 1, 0, 4, 8)).body.body
    assert isinstance(body, IfThenElse)
    vector, serial = body.then_case, body.else_case
    assert isinstance(vector, BufferStore) and vector.value.dtype == "float32x8"
    assert isinstance(vector.value, BufferLoad) and vector.value.indices[0].stride.value == 2
    assert isinstance(serial, For) and serial.kind == ForKind.SERIAL


def test_lane_independent_conjunct_stays_a_scalar_condition():
    A, C, flag = buf("A", (64,)), buf("C", (32,)), Var("flag", "int32")
    func = _padded_window(A, C, 2, 1, 0, 4, 8, row_ok=flag > 0)
    func = prim_func([A, C, flag], func.body)
    vector = _apply(func).body.body.then_case
    guarded = vector.value
    assert isinstance(guarded, Call) and guarded.op == "tir.if_then_else"
    assert guarded.args[0].dtype == "bool" and guarded.dtype == "float32x8"


def test_condition_known_on_every_lane_needs_no_serial_version():
    """Tap 2 of a stride-2 window padded by 1 never reads outside ``A``: the lowering
    pipeline's Simplify, which knows the loop ranges, keeps only the vector code."""
    A, C = buf("A", (64,)), buf("C", (32,))
    body = lower(_padded_window(A, C, 2, 1, 2, 4, 8))["main"].body.body
    assert isinstance(body, BufferStore) and body.value.dtype == "float32x8"


def _stays_serial(cond_of):
    A, B, C = buf("A", (32,)), buf("B", (32,), "int32"), buf("C", (32,))
    func = prim_func([A, B, C], loops([4, 8], lambda i, v: BufferStore(
        C, tir.if_then_else(cond_of(i, v, B), A[i * 8 + v], NEG_INF), (i * 8 + v,)),
        kinds=["serial", "vectorized"]))
    assert _apply(func).body.body.kind == ForKind.SERIAL


def test_not_equal_guard_stays_serial():
    """``v != 3`` is false in the middle of the lanes: the ends say nothing."""
    _stays_serial(lambda i, v, B: v != 3)


def test_guard_reading_memory_stays_serial():
    _stays_serial(lambda i, v, B: B[i * 8 + v] > 0)


def test_non_affine_guard_stays_serial():
    _stays_serial(lambda i, v, B: v * v < 20)


def test_guard_on_an_inner_loop_variable_stays_serial():
    A, C = buf("A", (64,)), buf("C", (32,))
    k = Var("k")
    func = prim_func([A, C], loops([4, 8], lambda i, v: For(k, 0, 2, ForKind.SERIAL, BufferStore(
        C, tir.if_then_else(v + k < 8, A[i * 8 + v + k], NEG_INF), (i * 8 + v,))),
        kinds=["serial", "vectorized"]))
    assert _apply(func).body.body.kind == ForKind.SERIAL


def _numpy_window(a, stride, pad, tap, size):
    x = stride * np.arange(size) + tap - pad
    inside = (x >= 0) & (x < len(a))
    return np.where(inside, a[np.clip(x, 0, len(a) - 1)], -np.inf).astype("float32")


@settings(max_examples=30, deadline=None)
@given(stride=st.integers(1, 4), pad=st.integers(0, 3), tap=st.integers(0, 4),
       lanes=st.sampled_from([2, 4, 8, 16]), rows=st.integers(1, 4), extra=st.integers(0, 3),
       seed=st.integers(0, 2**16))
def test_versioned_loop_computes_the_window(stride, pad, tap, lanes, rows, extra, seed):
    """Interpreted and compiled, against numpy; ``A`` ends where the last window ends
    (plus ``extra``), so the last vectors read up to the buffer's end."""
    size = rows * lanes
    n = max(1, stride * (size - 1) + tap - pad + 1 + extra - 2)
    A, C = buf("A", (n,)), buf("C", (size,))
    func = _padded_window(A, C, stride, pad, tap, rows, lanes)
    a = np.random.default_rng(seed).standard_normal(n).astype("float32")
    expected = _numpy_window(a, stride, pad, tap, size)
    lowered = _apply(func)
    assert_interpreted_and_compiled(lowered, a, expected)
