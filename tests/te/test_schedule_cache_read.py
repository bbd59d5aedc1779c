"""te schedules: cache_read copies an input for its readers; compute_at moves the copy."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlcbench
from mlcbench import te, tir
from mlcbench.ir import assert_structural_equal
from mlcbench.ir.errors import ScheduleError


def matmul(n=16):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def run_matmul(s, args, n):
    rng = np.random.default_rng(0)
    a, b = (rng.random((n, n)).astype("float32") for _ in range(2))
    c = mlcbench.nd.empty((n, n), "float32")
    mlcbench.build(s, args, "llvm")(mlcbench.nd.array(a), mlcbench.nd.array(b), c)
    return c.numpy(), a @ b


def test_cache_read_compute_at_equals_tir_schedule():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    AA = s.cache_read(A, "global", [C])
    assert s[AA].op.name == "A.global" and [h.name for h in s[AA].op.axis] == ["ax0", "ax1"]
    i, j = s[C].op.axis
    io, ii = s[C].split(i, factor=4)
    s[C].reorder(io, j, ii)
    s[AA].compute_at(s[C], io)

    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    block = sch.get_block("C")
    copy = sch.cache_read(block, 0, "global", consumer_blocks=[block])
    i0, j0, k0 = sch.get_loops(block)
    i1, i2 = sch.split(i0, [None, 4])
    sch.reorder(i1, j0, i2)
    sch.compute_at(copy, i1, preserve_unit_loops=True)
    sch.decompose_reduction(block, sch.get_loops(block)[-1])
    assert_structural_equal(s.to_tir_schedule([A, B, C]).mod, sch.mod)


def test_two_level_cache_moves_in_tutorial_order():
    # TE tutorials attach the outer copy first; the replay moves the inner one first.
    A, B, C = matmul(32)
    s = te.create_schedule(C.op)
    AS = s.cache_read(A, "global", [C])
    AL = s.cache_read(AS, "local", [C])
    CL = s.cache_write(C, "local")
    xo, yo, xi, yi = s[C].tile(*s[C].op.axis, 8, 8)
    s[CL].compute_at(s[C], yo)
    ko, ki = s[CL].split(s[CL].op.reduce_axis[0], factor=4)
    s[AS].compute_at(s[CL], ko)
    s[AL].compute_at(s[CL], ki)
    text = mlcbench.lower(s, [A, B, C]).script()
    assert text.index("A_global_local") > text.index("A_global")
    got, want = run_matmul(s, [A, B, C], 32)
    np.testing.assert_allclose(got, want, rtol=1e-5)


@settings(max_examples=8, deadline=None)
@given(ty=st.sampled_from([2, 4, 8, 16]), tx=st.sampled_from([1, 3, 4, 16]),
       fk=st.sampled_from([1, 2, 5, 8]), scope=st.sampled_from(["global", "local"]))
def test_tiles_with_cached_inputs_match_numpy(ty, tx, fk, scope):
    A, B, C = matmul(16)
    s = te.create_schedule(C.op)
    AA, BB = s.cache_read(A, scope, [C]), s.cache_read(B, scope, [C])
    xo, yo, xi, yi = s[C].tile(*s[C].op.axis, ty, tx)
    ko, ki = s[C].split(s[C].op.reduce_axis[0], factor=fk)
    s[C].reorder(xo, yo, ko, xi, ki, yi)
    s[AA].compute_at(s[C], ko)
    s[BB].compute_at(s[C], ko)
    got, want = run_matmul(s, [A, B, C], 16)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_cache_read_for_a_stage_that_does_not_read_is_refused():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((8,), lambda i: B[i] + 1.0, name="C")
    s = te.create_schedule(C.op)
    with pytest.raises(ScheduleError, match="stage 'C' does not read 'A'"):
        s.cache_read(A, "local", [C])
    with pytest.raises(ScheduleError, match="give the stages that read it"):
        s.cache_read(A, "local", [])
    assert len(s.stages) == 2                          # nothing half-applied
    BB = s.cache_read(B, "local", [C])
    with pytest.raises(ScheduleError, match="stage 'C' does not read 'B'"):
        s.cache_read(B, "global", [C])                 # C reads the copy now
    a = np.arange(8, dtype="float32")
    c = mlcbench.nd.empty((8,), "float32")
    mlcbench.build(s, [A, C], "llvm")(mlcbench.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a * 2 + 1)
    assert s[BB].op.name == "B.local"
