"""Workloads, the course's stochastic schedule shared by the tuning tests."""
from __future__ import annotations

from mlcbench import IRModule, te
from mlcbench.script import tir as T


def matmul_module(n: int = 128, m: int | None = None, k: int | None = None) -> IRModule:
    """C = A @ B with float32 (n, k) x (k, m) inputs, a single block "C" in "main"."""
    m, k = m or n, k or n
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="r")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return IRModule({"main": te.create_prim_func([A, B, C])})


def stochastic_schedule_mm(sch):
    """The course's stochastic matmul schedule: sampled tiles, split, reorder, decompose."""
    block = sch.get_block("C", func_name="main")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=sch.sample_perfect_tile(i, n=2))
    j0, j1 = sch.split(j, factors=sch.sample_perfect_tile(j, n=2))
    k0, k1 = sch.split(k, factors=sch.sample_perfect_tile(k, n=2))
    sch.reorder(i0, j0, k0, i1, k1, j1)
    sch.decompose_reduction(block, k0)
    return sch


# -- candidates that misbehave -------------------------------------------------------------
@T.prim_func
def segfaulting_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    # far outside the 16 bytes of A: an unmapped address
    A[T.int64(1099511627776)] = T.float32(1)


@T.prim_func
def aborting_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    T.evaluate(T.call_extern("int32", "abort"))


@T.prim_func
def hanging_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    T.evaluate(T.call_extern("int32", "sleep", 1000))


@T.prim_func
def unlinkable_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    T.evaluate(T.call_extern("int32", "no_such_function_anywhere", 1))


@T.prim_func
def fill_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in range(4):
        A[i] = T.float32(1)


@T.prim_func
def fill_wrong_kernel(A: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in range(4):
        A[i] = T.float32(2)


def failing_build(mod, target):
    raise ValueError("this build always fails")


def sleeping_build(mod, target):
    import time
    time.sleep(1000)


def aborting_build(mod, target):
    import os
    os.abort()
