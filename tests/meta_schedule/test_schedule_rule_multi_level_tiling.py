"""MultiLevelTiling: SSRSRS tiles with sampled sizes, optionally a write cache."""

import pytest
from hypothesis import given, settings, strategies as st

from mlcbench.ir import assert_structural_equal
from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from mlcbench.meta_schedule.schedule_rule import MultiLevelTiling, ReuseType
from helpers import space_testing as sp

TILES = [[1, 2, 2, 4], [2, 1, 2, 4], [4, 4]]       # i, j, k


@T.prim_func
def tiled(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
          C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    for i_0, j_0, i_1, j_1, k_0, i_2, j_2, k_1, i_3, j_3 in T.grid(1, 2, 2, 1, 4, 2, 2, 4,
                                                                    4, 4):
        with T.block("C"):
            v_i = T.axis.spatial(16, i_0 * 16 + i_1 * 8 + i_2 * 4 + i_3)
            v_j = T.axis.spatial(16, j_0 * 8 + j_1 * 8 + j_2 * 4 + j_3)
            v_k = T.axis.reduce(16, k_0 * 4 + k_1)
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]


@T.prim_func
def tiled_cache_level_2(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                        C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    C_global = T.alloc_buffer((16, 16))
    for i_0, j_0, i_1, j_1 in T.grid(1, 2, 2, 1):
        for k_0, i_2, j_2, k_1, i_3, j_3 in T.grid(4, 2, 2, 4, 4, 4):
            with T.block("C"):
                v_i = T.axis.spatial(16, i_0 * 16 + i_1 * 8 + i_2 * 4 + i_3)
                v_j = T.axis.spatial(16, j_0 * 8 + j_1 * 8 + j_2 * 4 + j_3)
                v_k = T.axis.reduce(16, k_0 * 4 + k_1)
                T.reads(A[v_i, v_k], B[v_k, v_j])
                T.writes(C_global[v_i, v_j])
                T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                with T.init():
                    C_global[v_i, v_j] = T.float32(0)
                C_global[v_i, v_j] = C_global[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
        for ax0, ax1 in T.grid(8, 8):
            with T.block("C_global"):
                v0 = T.axis.spatial(16, i_0 * 16 + i_1 * 8 + ax0)
                v1 = T.axis.spatial(16, j_0 * 8 + j_1 * 8 + ax1)
                T.reads(C_global[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_global[v0, v1]


def _spaces(mod, block="C", seed=0, **kwargs):
    sch = Schedule(mod, seed=seed)
    return MultiLevelTiling(**kwargs).apply(sch, sch.get_block(block))


def test_matmul_is_tiled_ssrsrs_with_and_without_a_write_cache():
    mod, reference = sp.matmul(16)
    spaces = _spaces(mod)
    assert len(spaces) == 3
    assert_structural_equal(sp.with_tiles(mod, spaces[0], TILES).mod["main"], tiled)
    assert_structural_equal(sp.with_tiles(mod, spaces[2], TILES).mod["main"],
                            tiled_cache_level_2)
    assert sp.enclosing_loop_names(sp.with_tiles(mod, spaces[1], TILES).mod, "C_global")[-3] \
        == "j_0"
    for space in spaces:
        sp.check_numeric(sp.with_tiles(mod, space, TILES).mod, reference)


def test_tile_sizes_are_perfect_and_the_innermost_is_bounded():
    mod, _ = sp.matmul(64)
    for seed in range(8):
        space = _spaces(mod, seed=seed, max_innermost_factor=4)[0]
        tiles = [i.decision for i in space.trace.insts if i.kind == "sample_perfect_tile"]
        assert [len(t) for t in tiles] == [4, 4, 2]
        assert all(_product(t) == 64 and t[-1] <= 4 for t in tiles)


def _product(values):
    out = 1
    for v in values:
        out *= v
    return out


def test_conv2d_gets_four_tiles_per_spatial_loop_and_two_per_reduction_loop():
    mod, _ = sp.conv2d()
    space = _spaces(mod, block="conv2d_nchw", reuse_write=None)[0]
    assert len(sp.enclosing_loop_names(space.mod, "conv2d_nchw")) == 4 * 4 + 3 * 2


def test_reuse_options():
    mod, _ = sp.matmul(16)
    assert len(_spaces(mod, reuse_write=None)) == 1
    assert len(_spaces(mod, reuse_write=ReuseType("must", [1, 2], "local"))) == 2
    (local,) = _spaces(mod, reuse_write=ReuseType("must", [2], "local"))
    assert 'scope="local"' in local.mod.script()


def test_blocks_without_data_reuse_are_left_alone():
    mod, _ = sp.softmax()
    sch = Schedule(mod)
    before = sch.mod
    for name in ("T_softmax_maxelem", "T_softmax_exp", "root"):
        (result,) = MultiLevelTiling().apply(sch, sch.get_block(name))
        assert result.mod is before


def test_a_tiled_block_is_not_tiled_again():
    mod, _ = sp.matmul(16)
    space = _spaces(mod, reuse_write=None)[0]
    block = space.get_block("C")
    assert MultiLevelTiling().apply(space, block)[0].mod is space.mod


def test_bad_arguments():
    with pytest.raises(ValueError, match="structure"):
        MultiLevelTiling(structure="SXR")
    with pytest.raises(ValueError, match="tile_binds.*'blockIdx.w'"):
        MultiLevelTiling(tile_binds=["blockIdx.x", "blockIdx.w"])
    with pytest.raises(ValueError, match="req"):
        ReuseType("sometimes", [1], "global")
    with pytest.raises(ValueError, match="pack_vector_operand must be 'no', 'may' or 'must'"):
        MultiLevelTiling(pack_vector_operand="yes")


def test_packing_doubles_or_marks_the_spaces():
    mod, _ = sp.matmul(16)
    marked = [s for s in _spaces(mod, pack_vector_operand="may")
              if "meta_schedule.pack_vector_operand" in s.mod.script()]
    assert len(_spaces(mod, pack_vector_operand="may")) == 6 and len(marked) == 3
    must = _spaces(mod, pack_vector_operand="must")
    assert len(must) == 3
    assert all("meta_schedule.pack_vector_operand" in s.mod.script() for s in must)


def test_packing_needs_an_operand_along_the_output_columns():
    # C[i, j] += A[i, k] * W[j, k] (a dense layer): no read walks j last
    from mlcbench import te
    from mlcbench.ir.module import IRModule
    x, w = te.placeholder((16, 16), name="X"), te.placeholder((16, 16), name="W")
    k = te.reduce_axis((0, 16), name="k")
    y = te.compute((16, 16), lambda i, j: te.sum(x[i, k] * w[j, k], axis=k), name="C")
    mod = IRModule({"main": te.create_prim_func([x, w, y])})
    spaces = _spaces(mod, pack_vector_operand="may")
    assert len(spaces) == 3
    assert not any("pack_vector_operand" in s.mod.script() for s in spaces)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2 ** 16), which=st.integers(0, 2))
def test_random_tilings_of_mm_relu_match_numpy(seed, which):
    mod, reference = sp.mm_relu()
    space = _spaces(mod, block="Y", seed=seed)[which]
    sch = Schedule(mod, seed=seed)
    sp.without_decisions(space.trace).apply_to_schedule(sch)
    sp.check_numeric(sch.mod, reference)
