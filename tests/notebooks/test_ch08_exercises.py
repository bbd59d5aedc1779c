"""Reference solutions of notebook 8's exercises, checked by the notebook's own checks."""
import pytest

import mlcbench as tvm
from mlcbench.ir.errors import MLCBenchError
from mlcbench.script import tir as T
from helpers.exercise_cells import exercise_namespace

NB = exercise_namespace("08_specialized_hardware.ipynb")


def tile_and_blockize(sch, tile):
    i, j, k = sch.get_loops("matmul")
    i, ii = sch.split(i, factors=[None, tile])
    j, ji = sch.split(j, factors=[None, tile])
    k, ki = sch.split(k, factors=[None, tile])
    sch.reorder(i, j, k, ii, ji, ki)
    return sch.blockize(ii), (i, j, k)


def solution_1(sch):
    block, (_, _, k) = tile_and_blockize(sch, 8)
    sch.compute_at(sch.cache_read(block, 0, "global.A_reg"), k)
    return sch


@T.prim_func
def tmm16_nn_desc(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (16, 16), "float32", offset_factor=16)
    B = T.match_buffer(b, (16, 16), "float32", offset_factor=16)
    C = T.match_buffer(c, (16, 16), "float32", offset_factor=16)
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, j, k in T.grid(16, 16, 16):
            with T.block(""):
                vii, vjj, vkk = T.axis.remap("SSR", [i, j, k])
                C[vii, vjj] = C[vii, vjj] + A[vii, vkk] * B[vkk, vjj]


@T.prim_func
def tmm16_nn_impl(a: T.handle, b: T.handle, c: T.handle) -> None:
    sa = T.var("int32")
    sb = T.var("int32")
    sc = T.var("int32")
    A = T.match_buffer(a, (16, 16), "float32", offset_factor=16, strides=[sa, 1])
    B = T.match_buffer(b, (16, 16), "float32", offset_factor=16, strides=[sb, 1])
    C = T.match_buffer(c, (16, 16), "float32", offset_factor=16, strides=[sc, 1])
    with T.block("root"):
        T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        T.evaluate(T.call_extern("tmm16_nn", C.access_ptr("w"), A.access_ptr("r"),
                                 B.access_ptr("r"), sa, sb, sc, dtype="int32"))


def solution_2(sch):
    tvm.tir.TensorIntrin.register("tmm16_nn", tmm16_nn_desc, tmm16_nn_impl, override=True)
    block, (i, _, k) = tile_and_blockize(sch, 16)
    sch.decompose_reduction(block, k)
    sch.tensorize(block, "tmm16_nn")
    sch.annotate(i, "pragma_import_llvm", NB["TMM16_NN_LL"])
    return sch


def not_attempted(sch):
    raise NotImplementedError


def test_exercise_1_reference_solution_passes():
    assert NB["check_exercise_1"](solution_1) is True


def test_exercise_1_rejects_a_different_tile():
    def tiles_of_16(sch):
        block, (_, _, k) = tile_and_blockize(sch, 16)
        sch.compute_at(sch.cache_read(block, 0, "global.A_reg"), k)
        return sch
    with pytest.raises(MLCBenchError):
        NB["check_exercise_1"](tiles_of_16)


def test_exercise_2_reference_solution_passes():
    assert NB["check_exercise_2"](solution_2) is True


def test_exercise_2_rejects_an_untensorized_schedule():
    with pytest.raises(AssertionError, match="never calls tmm16_nn"):
        NB["check_exercise_2"](lambda sch: tile_and_blockize(sch, 16) and sch)


def test_unattempted_exercises_report_so():
    assert NB["check_exercise_1"](not_attempted) is False
    assert NB["check_exercise_2"](not_attempted) is False
