"""Workloads, the course's stochastic schedule shared by the tuning tests."""
from __future__ import annotations

from mlcbench import IRModule, te


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
