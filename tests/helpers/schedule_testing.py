"""Checks every schedule primitive test runs: expected IR, trace replay, JSON round
trip, numbers against numpy, and refusals that leave the schedule unchanged."""
import json

import numpy as np
import pytest

import mlcbench
from mlcbench import tir
from mlcbench.ir import assert_structural_equal
from mlcbench.script import tir as T
from mlcbench.tir import Schedule, ScheduleError, Trace


def check_trace_roundtrip(original, sch, func_name="main"):
    """Replaying ``sch.trace`` (directly and through JSON) rebuilds ``sch.mod``."""
    replayed = Schedule(original)
    sch.trace.apply_to_schedule(replayed, remove_postproc=False)
    assert_structural_equal(replayed.mod[func_name], sch.mod[func_name])
    data = json.loads(json.dumps(sch.trace.as_json()))
    again = Schedule(original)
    Trace.from_json(data).apply_to_schedule(again)
    assert_structural_equal(again.mod[func_name], sch.mod[func_name])
    assert str(Trace.from_json(data)) == str(sch.trace)


def check_after(original, sch, expected, func_name="main"):
    assert_structural_equal(sch.mod[func_name], expected)
    check_trace_roundtrip(original, sch, func_name)


def random_args(func, seed=0):
    rng = np.random.default_rng(seed)
    arrays = []
    for _, buf in func.buffer_params():
        shape = [int(s.value) for s in buf.shape]
        arrays.append(rng.standard_normal(shape).astype(str(buf.dtype)))
    return arrays


def run(func, arrays, name="main"):
    lib = mlcbench.build(func, target="llvm")
    nd = [mlcbench.nd.array(a) for a in arrays]
    lib[name](*nd)
    return [x.numpy() for x in nd]


def check_numeric(func, reference, outputs=(-1,), name="main", rtol=1e-4):
    """Run ``func`` on random inputs; compare the output buffers with ``reference``."""
    arrays = random_args(func)
    results = run(func, [a.copy() for a in arrays], name)
    expected = reference(*arrays)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for pos, want in zip(outputs, expected):
        np.testing.assert_allclose(results[pos], want, rtol=rtol, atol=1e-5)


def check_refused(sch, action, match):
    """``action(sch)`` raises ScheduleError matching ``match``; nothing changes."""
    mod_before, trace_before = sch.mod, str(sch.trace)
    script_before = sch.mod.script()
    with pytest.raises(ScheduleError, match=match) as info:
        action(sch)
    assert sch.mod is mod_before
    assert sch.mod.script() == script_before
    assert str(sch.trace) == trace_before
    return info.value


# The course's matmul with B transposed (C = A @ B.T), blockized and tensorized in tests.
@T.prim_func
def course_matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                  C: T.Buffer((64, 64), "float32")):
    for i, j, k in T.grid(64, 64, 64):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] += A[vi, vk] * B[vj, vk]


# -- input programs shared by the primitive tests ------------------------------------
# Factories take the shape so each test keeps its own sizes; the loop, block and buffer
# names are fixed because the tests' expected programs and traces name them.

def make_matmul(rows, cols, inner):
    """``C = A @ B`` (A: rows x inner) in one reduction block "C" under loops i, j, k."""
    @T.prim_func
    def matmul(A: T.Buffer((rows, inner), "float32"), B: T.Buffer((inner, cols), "float32"),
               C: T.Buffer((rows, cols), "float32")):
        for i, j, k in T.grid(rows, cols, inner):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    return matmul


def make_mm_relu(rows, cols, inner):
    """``C = relu(A @ B)`` through an intermediate ``Y`` (blocks "Y" and "C")."""
    @T.prim_func
    def mm_relu(A: T.Buffer((rows, inner), "float32"), B: T.Buffer((inner, cols), "float32"),
                C: T.Buffer((rows, cols), "float32")):
        Y = T.alloc_buffer((rows, cols))
        for i, j, k in T.grid(rows, cols, inner):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(rows, cols):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
    return mm_relu


def make_scale_add(rows, cols):
    """``B = A * 2`` (block "B") then ``C = B + 1`` (block "C"), each in its own i, j nest."""
    @T.prim_func
    def scale_add(A: T.Buffer((rows, cols), "float32"), C: T.Buffer((rows, cols), "float32")):
        B = T.alloc_buffer((rows, cols))
        for i, j in T.grid(rows, cols):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(rows, cols):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)
    return scale_add


def make_row_sum(rows, cols):
    """``B[i] = sum_k A[i, k]`` in one reduction block "B" under loops i, k."""
    @T.prim_func
    def row_sum(A: T.Buffer((rows, cols), "float32"), B: T.Buffer((rows,), "float32")):
        for i, k in T.grid(rows, cols):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
    return row_sum


def make_row_sum_then_scale(rows, cols):
    """A row sum into ``B`` (block "B", a reduction producer), then ``C = B * 2`` (block "C")."""
    @T.prim_func
    def row_sum_then_scale(A: T.Buffer((rows, cols), "float32"), C: T.Buffer((rows,), "float32")):
        B = T.alloc_buffer((rows,))
        for i, k in T.grid(rows, cols):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        for i in range(rows):
            with T.block("C"):
                vi = T.axis.spatial(rows, i)
                C[vi] = B[vi] * T.float32(2)
    return row_sum_then_scale


def make_add_one(n):
    """``B = A + 1`` over one loop ``i`` (block "B")."""
    @T.prim_func
    def add_one(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] + T.float32(1)
    return add_one


def make_add_one_2d(rows, cols):
    """``B = A + 1`` over loops i, j (block "B")."""
    @T.prim_func
    def add_one(A: T.Buffer((rows, cols), "float32"), B: T.Buffer((rows, cols), "float32")):
        for i, j in T.grid(rows, cols):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)
    return add_one


# Producer and consumer already share the row loop; "C" reads only the even rows of B,
# so a copy of B made for one row does not cover its reader.
@T.prim_func
def reads_even_row(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i in range(16):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi // 2 * 2, vj]


# Two nests under one row loop that write the same buffer: "C" updates what "B" wrote.
@T.prim_func
def two_nests(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
    for i in range(16):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = B[vi, vj] + T.float32(1)


# The course's mm_relu (mlcbench.driver.kernels.MM_RELU) after its chapter-3 schedule:
# split j by 4, reorder(j_0, k, j_1), reverse_compute_at(C, j_0), decompose_reduction(Y, k).
@T.prim_func
def mm_relu_decomposed(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
                       C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "mm_relu", "tir.noalias": True})
    Y = T.alloc_buffer((128, 128))
    for i, j_0 in T.grid(128, 32):
        for j_1_init in range(4):
            with T.block("Y_init"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + j_1_init)
                T.reads()
                T.writes(Y[vi, vj])
                Y[vi, vj] = T.float32(0)
        for k, j_1 in T.grid(128, 4):
            with T.block("Y_update"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + j_1)
                vk = T.axis.reduce(128, k)
                T.reads(Y[vi, vj], A[vi, vk], B[vk, vj])
                T.writes(Y[vi, vj])
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                vj = T.axis.spatial(128, j_0 * 4 + ax0)
                T.reads(Y[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))
