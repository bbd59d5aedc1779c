import mlcbench
from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from mlcbench.tir.transform import lower
from helpers.schedule_testing import check_after, check_numeric, check_refused


@T.prim_func
def transpose_via_cache(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vj, vi]


@T.prim_func
def transpose_aligned(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            T.block_attr({"buffer_dim_align": [[0, 0, 16, 1]]})
            B[vi, vj] = A[vi, vj]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vj, vi]


def _allocations(func):
    found = []
    mlcbench.tir.post_order_visit(lower(func)["main"].body, lambda n: found.append(n)
                                  if isinstance(n, mlcbench.tir.Allocate) else None)
    return found


def test_storage_align_annotates_and_pads_the_stride():
    sch = Schedule(transpose_via_cache)
    sch.storage_align(sch.get_block("B"), 0, axis=0, factor=16, offset=1)
    check_after(transpose_via_cache, sch, transpose_aligned)
    (alloc,) = _allocations(sch.mod["main"])
    assert int(alloc.buffer.shape[0].value) == 15 * 17 + 16     # rows padded to 17
    check_numeric(sch.mod["main"], lambda a, c: a.T.copy())


def test_storage_align_unaligned_function_is_unpadded():
    (alloc,) = _allocations(transpose_via_cache)
    assert int(alloc.buffer.shape[0].value) == 256


def test_storage_align_refuses_bad_arguments():
    sch = Schedule(transpose_via_cache)
    block = sch.get_block("B")
    check_refused(sch, lambda s: s.storage_align(block, 0, 2, 16, 1),
                  r"storage_align: axis 2 is out of range for the 2-d buffer 'B'")
    check_refused(sch, lambda s: s.storage_align(block, 0, 0, 16, 16),
                  r"need factor > 0 and 0 <= offset < factor")
    check_refused(sch, lambda s: s.storage_align(block, 1, 0, 16, 1),
                  r"block 'B' has 1 write buffers")
