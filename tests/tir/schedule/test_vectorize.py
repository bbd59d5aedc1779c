from hypothesis import given, settings, strategies as st

from mlcbench.script import from_source, tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import (check_after, check_numeric, check_refused,
                                      make_add_one_2d, make_row_sum)


add_one = make_add_one_2d(16, 8)


@T.prim_func
def add_one_vectorized(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
    for i in range(16):
        for j in T.vectorized(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] + T.float32(1)


row_sum = make_row_sum(16, 8)


def test_vectorize_inner_loop():
    sch = Schedule(add_one)
    _, j = sch.get_loops("B")
    sch.vectorize(j)
    check_after(add_one, sch, add_one_vectorized)
    check_numeric(sch.mod["main"], lambda a, b: a + 1)


def test_vectorize_refuses_reduction_loop():
    sch = Schedule(row_sum)
    _, k = sch.get_loops("B")
    check_refused(sch, lambda s: s.vectorize(k), "can be vectorized")


def test_vectorize_refuses_parallel_loop():
    sch = Schedule(add_one)
    i, _ = sch.get_loops("B")
    sch.parallel(i)
    check_refused(sch, lambda s: s.vectorize(i), "already parallel")


@T.prim_func
def running_sum(A: T.Buffer((4096,), "float32")):
    for i in range(4095):
        with T.block("b"):
            T.reads(A[i:i + 2])
            T.writes(A[i + 1])
            A[i + 1] = A[i + 1] + A[i]


@T.prim_func
def running_sum_spatial(A: T.Buffer((64,), "float32")):
    for i in range(63):
        with T.block("b"):
            vi = T.axis.spatial(63, i)
            A[vi + 1] = A[vi + 1] + A[vi]


@T.prim_func
def shift_in_place(A: T.Buffer((80,), "float32")):
    for i in range(16):
        with T.block("b"):
            T.reads(A[i + 64])
            T.writes(A[i])
            A[i] = A[i + 64] * T.float32(2)


def test_vectorize_refuses_loop_carried_dependence_on_loop_var():
    sch = Schedule(running_sum)
    (i,) = sch.get_loops("b")
    err = check_refused(sch, lambda s: s.vectorize(i), "overlap on buffer 'A'")
    text = str(err)
    assert "block 'b' writes A[i + 1] and block 'b' reads A[i:i + 2]" in text
    assert "iteration i=0 writes A[1] and iteration i=1 reads A[1:3]" in text
    assert "for i in range(4095):  # <-- here" in text


def test_vectorize_refuses_spatial_iter_var_that_reads_its_neighbour():
    sch = Schedule(running_sum_spatial)
    (i,) = sch.get_loops("b")
    err = check_refused(sch, lambda s: s.vectorize(i), "overlap on buffer 'A'")
    assert "writes A[vi + 1] and block 'b' reads A[vi:vi + 2]" in str(err)


def test_vectorize_accepts_in_place_update_of_disjoint_elements():
    # reads and writes one buffer, but no element written is touched by another iteration
    sch = Schedule(shift_in_place)
    (i,) = sch.get_loops("b")
    sch.vectorize(i)
    assert sch.get(i).kind.value == "vectorized"

    def reference(a):
        out = a.copy()
        out[:16] = a[64:] * 2
        return out
    check_numeric(sch.mod["main"], reference, outputs=(0,))


@settings(max_examples=12, deadline=None)
@given(extent=st.integers(2, 24), write=st.integers(0, 30), read=st.integers(0, 30))
def test_vectorize_refuses_exactly_the_stencils_that_overlap(extent, write, read):
    """``A[i + write] += A[i + read]``: iterations i and i' collide when i + write equals
    i' + read for i != i' inside the loop, i.e. when 0 < |write - read| < extent."""
    func = from_source(_STENCIL.format(size=extent + 31, extent=extent, w=write, r=read))
    sch = Schedule(func)
    (i,) = sch.get_loops("b")
    if 0 < abs(write - read) < extent:
        check_refused(sch, lambda s: s.vectorize(i), "overlap on buffer 'A'")
        return
    sch.vectorize(i)

    def serial(a):
        out = a.copy()
        for n in range(extent):
            out[n + write] += out[n + read]
        return out
    check_numeric(sch.mod["main"], serial, outputs=(0,))


_STENCIL = '''
@T.prim_func
def main(A: T.Buffer(({size},), "float32")):
    for i in range({extent}):
        with T.block("b"):
            T.reads(A[i + {r}], A[i + {w}])
            T.writes(A[i + {w}])
            A[i + {w}] = A[i + {w}] + A[i + {r}]
'''
