"""PerStoreFeature: one row per store of the lowered candidate, named columns."""
import math
from types import SimpleNamespace

import numpy as np
import pytest

from mlcbench import IRModule, te
from mlcbench.ir.instrument import pass_instrument
from mlcbench.ir.errors import TuningError
from mlcbench.ir.transform import PassContext
from mlcbench.meta_schedule.feature_extractor import (FeatureExtractor, PerStoreFeature,
                                                      candidate_module)
from mlcbench.script import tir as T
from mlcbench.tir import Schedule


@T.prim_func
def add_one_parallel_vectorized(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in T.parallel(16):
        for j in T.vectorized(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def add_one_serial(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in range(16):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def exp_unrolled(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in range(4):
        for j in T.unroll(4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.exp(A[vi, vj])


@T.prim_func
def add_one_unit_vector(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in range(16):
        for j in range(8):
            for u in T.vectorized(1):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    vj = T.axis.spatial(8, j + u)
                    B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def row_sum_reduction_inner(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in range(4):
        for k in range(64):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


def slog(x):
    return math.log2(abs(x) + 1)


def features(func_or_mod, extractor=None):
    extractor = extractor or PerStoreFeature()
    rows = extractor.extract_mod(func_or_mod)
    return [dict(zip(extractor.feature_names, row)) for row in rows]


def te_matmul(n):
    A, B = te.placeholder((n, n), name="A"), te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def tiled_matmul(n=32, tile=8, cache_write=False):
    """C = A @ B (n^3) tiled as i0 j0 k i1 j1 with tile x tile inner loops."""
    sch = Schedule(te_matmul(n))
    block = sch.get_block("C")
    i, j, kk = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, tile])
    j0, j1 = sch.split(j, [None, tile])
    sch.reorder(i0, j0, kk, i1, j1)
    if cache_write:
        sch.reverse_compute_at(sch.cache_write(block, 0, "local"), j0)
    return sch


def find_access(row, kind, stride):
    """The access columns (short names) of the buffer accessed as ``kind`` with ``stride``."""
    for order in range(5):
        columns = {name.split(".", 1)[1]: value for name, value in row.items()
                   if name.startswith(f"B{order}.")}
        if columns[f"acc_{kind}"] == 1 and columns["stride"] == pytest.approx(slog(stride)):
            return columns
    raise AssertionError(f"no {kind} access of stride {stride} in the row")


def test_shapes_and_names():
    extractor = PerStoreFeature(buffers_per_store=3, arith_intensity_curve_num_samples=4)
    names = extractor.feature_names
    assert len(names) == len(set(names)) == extractor.feature_vector_length
    assert {"vec_len", "parallel_prod", "B2.stride", "arith_intensity_3", "alloc_size",
            "outer_prod"} <= set(names)
    assert "B3.stride" not in names
    (matrix,) = extractor.extract_from(None, [tiled_matmul()])
    assert matrix.dtype == np.float32
    assert matrix.shape == (1, len(names))       # the init store (a constant) is left out


def test_vectorized_loop_sets_the_vectorize_features():
    (vectorized,) = features(add_one_parallel_vectorized)
    (serial,) = features(add_one_serial)
    assert vectorized["vec_num"] == pytest.approx(slog(1))
    assert vectorized["vec_len"] == pytest.approx(slog(8))
    assert vectorized["vec_pos_inner_spatial"] == 1 and vectorized["vec_pos_none"] == 0
    assert serial["vec_num"] == 0 and serial["vec_len"] == 0 and serial["vec_pos_none"] == 1


def test_parallel_loop_sets_the_parallel_features():
    (parallel,) = features(add_one_parallel_vectorized)
    (serial,) = features(add_one_serial)
    assert parallel["parallel_num"] == pytest.approx(slog(1))
    assert parallel["parallel_prod"] == pytest.approx(slog(16))
    assert parallel["parallel_pos_outer_spatial"] == 1
    assert serial["parallel_pos_none"] == 1 and serial["parallel_prod"] == 0


def test_loops_of_one_iteration_are_left_out():
    (unit,) = features(add_one_unit_vector)
    (serial,) = features(add_one_serial)
    assert unit["vec_num"] == 0 and unit["vec_pos_none"] == 1
    assert unit["num_loops"] == serial["num_loops"] == pytest.approx(slog(2))


def test_vector_loop_features():
    (explicit,) = features(add_one_parallel_vectorized)
    assert explicit["vector_explicit"] == 1 and explicit["vector_reduce"] == 0
    assert explicit["vector_extent"] == pytest.approx(slog(8))
    assert explicit["B0.vector_stride"] == explicit["B1.vector_stride"] == pytest.approx(slog(1))
    (serial,) = features(add_one_serial)            # j (8 long) is left to LLVM
    assert serial["vector_explicit"] == 0 and serial["vector_extent"] == pytest.approx(slog(8))
    (reduction,) = features(row_sum_reduction_inner)
    assert reduction["vector_reduce"] == 1 and reduction["vector_extent"] == pytest.approx(slog(64))


def test_unrolled_loop_and_math_call():
    (row,) = features(exp_unrolled)
    assert row["unroll_len"] == pytest.approx(slog(4))
    assert row["unroll_pos_inner_spatial"] == 1
    assert row["float_math_func"] == pytest.approx(slog(16))


def test_matmul_tile_arithmetic_and_bytes_touched():
    n, tile = 32, 8
    (row,) = features(tiled_matmul(n, tile))
    assert row["float_mad"] == pytest.approx(slog(n ** 3))
    assert row["outer_prod"] == pytest.approx(slog(n ** 3))
    assert row["num_loops"] == pytest.approx(slog(5))
    a = find_access(row, "read", n)        # A[i, k]: i1 moves it by n, j1 not at all
    b = find_access(row, "read", 1)        # B[k, j]: j1 moves it by 1
    c = find_access(row, "readwrite", 1)   # C[i, j]
    for columns in (a, b, c):
        assert columns["bytes"] == pytest.approx(slog(4 * n ** 3))
        assert columns["unique_bytes"] == pytest.approx(slog(4 * n * n))
    assert b["lines"] == pytest.approx(slog(n ** 3 * 4 / 64))     # unit stride: 16 per line
    assert a["lines"] == pytest.approx(slog(n ** 3 / tile))       # j1 reuses, i1 jumps lines
    assert a["reuse_loop"] == 1 and a["reuse_ct"] == pytest.approx(slog(tile))
    assert c["reuse_loop"] == 1 and c["reuse_ct"] == pytest.approx(slog(n))   # across k


def test_cache_write_gives_a_local_allocation_and_a_write_back_row():
    rows = features(tiled_matmul(32, 8, cache_write=True))
    assert len(rows) == 2
    update, write_back = rows
    # buffers are not compacted for the features: C_local keeps its 32 x 32 shape
    assert update["alloc_local"] == 1
    assert update["alloc_size"] == pytest.approx(slog(32 * 32 * 4))
    assert update["alloc_outer_prod"] == pytest.approx(slog(1))
    local = find_access(update, "readwrite", 1)
    assert local["reuse_loop"] == 1 and local["reuse_ct"] == pytest.approx(slog(32))
    assert write_back["alloc_local"] == 0 and write_back["float_mad"] == 0
    assert write_back["outer_prod"] == pytest.approx(slog(32 * 32))


def test_register_tile_features():
    tile = 8
    sch = tiled_matmul(32, tile)                      # i0 j0 k i1 j1: k moves the tile
    (rolled,) = features(sch)
    assert rolled["register_tile"] == pytest.approx(slog(tile * tile))
    assert rolled["register_tile_unrolled"] == 0 and rolled["unrolled_steps"] == pytest.approx(slog(1))
    i1, j1 = sch.get_loops(sch.get_block("C"))[-2:]
    sch.unroll(i1)
    sch.vectorize(j1)
    (unrolled,) = features(sch)
    assert unrolled["register_tile_unrolled"] == 1
    assert unrolled["unrolled_steps"] == pytest.approx(slog(tile * tile))
    sch = tiled_matmul(32, tile)
    sch.annotate(sch.get_loops(sch.get_block("C"))[0], "pragma_auto_unroll_max_step", 64)
    (auto,) = features(sch)                           # 8 x 8 steps fit in 64: copied out
    assert auto["register_tile_unrolled"] == 1 and auto["unrolled_steps"] == pytest.approx(slog(64))
    sch.annotate(sch.get_loops(sch.get_block("C"))[0], "pragma_auto_unroll_max_step", 16)
    (partial,) = features(sch)                        # only j1 fits in 16: i1 stays a loop
    assert partial["register_tile_unrolled"] == 0 and partial["unrolled_steps"] == pytest.approx(slog(8))
    (no_reduction,) = features(add_one_serial)
    assert no_reduction["register_tile"] == 0 and no_reduction["register_tile_unrolled"] == 0
    (reduction_inside,) = features(row_sum_reduction_inner)   # k innermost: one accumulator
    assert reduction_inside["register_tile"] == pytest.approx(slog(1))
    assert reduction_inside["register_tile_unrolled"] == 1


def test_every_candidate_form_is_accepted():
    sch = tiled_matmul()
    extractor = PerStoreFeature()
    forms = [sch, sch.mod, sch.mod["main"], SimpleNamespace(sch=sch, args_info=[])]
    matrices = extractor.extract_from(None, forms)
    for matrix in matrices[1:]:
        np.testing.assert_array_equal(matrix, matrices[0])
    assert isinstance(candidate_module(sch.mod["main"]), IRModule)
    with pytest.raises(TuningError, match="expects a MeasureCandidate"):
        extractor.extract_from(None, ["not a schedule"])


def test_feature_passes_stay_out_of_the_users_instruments():
    seen = []

    @pass_instrument
    class Recorder:
        def run_before_pass(self, mod, info):
            seen.append(info.name)

    with PassContext(instruments=[Recorder()]):
        PerStoreFeature().extract_mod(tiled_matmul())
    assert seen == []


def test_base_class_and_create():
    with pytest.raises(NotImplementedError):
        FeatureExtractor().extract_from(None, [])
    assert isinstance(FeatureExtractor.create("per-store-feature"), PerStoreFeature)
    with pytest.raises(TuningError, match="unknown kind"):
        FeatureExtractor.create("made-up")


def test_candidates_of_the_tuning_space():
    from mlcbench.meta_schedule.postproc.postproc import apply_postprocs
    from mlcbench.meta_schedule.space_generator import PostOrderApply
    generator = PostOrderApply()
    generator.rand_state = 3
    extractor = PerStoreFeature()
    spaces = generator.generate_design_space(te_matmul(64))
    assert len(spaces) == 6          # 3 write-cache choices, each with and without packing B
    for sch in spaces:
        assert apply_postprocs(sch, generator.postprocs)
        kinds = {inst.kind for inst in sch.trace.insts}
        rows = features(sch.mod, extractor)
        update = max(rows, key=lambda row: row["float_mad"])
        assert update["float_mad"] == pytest.approx(slog(64 ** 3))
        assert (update["parallel_num"] > 0) == ("parallel" in kinds)
