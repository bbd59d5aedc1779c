"""te.create_schedule: recorded stage steps replay onto tir.Schedule; results match numpy."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlcbench
from mlcbench import te, tir
from mlcbench.ir import assert_structural_equal
from mlcbench.ir.errors import ScheduleError


def matmul(n=16, m=16, k=16):
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((n, m), lambda y, x: te.sum(A[y, r] * B[r, x], axis=r), name="C")
    return A, B, C


def run(s, args, shapes):
    lib = mlcbench.build(s, args, target="llvm")
    rng = np.random.default_rng(0)
    a, b = (rng.random(shape).astype("float32") for shape in shapes)
    c = mlcbench.nd.empty((shapes[0][0], shapes[1][1]), "float32")
    lib(mlcbench.nd.array(a), mlcbench.nd.array(b), c)
    return c.numpy(), a @ b


def test_split_reorder_equals_tir_schedule():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    y, x = s[C].op.axis
    (k,) = s[C].op.reduce_axis
    yo, yi = s[C].split(y, factor=4)
    xo, xi = s[C].split(x, nparts=2)
    s[C].reorder(yo, xo, k, yi, xi)
    s[C].vectorize(xi)

    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    block = sch.get_block("C")
    i, j, kk = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [2, None])
    sch.reorder(i0, j0, kk, i1, j1)
    sch.vectorize(j1)
    sch.decompose_reduction(block, kk)
    assert_structural_equal(s.to_tir_schedule([A, B, C]).mod, sch.mod)


def test_cache_write_compute_at_equals_tir_schedule():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "global")
    y, x = s[C].op.axis
    yo, yi = s[C].split(y, factor=8)
    xo, xi = s[C].split(x, factor=8)
    s[C].reorder(yo, xo, yi, xi)
    s[CC].compute_at(s[C], xo)
    fused = s[C].fuse(yo, xo)
    s[C].parallel(fused)

    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    block = sch.get_block("C")
    copy = sch.cache_write(block, 0, "global")
    i, j = sch.get_loops(copy)
    i0, i1 = sch.split(i, [None, 8])
    j0, j1 = sch.split(j, [None, 8])
    sch.reorder(i0, j0, i1, j1)
    sch.compute_at(block, j0, preserve_unit_loops=True)
    sch.parallel(sch.fuse(i0, j0))
    sch.decompose_reduction(block, sch.get_loops(block)[-1])
    assert_structural_equal(s.to_tir_schedule([A, B, C]).mod, sch.mod)


def test_tiled_matmul_matches_numpy():
    A, B, C = matmul(32, 32, 32)
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "global")
    xo, yo, xi, yi = s[C].tile(*s[C].op.axis, 8, 16)
    s[CC].compute_at(s[C], yo)
    yc, xc = s[CC].op.axis
    (kc,) = s[CC].op.reduce_axis
    ko, ki = s[CC].split(kc, factor=4)
    s[CC].reorder(ko, yc, ki, xc)
    s[CC].unroll(ki)
    s[CC].vectorize(xc)
    got, want = run(s, [A, B, C], [(32, 32), (32, 32)])
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_compute_inline_and_lower():
    A = te.placeholder((8, 8), name="A")
    B = te.compute((8, 8), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((8, 8), lambda i, j: B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    s[B].compute_inline()
    text = mlcbench.lower(s, [A, C]).script()
    assert "B_1" not in text and "T.float32(2)" in text
    lib = mlcbench.build(s, [A, C], "llvm", name="add_mul")
    a = np.arange(64, dtype="float32").reshape(8, 8)
    c = mlcbench.nd.empty((8, 8), "float32")
    lib["add_mul"](mlcbench.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a * 2 + 1)


def test_split_axis_extents_follow_factors():
    A, B, C = matmul(20, 16, 16)
    s = te.create_schedule(C.op)
    y, x = s[C].op.axis
    yo, yi = s[C].split(y, factor=8)
    assert (y.dom.extent, yo.extent, yi.extent) == (20, 3, 8)
    assert s[C].fuse(yo, yi).extent == 24


def test_reusing_a_split_axis_is_refused():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    y, x = s[C].op.axis
    s[C].split(y, factor=4)
    with pytest.raises(ScheduleError, match="not a current loop"):
        s[C].split(y, factor=2)
    with pytest.raises(ScheduleError, match="placeholder"):
        s[A]


def test_tir_errors_surface_when_lowering():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    (k,) = s[C].op.reduce_axis
    s[C].parallel(k)
    with pytest.raises(ScheduleError):
        mlcbench.lower(s, [A, B, C])


def test_compute_at_after_split_is_refused():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "global")
    y, x = s[C].op.axis
    s[CC].split(s[CC].op.axis[0], factor=2)
    with pytest.raises(ScheduleError, match="call compute_at first"):
        s[CC].compute_at(s[C], x)


@settings(max_examples=8, deadline=None)
@given(fy=st.sampled_from([1, 3, 4, 16]), fx=st.sampled_from([2, 5, 8]),
       fk=st.sampled_from([1, 4, 7]), vec=st.booleans())
def test_random_split_factors_match_numpy(fy, fx, fk, vec):
    A, B, C = matmul(16, 16, 16)
    s = te.create_schedule(C.op)
    y, x = s[C].op.axis
    (k,) = s[C].op.reduce_axis
    yo, yi = s[C].split(y, factor=fy)
    xo, xi = s[C].split(x, factor=fx)
    ko, ki = s[C].split(k, factor=fk)
    s[C].reorder(yo, xo, ko, ki, yi, xi)
    if vec:
        s[C].vectorize(xi)
    got, want = run(s, [A, B, C], [(16, 16), (16, 16)])
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_older_tutorial_program_lowers_builds_and_times():
    n = 64
    A, B, C = matmul(n, n, n)
    k = C.op.reduce_axis[0]
    s = te.create_schedule(C.op)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 16, 16)
    ko, ki = s[C].split(k, factor=4)
    s[C].reorder(xo, yo, ko, ki, xi, yi)
    s[C].vectorize(yi)
    s[C].parallel(xo)
    text = str(mlcbench.lower(s, [A, B, C], simple_mode=True))
    assert "for y_0 in T.parallel(4):" in text
    assert "for k_0, k_1, y_1 in T.grid(16, 4, 16):" in text
    assert "T.Broadcast(" in text                    # the vectorized x_1 loop
    func = mlcbench.build(s, [A, B, C], target="llvm", name="mmult")
    assert func.entry_name == "mmult"
    ctx = mlcbench.context("llvm", 0)
    rng = np.random.default_rng(1)
    a = mlcbench.nd.array(rng.random((n, n)).astype("float32"), ctx)
    b = mlcbench.nd.array(rng.random((n, n)).astype("float32"), ctx=ctx)
    c = mlcbench.nd.array(np.zeros((n, n), dtype="float32"), ctx)
    func(a, b, c)
    np.testing.assert_allclose(c.numpy(), a.numpy() @ b.numpy(), rtol=1e-5)
    result = func.time_evaluator(func.entry_name, ctx=ctx, number=2)(a, b, c)
    assert result.mean > 0


def test_axis_of_another_stage_is_refused_with_both_names():
    A = te.placeholder((8, 8), name="A")
    B = te.compute((8, 8), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((8, 8), lambda i, j: B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    bo, bi = s[B].split(s[B].op.axis[0], factor=2)
    with pytest.raises(ScheduleError, match="axis 'i.outer' is a loop of stage 'B'"):
        s[C].vectorize(bo)
    with pytest.raises(ScheduleError, match="found axis 'j' of stage 'B'"):
        s[C].parallel(B.op.axis[1])
    with pytest.raises(ScheduleError, match="expected a positive int factor"):
        s[C].split(s[C].op.axis[0], factor=0)
    with pytest.raises(ScheduleError, match="each loop once"):
        s[C].reorder(s[C].op.axis[0], s[C].op.axis[0])
    assert [h.name for h in s[C].leaf_iter_vars] == ["i", "j"]     # nothing half-applied


def test_tir_refusal_names_the_stage_and_the_axis():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    (k,) = s[C].op.reduce_axis
    s[C].vectorize(k)
    with pytest.raises(ScheduleError, match=r"stage 'C', vectorize\(k\): "):
        mlcbench.build(s, [A, B, C], "llvm")


def test_fuse_of_one_loop_is_that_loop_and_step_names_appear_in_refusals():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    y, x = s[C].op.axis
    assert s[C].fuse(y) is y
    with pytest.raises(ScheduleError, match="expected the loops to fuse, found none"):
        s[C].fuse()
    (k,) = s[C].op.reduce_axis
    ko, ki = s[C].split(k, nparts=4)
    s[C].parallel(ko)
    with pytest.raises(ScheduleError, match=r"^stage 'C', parallel\(k.outer\): parallel: "):
        mlcbench.lower(s, [A, B, C])


def test_te_methods_left_to_tensorir_say_which_primitive_to_use():
    A, B, C = matmul()
    s = te.create_schedule(C.op)
    with pytest.raises(ScheduleError, match=r"s\[C\].storage_align .*sch.storage_align"):
        s[C].storage_align(s[C].op.axis[0], 16, 1)
    with pytest.raises(ScheduleError, match=r"s.rfactor\(C, ...\).*sch.rfactor"):
        s.rfactor(C, s[C].op.reduce_axis[0])
    with pytest.raises(AttributeError, match="no attribute 'not_a_method'"):
        s[C].not_a_method
    s[C].compute_root()                                    # where the stage is already
    assert s._steps == []
