"""compute_at under loops bound to GPU threads: a copy into memory that the threads share
covers what all of them read, as in TVM (course chapter 7's window sum)."""
from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import check_after, check_trace_roundtrip


@T.prim_func
def window_sum(A: T.Buffer((1027,), "float32"), B: T.Buffer((1024,), "float32")):
    for i in range(1024):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]


@T.prim_func
def window_sum_shared(A: T.Buffer((1027,), "float32"), B: T.Buffer((1024,), "float32")):
    A_shared = T.alloc_buffer((1027,), scope="shared")
    for i_0 in T.thread_binding(8, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            for ax0 in range(130):
                with T.block("A_shared"):
                    v0 = T.axis.spatial(1027, i_0 * 128 + ax0)
                    T.reads(A[v0])
                    T.writes(A_shared[v0])
                    A_shared[v0] = A[v0]
            with T.block("C"):
                vi = T.axis.spatial(1024, i_0 * 128 + i_1)
                T.reads(A_shared[vi:vi + 3])
                T.writes(B[vi])
                B[vi] = A_shared[vi] + A_shared[vi + 1] + A_shared[vi + 2]


@T.prim_func
def window_sum_local(A: T.Buffer((1027,), "float32"), B: T.Buffer((1024,), "float32")):
    A_local = T.alloc_buffer((1027,), scope="local")
    for i_0 in T.thread_binding(8, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            for ax0 in range(3):
                with T.block("A_local"):
                    v0 = T.axis.spatial(1027, i_0 * 128 + i_1 + ax0)
                    T.reads(A[v0])
                    T.writes(A_local[v0])
                    A_local[v0] = A[v0]
            with T.block("C"):
                vi = T.axis.spatial(1024, i_0 * 128 + i_1)
                T.reads(A_local[vi:vi + 3])
                T.writes(B[vi])
                B[vi] = A_local[vi] + A_local[vi + 1] + A_local[vi + 2]


def _cached_under_threads(scope):
    sch = Schedule(window_sum)
    block = sch.get_block("C")
    i0, i1 = sch.split(sch.get_loops(block)[0], [None, 128])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    cache = sch.cache_read(block, 0, scope)
    sch.compute_at(cache, i1)
    return sch


def test_shared_copy_covers_every_thread_of_the_block():
    sch = _cached_under_threads("shared")
    check_after(window_sum, sch, window_sum_shared)
    check_trace_roundtrip(window_sum, sch)


def test_local_copy_covers_one_thread():
    sch = _cached_under_threads("local")
    check_after(window_sum, sch, window_sum_local)
