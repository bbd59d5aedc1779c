import numpy as np
from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import (check_after, check_numeric, check_refused,
                                      check_trace_roundtrip, make_matmul, make_scale_add,
                                      reads_even_row)


matmul = make_matmul(16, 8, 8)


@T.prim_func
def matmul_write_cached(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 8), "float32"),
                        C: T.Buffer((16, 8), "float32")):
    C_local = T.alloc_buffer((16, 8), scope="local")
    for i in range(16):
        for j, k in T.grid(8, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C_local[vi, vj])
                with T.init():
                    C_local[vi, vj] = T.float32(0)
                C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0 in range(8):
            with T.block("C_local"):
                v0, v1 = T.axis.remap("SS", [i, ax0])
                T.reads(C_local[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_local[v0, v1]


def test_cache_write_then_reverse_compute_at():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    copy_back = sch.cache_write(block, 0, "local")
    i, _, _ = sch.get_loops(block)
    sch.reverse_compute_at(copy_back, i)
    check_after(matmul, sch, matmul_write_cached)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


def test_cache_write_after_reverse_compute_at_copies_inside_the_shared_loop():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    copy_back = sch.cache_write(block, 0, "local")
    i, _, _ = sch.get_loops(block)
    sch.reverse_compute_at(copy_back, i)
    second = sch.cache_write(block, 0, "global")
    assert sch.get(second).name_hint == "C_local_global"
    outer = [sch.get(lp).loop_var.name for lp in sch.get_loops(second)]
    assert outer == ["i", "ax0", "ax1"]
    check_trace_roundtrip(matmul, sch)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


two_stage = make_scale_add(16, 8)


@T.prim_func
def two_stage_write_cached(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    B_local = T.alloc_buffer((16, 8), scope="local")
    for i in range(16):
        for ax0 in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                B_local[vi, vj] = A[vi, vj] * T.float32(2)
        for ax0, ax1 in T.grid(1, 8):
            with T.block("B_local"):
                v0 = T.axis.spatial(16, i + ax0)
                v1 = T.axis.spatial(8, ax1)
                B[v0, v1] = B_local[v0, v1]
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)


def _computed_at_row(func):
    sch = Schedule(func)
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    return sch


def test_cache_write_after_compute_at_goes_right_after_the_producer():
    sch = _computed_at_row(two_stage)
    sch.cache_write(sch.get_block("B"), 0, "local")
    check_after(two_stage, sch, two_stage_write_cached)
    check_numeric(sch.mod["main"], lambda a, c: a * 2 + 1)


def test_cache_write_consumer_blocks_read_the_cache():
    sch = _computed_at_row(two_stage)
    sch.cache_write(sch.get_block("B"), 0, "local", consumer_blocks=[sch.get_block("C")])
    reads = sch.get(sch.get_block("C")).reads
    assert [r.buffer.name for r in reads] == ["B_local"]
    check_trace_roundtrip(two_stage, sch)
    check_numeric(sch.mod["main"], lambda a, c: a * 2 + 1)


def test_cache_write_readers_of_the_original_see_earlier_copies():
    sch = Schedule(reads_even_row)
    sch.cache_write(sch.get_block("B"), 0, "local")
    check_trace_roundtrip(reads_even_row, sch)
    check_numeric(sch.mod["main"], lambda a, c: (a * 2)[np.arange(16) // 2 * 2])


def test_cache_write_refuses_when_the_copy_would_not_cover_its_readers():
    sch = Schedule(reads_even_row)
    producer, consumer = sch.get_block("B"), sch.get_block("C")
    check_refused(sch, lambda s: s.cache_write(producer, 0, "local", [consumer]),
                  r"cache_write: the copy 'B_local' would hold 'B' \(dimension 0\) in \[i, i\]")
