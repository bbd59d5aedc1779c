"""te schedules: bind records GPU thread axes (refused on the CPU); pragma annotates loops."""
import numpy as np
import pytest

import mlcbench
from mlcbench import te, tir
from mlcbench.ir import assert_structural_equal
from mlcbench.ir.errors import IRError, ScheduleError


def add_one(n=64):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    return A, B


def test_thread_axis_spellings():
    tx = te.thread_axis("threadIdx.x")
    assert tx.thread_tag == "threadIdx.x" and tx.var.name == "threadIdx.x"
    bx = te.thread_axis((0, 8), "blockIdx.x", name="bx")
    assert (bx.thread_tag, bx.var.name, bx.dom.extent.value) == ("blockIdx.x", "bx", 8)
    with pytest.raises(IRError, match="expected a thread tag"):
        te.thread_axis((0, 8))


def test_bind_replays_as_thread_binding():
    A, B = add_one()
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(s[B].op.axis[0], factor=32)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    s[B].bind(tx, "threadIdx.x")
    assert s.thread_bindings() == [("B", "i.outer", "blockIdx.x"), ("B", "i.inner", "threadIdx.x")]

    sch = tir.Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, 32])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    assert_structural_equal(s.to_tir_schedule([A, B]).mod, sch.mod)


def test_bind_is_refused_for_the_cpu_naming_stage_and_axis():
    A, B = add_one()
    s = te.create_schedule(B.op)
    bx, tx = s[B].split(s[B].op.axis[0], factor=32)
    s[B].bind(bx, te.thread_axis("blockIdx.x"))
    message = r"stage 'B' binds axis 'i.outer' to 'blockIdx.x'.*s\[B\].parallel\(i.outer\)"
    with pytest.raises(ScheduleError, match=message):
        mlcbench.build(s, [A, B], target="llvm")
    with pytest.raises(ScheduleError, match=message):
        mlcbench.lower(s, [A, B])
    with pytest.raises(ScheduleError, match="expected a thread axis"):
        s[B].bind(tx, te.reduce_axis((0, 4), name="r"))


def test_pragma_annotates_the_loop_and_unroll_vectorize_act():
    A, B = add_one()
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(s[B].op.axis[0], factor=8)
    s[B].pragma(xo, "auto_unroll_max_step", 16)
    s[B].pragma(xi, "vectorize")

    sch = tir.Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    i0, i1 = sch.split(i, [None, 8])
    sch.annotate(i0, "pragma_auto_unroll_max_step", 16)
    sch.vectorize(i1)
    assert_structural_equal(s.to_tir_schedule([A, B]).mod, sch.mod)
    a = np.arange(64, dtype="float32")
    b = mlcbench.nd.empty((64,), "float32")
    mlcbench.build(s, [A, B], "llvm")(mlcbench.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a + 1)
    with pytest.raises(ScheduleError, match="expected a pragma name"):
        s[B].pragma(xo, "not a name")
