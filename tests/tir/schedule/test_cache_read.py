from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers.schedule_testing import (check_after, check_numeric, check_refused,
                                      check_trace_roundtrip, make_matmul, make_scale_add,
                                      reads_even_row)


matmul = make_matmul(16, 8, 8)


@T.prim_func
def matmul_cached_b(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 8), "float32"),
                    C: T.Buffer((16, 8), "float32")):
    B_shared = T.alloc_buffer((8, 8), scope="shared")
    for ax0, ax1 in T.grid(8, 8):
        with T.block("B_shared"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(B[v0, v1])
            T.writes(B_shared[v0, v1])
            B_shared[v0, v1] = B[v0, v1]
    for i, j, k in T.grid(16, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B_shared[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B_shared[vk, vj]


def test_cache_read_second_input():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    copy = sch.cache_read(block, 1, "shared")
    assert sch.get(copy).name_hint == "B_shared"
    check_after(matmul, sch, matmul_cached_b)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


def test_cache_read_refuses_unknown_index():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    check_refused(sch, lambda s: s.cache_read(block, 5, "local"),
                  r"has no read buffer 5; its read buffers are \['A', 'B'\]")


two_stage = make_scale_add(16, 8)


@T.prim_func
def two_stage_row_cached(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    B_local = T.alloc_buffer((16, 8), scope="local")
    for i in range(16):
        for ax0 in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, ax0])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for ax0, ax1 in T.grid(1, 8):
            with T.block("B_local"):
                v0 = T.axis.spatial(16, i + ax0)
                v1 = T.axis.spatial(8, ax1)
                B_local[v0, v1] = B[v0, v1]
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B_local[vi, vj] + T.float32(1)


def test_cache_read_after_compute_at_copies_one_row_inside_the_shared_loop():
    sch = Schedule(two_stage)
    consumer = sch.get_block("C")
    i, _ = sch.get_loops(consumer)
    sch.compute_at(sch.get_block("B"), i)
    copy = sch.cache_read(consumer, 0, "local")
    assert sch.get(copy).name_hint == "B_local"
    check_after(two_stage, sch, two_stage_row_cached)
    check_numeric(sch.mod["main"], lambda a, c: a * 2 + 1)


def test_cache_read_then_compute_at_is_the_tiling_flow():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, 4])
    sch.reorder(i0, j, k, i1)
    a_shared = sch.cache_read(block, 0, "shared")
    sch.compute_at(a_shared, k)
    loops = sch.get_loops(a_shared)
    assert [sch.get(lp).loop_var.name for lp in loops[:3]] == ["i_0", "j", "k"]
    check_trace_roundtrip(matmul, sch)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


def test_cache_read_refuses_when_the_copy_would_not_cover_the_readers():
    sch = Schedule(reads_even_row)
    consumer = sch.get_block("C")
    check_refused(sch, lambda s: s.cache_read(consumer, 0, "local"),
                  r"would hold 'B' \(dimension 0\) in \[i, i\] per iteration of loop 'i', "
                  r"but its readers there need \[i // 2 \* 2, i // 2 \* 2\]")


@T.prim_func
def two_producers(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16, 8))
    for i, j in T.grid(8, 8):
        with T.block("B_top"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
    for i, j in T.grid(8, 8):
        with T.block("B_bottom"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi + 8, vj] = A[vi + 8, vj] * T.float32(2)
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj]


def test_cache_read_refuses_a_buffer_with_two_producers():
    sch = Schedule(two_producers)
    consumer = sch.get_block("C")
    check_refused(sch, lambda s: s.cache_read(consumer, 0, "global"),
                  r"'B' is written by several blocks \['B_top', 'B_bottom'\]")


def test_cache_read_names_do_not_collide():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    first = sch.cache_read(block, 1, "shared")
    second = sch.cache_read(block, "B_shared", "shared")
    assert (sch.get(first).name_hint, sch.get(second).name_hint) == ("B_shared",
                                                                      "B_shared_shared")
    check_trace_roundtrip(matmul, sch)
    check_numeric(sch.mod["main"], lambda a, b, c: a @ b)


def test_cache_read_refuses_a_buffer_the_reader_also_writes():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    update = sch.decompose_reduction(block, sch.get_loops(block)[2])
    check_refused(sch, lambda s: s.cache_read(block, "C", "local"),
                  r"block 'C_update' both reads and writes 'C'.*cache_write that block")
