"""Printing TIR statements on their own: loops, control flow, bindings, allocations."""
import textwrap

import pytest

import mlcbench.script  # noqa: F401  (registers the printer)
from mlcbench import tir
from mlcbench.tir import expr as E
from mlcbench.tir.stmt import (Allocate, AssertStmt, DeclBuffer, Evaluate, For, ForKind,
                               IfThenElse, IterType, IterVar, LetStmt, seq)

i, j, k, n = E.Var("i"), E.Var("j"), E.Var("k"), E.Var("n")
A = tir.decl_buffer((128,), "float32", "A")
ZERO = tir.BufferStore(A, 0.0, (i,))


def expect(stmt, text):
    assert str(stmt) == textwrap.dedent(text).strip("\n")


def loop(var, extent, body, kind=ForKind.SERIAL, start=0, **kwargs):
    return For(var, start, extent, kind, body, **kwargs)


def test_store_and_evaluate():
    expect(tir.BufferStore(A, A[i] + 1.0, (i,)), "A[i] = A[i] + T.float32(1)")
    expect(Evaluate(tir.const(0)), "T.evaluate(0)")
    expect(Evaluate(tir.call_extern("int32", "f", i)), 'T.call_extern("int32", "f", i)')


def test_nested_serial_loops_fold_into_grid():
    expect(loop(i, 128, loop(j, 64, loop(k, 32, ZERO))), """
        for i, j, k in T.grid(128, 64, 32):
            A[i] = T.float32(0)
    """)


def test_grid_stops_at_a_loop_that_is_not_plain():
    body = loop(i, 8, loop(j, 4, loop(k, 2, ZERO), kind=ForKind.PARALLEL))
    expect(body, """
        for i in range(8):
            for j in T.parallel(4):
                for k in range(2):
                    A[i] = T.float32(0)
    """)
    expect(loop(i, 8, seq(loop(j, 4, ZERO), loop(k, 4, ZERO))), """
        for i in range(8):
            for j in range(4):
                A[i] = T.float32(0)
            for k in range(4):
                A[i] = T.float32(0)
    """)
    expect(loop(i, 8, loop(j, i + 1, ZERO)), """
        for i in range(8):
            for j in range(i + 1):
                A[i] = T.float32(0)
    """)


@pytest.mark.parametrize("kind, start, extras, header", [
    (ForKind.SERIAL, 2, {}, "for i in range(2, 10):"),
    (ForKind.PARALLEL, 0, {}, "for i in T.parallel(8):"),
    (ForKind.VECTORIZED, 0, {}, "for i in T.vectorized(8):"),
    (ForKind.UNROLLED, 0, {}, "for i in T.unroll(8):"),
    (ForKind.SERIAL, 0, {"annotations": {"pragma_unroll": 16}},
     'for i in T.serial(8, annotations={"pragma_unroll": 16}):'),
    (ForKind.THREAD_BINDING, 0,
     {"thread_binding": IterVar(E.Range(0, 8), E.Var("t"), IterType.THREAD_INDEX, "threadIdx.x")},
     'for i in T.thread_binding(8, thread="threadIdx.x"):'),
])
def test_loop_kinds(kind, start, extras, header):
    stmt = For(i, start, 8, kind, ZERO, **extras)
    expect(stmt, f"{header}\n    A[i] = T.float32(0)")


def test_int64_loop():
    i64 = E.Var("i", "int64")
    B = tir.decl_buffer((tir.const(128, "int64"),), "int64", "B")
    expect(For(i64, 0, 128, ForKind.SERIAL, tir.BufferStore(B, i64, (i64,))), """
        for i in range(T.int64(128)):
            B[i] = i
    """)


def test_if_then_else():
    expect(IfThenElse(i < 4, ZERO, Evaluate(i)), """
        if i < 4:
            A[i] = T.float32(0)
        else:
            T.evaluate(i)
    """)
    expect(IfThenElse((i < 4) & (j < 4), ZERO), """
        if i < 4 and j < 4:
            A[i] = T.float32(0)
    """)


def test_let_stmt_is_concise_only_as_the_last_statement():
    store = tir.BufferStore(A, 0.0, (n,))
    expect(LetStmt(n, i * 4, store), """
        n: T.int32 = i * 4
        A[n] = T.float32(0)
    """)
    expect(seq(LetStmt(n, i * 4, store), ZERO), """
        with T.LetStmt(i * 4) as n:
            A[n] = T.float32(0)
        A[i] = T.float32(0)
    """)


def test_assert():
    expect(AssertStmt(i < 128, "i is out of range", ZERO), """
        assert i < 128, "i is out of range"
        A[i] = T.float32(0)
    """)
    expect(seq(AssertStmt(i < 128, "bad", ZERO), ZERO), """
        with T.Assert(i < 128, "bad"):
            A[i] = T.float32(0)
        A[i] = T.float32(0)
    """)


def test_allocate_declares_a_view_of_its_memory_before_first_use():
    C = tir.decl_buffer((128,), "float32", "C")
    stmt = Allocate(C, loop(i, 128, tir.BufferStore(C, A[i], (i,))))
    expect(stmt, """
        C = T.allocate([128], "float32", "global")
        C_1 = T.Buffer((128,), data=C)
        for i in range(128):
            C_1[i] = A[i]
    """)
    local = tir.decl_buffer((4,), "int32", "L", scope="local")
    expect(seq(Allocate(local, Evaluate(0)), ZERO), """
        with T.allocate([4], "int32", "local") as L:
            T.evaluate(0)
        A[i] = T.float32(0)
    """)


def test_vector_store_prints_ramp_indices_as_slices():
    C = tir.decl_buffer((128,), "float32", "C")
    ramp = E.Ramp(i * 4, tir.const(1), 4)
    value = E.BufferLoad(A, (ramp,)) + E.Broadcast(tir.const(1.0), 4)
    expect(Allocate(C, loop(i, 32, tir.BufferStore(C, value, (ramp,)))), """
        C = T.allocate([128], "float32", "global")
        C_1 = T.Buffer((128,), data=C)
        for i in range(32):
            C_1[i * 4:i * 4 + 4] = A[i * 4:i * 4 + 4] + T.Broadcast(T.float32(1), 4)
    """)
    strided = E.BufferLoad(A, (E.Ramp(i, tir.const(2), 4),))
    assert str(strided) == "A[i:i + 8:2]"


def test_decl_buffer_views_existing_memory():
    flat = tir.decl_buffer((16384,), "float32", "A_flat", data=A.data)
    body = seq(ZERO, DeclBuffer(flat, tir.BufferStore(flat, 0.0, (i,))))
    expect(body, """
        A[i] = T.float32(0)
        A_flat = T.decl_buffer((16384,), data=A.data)
        A_flat[i] = T.float32(0)
    """)


def test_other_tir_objects_print_as_script_calls():
    from mlcbench.tir.stmt import IterType, IterVar
    shared = tir.decl_buffer((n, 4), "int8", "S", scope="shared")
    assert shared.script() == 'T.Buffer((n, 4), "int8", scope="shared")'
    assert str(E.Range(2, 8)) == "T.Range(2, 10)"
    reduce_var = IterVar(E.Range(0, 8), E.Var("vk"), IterType.COMM_REDUCE)
    assert str(reduce_var) == 'T.iter_var(vk, T.Range(0, 8), "CommReduce", "")'
    tile = tir.decl_buffer((4,), "float32", "tile")
    match = tir.MatchBufferRegion(tile, tir.BufferRegion(A, (E.Range(i * 4, 4),)))
    assert str(match) == "tile = T.match_buffer(A[i * 4:i * 4 + 4], (4,))"
