"""PackVectorOperand: the operand the vector loop walks is copied into panels as wide as
the innermost spatial tiles, read off the final loop nest."""

import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import meta_schedule as ms
from mlcbench.ir import assert_structural_equal
from mlcbench.meta_schedule.postproc.pack_vector_operand import PACK_ANNOTATION
from mlcbench.meta_schedule.schedule_rule import MultiLevelTiling
from mlcbench.script import tir as T
from mlcbench.tir import Schedule
from helpers import space_testing as sp


@T.prim_func
def packed(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
           C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    B_global = T.alloc_buffer((4, 16, 4))
    for ax1_0, ax0 in T.grid(4, 16):
        for ax1_1 in T.vectorized(4):
            with T.block("B_global"):
                v0 = T.axis.spatial(16, ax0)
                v1 = T.axis.spatial(16, ax1_0 * 4 + ax1_1)
                T.reads(B[v0, v1])
                T.writes(B_global[v1 // 4, v0, v1 % 4])
                B_global[v1 // 4, v0, v1 % 4] = B[v0, v1]
    for i_0, j_0, i_1, j_1, k_0, i_2, j_2, k_1, i_3, j_3 in T.grid(1, 2, 2, 1, 4, 2, 2, 4,
                                                                    4, 4):
        with T.block("C"):
            v_i = T.axis.spatial(16, i_0 * 16 + i_1 * 8 + i_2 * 4 + i_3)
            v_j = T.axis.spatial(16, j_0 * 8 + j_1 * 8 + j_2 * 4 + j_3)
            v_k = T.axis.reduce(16, k_0 * 4 + k_1)
            T.reads(A[v_i, v_k], B_global[v_j // 4, v_k, v_j % 4])
            T.writes(C[v_i, v_j])
            T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B_global[v_j // 4, v_k, v_j % 4]


def _marked_space(mod, tiles, reuse_write=None):
    """The tiled matmul marked for packing, with the given tile sizes."""
    sch = Schedule(mod, seed=0)
    (space,) = MultiLevelTiling(reuse_write=reuse_write, pack_vector_operand="must").apply(
        sch, sch.get_block("C"))
    return sp.with_tiles(mod, space, tiles)


def test_panels_are_as_wide_as_the_innermost_column_tile():
    mod, reference = sp.matmul(16)
    sch = _marked_space(mod, [[1, 2, 2, 4], [2, 1, 2, 4], [4, 4]])
    assert ms.postproc.PackVectorOperand().apply(sch)
    assert_structural_equal(sch.mod["main"], packed)
    sp.check_numeric(sch.mod, reference)
    # the trace replays the packing from the unscheduled function
    assert_structural_equal(sp.replay(mod, sch.trace).mod["main"], packed)


def test_a_panel_spans_every_column_loop_inside_the_reduction():
    mod, reference = sp.matmul(32)
    # j_2 = 2, j_3 = 4 both inside k_1: panels 8 wide
    sch = _marked_space(mod, [[2, 2, 2, 4], [2, 2, 2, 4], [8, 4]])
    sch.reorder(*sch.get_loops(sch.get_block("C"))[6:8][::-1])     # k_1 above j_2
    assert ms.postproc.PackVectorOperand().apply(sch)
    assert sch.get(sch.get_block("B_global")).writes[0].buffer.shape[-1].value == 8
    sp.check_numeric(sch.mod, reference)


@pytest.mark.parametrize("tiles, why", [
    ([[1, 1, 4, 4], [1, 1, 4, 4], [4, 4]], "k innermost"),
    ([[1, 2, 2, 4], [1, 1, 1, 16], [4, 4]], "panel is the whole row"),
])
def test_nothing_to_pack_leaves_the_program_as_it_was(tiles, why):
    mod, _ = sp.matmul(16)
    sch = _marked_space(mod, tiles)
    if why == "k innermost":
        loops = sch.get_loops(sch.get_block("C"))
        sch.reorder(loops[-1], loops[-3])
    assert ms.postproc.PackVectorOperand().apply(sch)
    script = sch.mod.script()
    assert "B_global" not in script and PACK_ANNOTATION not in script, why
    assert "B[v_k, v_j]" in script


def test_unmarked_blocks_are_not_packed():
    mod, _ = sp.matmul(16)
    sch = Schedule(mod, seed=0)
    MultiLevelTiling(reuse_write=None).apply(sch, sch.get_block("C"))
    before = sch.mod
    assert ms.postproc.PackVectorOperand().apply(sch)
    assert sch.mod is before


def test_the_default_postprocessors_pack_after_parallelizing():
    kinds = [type(p).__name__ for p in ms.postproc.Postproc.create("llvm")]
    assert kinds.index("PackVectorOperand") == kinds.index("RewriteParallelVectorizeUnroll") + 1


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2 ** 16), shape=st.sampled_from([(16, 16, 16), (32, 24, 8),
                                                            (8, 48, 16), (24, 32, 12)]))
def test_packed_samples_of_the_default_space_match_numpy(seed, shape):
    n, m, k = shape
    mod, reference = sp.matmul(n, m, k)
    generator = sp.post_order_apply(seed)
    spaces = [s for s in generator.generate_design_space(mod) if PACK_ANNOTATION in s.mod.script()]
    assert len(spaces) == 3            # no write cache, cache at level 1, at level 2
    sch = sp.sample(mod, spaces[seed % 3], seed, generator.postprocs)
    script = sch.mod.script()
    assert PACK_ANNOTATION not in script
    loops = sch.get_loops(sch.get_block("C_update" if "C_update" in script else "C"))
    inner_j = sch.get(loops[-1]).extent.value
    if "B_global" in script:
        panel = sch.get(sch.get_block("B_global")).writes[0].buffer.shape
        assert panel[-1].value % inner_j == 0 and m % panel[-1].value == 0
        assert "B[v_k, v_j]" not in script
    sp.check_numeric(sch.mod, reference)
