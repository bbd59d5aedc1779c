"""Reference solutions of notebook 7's exercises, checked by the notebook's own checks."""
import pytest

from mlcbench.ir.errors import MLCBenchError
from helpers.exercise_cells import exercise_namespace

NB = exercise_namespace("07_gpu.ipynb")


def window_sum_shared(sch, nthread):
    block = sch.get_block("C")
    (i,) = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, nthread])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    a_shared = sch.cache_read(block, 0, "shared")
    sch.compute_at(a_shared, i1)
    _, tx = sch.split(sch.get_loops(a_shared)[-1], [None, nthread])
    sch.bind(tx, "threadIdx.x")
    return sch


def solution_1(sch):
    return window_sum_shared(sch, 64)


def solution_2(sch):
    block = sch.get_block("C")
    c_local = sch.cache_write(block, 0, "local")
    i, j, k = sch.get_loops(block)
    i0, i1, i2 = sch.split(i, [None, 8, 4])
    j0, j1, j2 = sch.split(j, [None, 8, 4])
    k0, k1 = sch.split(k, [None, 8])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(c_local, j1)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    b_shared = sch.cache_read(block, 1, "shared")
    sch.compute_at(b_shared, k0)
    _, ty, tx = sch.split(sch.fuse(*sch.get_loops(b_shared)[-2:]), [None, 8, 8])
    sch.bind(ty, "threadIdx.y")
    sch.bind(tx, "threadIdx.x")
    sch.decompose_reduction(block, k0)
    return sch


def solution_3(sch, tile=(4, 16)):
    block = sch.get_block("C")
    c_local = sch.cache_write(block, 0, "local")
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, tile[0]])
    j0, j1 = sch.split(j, [None, tile[1]])
    sch.reorder(i0, j0, k, i1, j1)
    sch.reverse_compute_at(c_local, j0)
    sch.parallel(sch.fuse(i0, j0))
    sch.vectorize(j1)
    return sch


def not_attempted(sch):
    raise NotImplementedError


def test_exercise_1_reference_solution_passes():
    assert NB["check_exercise_1"](solution_1) is True


def test_exercise_1_rejects_blocks_of_another_size():
    with pytest.raises(MLCBenchError):
        NB["check_exercise_1"](lambda sch: window_sum_shared(sch, 128))


def test_exercise_2_reference_solution_passes():
    assert NB["check_exercise_2"](solution_2) is True


def test_exercise_2_rejects_a_fused_thread_index():
    def one_thread_index(sch):
        block = sch.get_block("C")
        i, j, k = sch.get_loops(block)
        i0, i1, i2 = sch.split(i, [None, 8, 4])
        j0, j1, j2 = sch.split(j, [None, 8, 4])
        sch.reorder(i0, j0, i1, j1, k, i2, j2)
        sch.bind(i0, "blockIdx.y")
        sch.bind(j0, "blockIdx.x")
        sch.bind(sch.fuse(i1, j1), "threadIdx.x")
        return sch
    with pytest.raises(MLCBenchError):
        NB["check_exercise_2"](one_thread_index)


@pytest.mark.parametrize("tile", [(4, 16), (8, 32), (2, 8)])
def test_exercise_3_reference_solution_passes_for_any_tile(tile):
    assert NB["check_exercise_3"](lambda sch: solution_3(sch, tile)) is True


def test_exercise_3_rejects_a_schedule_without_parallel_loops():
    def serial(sch):
        block = sch.get_block("C")
        sch.cache_write(block, 0, "local")
        return sch
    with pytest.raises(AssertionError, match="no parallel loop"):
        NB["check_exercise_3"](serial)


def test_unattempted_exercises_report_so():
    for number in (1, 2, 3):
        assert NB[f"check_exercise_{number}"](not_attempted) is False
