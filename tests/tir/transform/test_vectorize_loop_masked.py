"""VectorizeLoop(masked_loads=True), as the CPU pipeline runs it: the tiles where a
guard fails on some lanes run vector code whose guarded contiguous load is masked,
instead of the serial loop."""
import numpy as np
import pytest
from helpers.codegen_helpers import assert_interpreted_and_compiled, compile_kernels
from helpers.lowering_programs import buf, loops, prim_func
from hypothesis import given, settings, strategies as st

import mlcbench
from mlcbench import tir
from mlcbench.target import Target
from mlcbench.tir import BufferLoad, BufferStore, Call, For, ForKind, IfThenElse, Var, const
from mlcbench.tir.op import all as all_of
from mlcbench.tir.transform import VectorizeLoop

NEG_INF = const(float("-inf"))


def _apply(func, masked=True):
    return VectorizeLoop(masked_loads=masked)(mlcbench.IRModule.from_expr(func))["main"]


def _shifted_window(A, C, shift, rows, lanes, stride=1):
    """``C[i, v] = A[stride * (i * lanes + v) + shift]`` where inside ``A``, else -inf."""
    n = A.shape[0]

    def body(i, v):
        x = stride * (i * lanes + v) + shift
        return BufferStore(C, tir.if_then_else(all_of(x >= 0, x < n), A[x], NEG_INF),
                           (i * lanes + v,))
    return prim_func([A, C], loops([rows, lanes], body, kinds=["serial", "vectorized"]))


def test_border_tiles_load_under_a_mask():
    """Interior tiles keep the unmasked vector code; the border version is vector code
    whose load sits under the vector guard, not the serial loop."""
    A, C = buf("A", (30,)), buf("C", (32,))
    body = _apply(_shifted_window(A, C, -1, 4, 8)).body.body
    assert isinstance(body, IfThenElse)
    inside, border = body.then_case, body.else_case
    assert isinstance(inside, BufferStore) and isinstance(inside.value, BufferLoad)
    assert isinstance(border, BufferStore) and border.value.dtype == "float32x8"
    masked = border.value
    assert isinstance(masked, Call) and masked.op == "tir.if_then_else"
    assert masked.args[0].dtype == "boolx8"
    assert isinstance(masked.args[1], BufferLoad) and masked.args[1].dtype == "float32x8"


def test_without_masked_loads_the_border_stays_serial():
    A, C = buf("A", (30,)), buf("C", (32,))
    border = _apply(_shifted_window(A, C, -1, 4, 8), masked=False).body.body.else_case
    assert isinstance(border, For) and border.kind == ForKind.SERIAL


def test_a_stride_two_load_is_masked_and_a_stride_five_load_stays_serial():
    """The code generator masks loads of constant stride up to MASKED_LOAD_MAX_STRIDE
    (4); a larger stride keeps the serial border."""
    A, C = buf("A", (64,)), buf("C", (32,))
    border = _apply(_shifted_window(A, C, -1, 4, 8, stride=2)).body.body.else_case
    assert isinstance(border, BufferStore) and border.value.args[0].dtype == "boolx8"
    A = buf("A", (160,))
    border = _apply(_shifted_window(A, C, -1, 4, 8, stride=5)).body.body.else_case
    assert isinstance(border, For) and border.kind == ForKind.SERIAL


def test_a_lane_independent_conjunct_stays_a_scalar_condition_around_the_mask():
    A, C, flag = buf("A", (30,)), buf("C", (32,)), Var("flag", "int32")

    def body(i, v):
        x = i * 8 + v - 1
        guard = all_of(flag > 0, x >= 0, x < 30)
        return BufferStore(C, tir.if_then_else(guard, A[x], NEG_INF), (i * 8 + v,))
    func = prim_func([A, C, flag], loops([4, 8], body, kinds=["serial", "vectorized"]))
    outer = _apply(func).body.body.else_case.value
    assert outer.op == "tir.if_then_else" and outer.args[0].dtype == "bool"
    inner = outer.args[1]
    assert inner.op == "tir.if_then_else" and inner.args[0].dtype == "boolx8"


@pytest.mark.parametrize("mcpu, lanes", [("znver4", 16), ("haswell", 8)])
@pytest.mark.parametrize("stride", [1, 2])
def test_codegen_emits_masked_loads(mcpu, lanes, stride):
    """The border version of a lowered, built kernel loads with ``llvm.masked.load``:
    one for a contiguous vector, one per load of the shuffled plan for stride 2."""
    A, C = buf("A", (stride * 4 * lanes - 2,)), buf("C", (4 * lanes,))
    func = _apply(_shifted_window(A, C, -1, 4, lanes, stride))
    lib = compile_kernels(func.with_attr("global_symbol", "window"),
                          target=Target(f"llvm -mcpu={mcpu}"))
    unoptimized = lib._artifact.get_source("ll-unoptimized")
    assert unoptimized.count(f"call <{lanes} x float> @\"llvm.masked.load.v{lanes}f32.p0\"") == stride


def _numpy_window(a, shift, size, stride=1):
    x = stride * np.arange(size) + shift
    inside = (x >= 0) & (x < len(a))
    return np.where(inside, a[np.clip(x, 0, len(a) - 1)], -np.inf).astype("float32")


@settings(max_examples=40, deadline=None)
@given(shift=st.integers(-5, 5), lanes=st.sampled_from([2, 4, 7, 8, 14, 16]),
       stride=st.integers(1, 5), rows=st.integers(1, 4), short=st.integers(0, 6),
       seed=st.integers(0, 2**16))
def test_masked_border_computes_the_window(shift, lanes, stride, rows, short, seed):
    """Interpreted (which refuses a masked lane's out-of-bounds read) and compiled for
    the host, against numpy; ``A`` may end before the last tile's last lane."""
    size = rows * lanes
    n = max(1, stride * (size - 1) + 1 - short)
    A, C = buf("A", (n,)), buf("C", (size,))
    lowered = _apply(_shifted_window(A, C, shift, rows, lanes, stride))
    a = np.random.default_rng(seed).standard_normal(n).astype("float32")
    expected = _numpy_window(a, shift, size, stride)
    assert_interpreted_and_compiled(lowered, a, expected)
