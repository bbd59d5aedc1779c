"""Design-space generators: PostOrderApply (rules on every block), ScheduleFn, union."""
from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import meta_schedule as ms
from mlcbench.ir import assert_structural_equal
from mlcbench.script import tir as T
from mlcbench.tir import Schedule, Trace
from mlcbench.tir.stmt import For, ForKind
from mlcbench.tir.functor import post_order_visit
from mlcbench.tir.transform import lower
from helpers import space_testing as sp


# The CPU GEMM of benchmarks/matmul_schedule.py as PostOrderApply expresses it on the
# 2-core target: rows of 8 in parallel, columns of 32, an 8 x 32 accumulator written
# back after the whole k loop, 32-lane vectors, inner loops unrolled (up to 512 steps).
@T.prim_func
def fast_gemm(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
              C: T.Buffer((1024, 1024), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    C_global = T.alloc_buffer((1024, 1024))
    for i_0 in T.parallel(128, annotations={"pragma_auto_unroll_max_step": 512,
                                            "pragma_unroll_explicit": 1}):
        for j_0, i_1, j_1 in T.grid(1, 1, 32):
            for i_2_init, j_2_init, i_3_init in T.grid(1, 1, 8):
                for j_3_init in T.vectorized(32):
                    with T.block("C_init"):
                        v_i = T.axis.spatial(1024, i_0 * 8 + i_1 * 8 + i_2_init * 8 + i_3_init)
                        v_j = T.axis.spatial(1024, j_0 * 1024 + j_1 * 32 + j_2_init * 32
                                             + j_3_init)
                        T.reads()
                        T.writes(C_global[v_i, v_j])
                        C_global[v_i, v_j] = T.float32(0)
            for k_0, i_2, j_2, k_1, i_3 in T.grid(1024, 1, 1, 1, 8):
                for j_3 in T.vectorized(32):
                    with T.block("C_update"):
                        v_i = T.axis.spatial(1024, i_0 * 8 + i_1 * 8 + i_2 * 8 + i_3)
                        v_j = T.axis.spatial(1024, j_0 * 1024 + j_1 * 32 + j_2 * 32 + j_3)
                        v_k = T.axis.reduce(1024, k_0 + k_1)
                        T.reads(C_global[v_i, v_j], A[v_i, v_k], B[v_k, v_j])
                        T.writes(C_global[v_i, v_j])
                        T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                        C_global[v_i, v_j] = C_global[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
            for ax0 in range(8):
                for ax1 in T.vectorized(32):
                    with T.block("C_global"):
                        v0 = T.axis.spatial(1024, i_0 * 8 + i_1 * 8 + ax0)
                        v1 = T.axis.spatial(1024, j_0 * 1024 + j_1 * 32 + ax1)
                        T.reads(C_global[v0, v1])
                        T.writes(C[v0, v1])
                        C[v0, v1] = C_global[v0, v1]


MATMUL_SPACE_KINDS = [
    "get_block", "get_block", "annotate", "get_loops",
    "sample_perfect_tile", "split", "sample_perfect_tile", "split",
    "sample_perfect_tile", "split", "reorder",
    "annotate", "annotate", "sample_categorical", "annotate"]


def _kinds(sch):
    return [inst.kind for inst in sch.trace.insts]


def test_matmul_gets_three_spaces_without_and_with_a_write_cache_at_levels_1_and_2():
    mod, _ = sp.matmul(64)
    spaces = sp.post_order_apply(0).generate_design_space(mod)
    # each of the three again marked for packing B (PackVectorOperand)
    assert len(spaces) == 6
    assert _kinds(spaces[0]) == MATMUL_SPACE_KINDS
    cached = MATMUL_SPACE_KINDS[:11] + ["cache_write", "reverse_compute_at"] + \
        MATMUL_SPACE_KINDS[11:]
    assert _kinds(spaces[1]) == cached and _kinds(spaces[2]) == cached
    # level 1 places the write-back under j_0, level 2 under j_1
    for space, loop_name in zip(spaces[1:], ["j_0", "j_1"]):
        assert sp.enclosing_loop_names(space.mod, "C_global")[-3] == loop_name
    for plain, marked in zip(spaces[:3], spaces[3:]):
        kept = [i.kind for i in marked.trace.insts
                if "meta_schedule.pack_vector_operand" not in str(i.attrs)]
        assert kept == _kinds(plain) and len(kept) == len(marked.trace.insts) - 1
        assert "meta_schedule.pack_vector_operand" in marked.mod.script()
        assert "meta_schedule.pack_vector_operand" not in plain.mod.script()


def test_generation_is_deterministic_for_a_seed():
    mod, _ = sp.softmax()
    first = [str(s.trace) for s in sp.post_order_apply(7).generate_design_space(mod)]
    again = [str(s.trace) for s in sp.post_order_apply(7).generate_design_space(mod)]
    assert first == again and len(first) > 1


@pytest.mark.parametrize("name", sorted(sp.WORKLOADS))
def test_design_space_traces_replay_and_round_trip_through_json(name):
    mod, _ = sp.WORKLOADS[name]()
    for space in sp.post_order_apply(1).generate_design_space(mod):
        assert_structural_equal(sp.replay(mod, space.trace).mod, space.mod)
        again = Trace.from_json(space.trace.as_json())
        assert_structural_equal(sp.replay(mod, again).mod, space.mod)


def _gemm_decisions(space, tiles, unroll_index):
    """The space's trace with the tile sizes of i, j, k (in sampling order) and the
    unroll step replaced."""
    tiles = iter(tiles)
    insts = []
    for inst in space.trace.insts:
        if inst.kind == "sample_perfect_tile":
            inst = replace(inst, decision=next(tiles))
        elif inst.kind == "sample_categorical":
            inst = replace(inst, decision=unroll_index)
        insts.append(inst)
    return Trace(insts)


def _find_fast_gemm(n, tiles, packed=False):
    """Among the matmul's design spaces, the one with a write cache under tile level 2
    (marked for packing B or not), replayed with the GEMM decisions and postprocessed."""
    mod, _ = sp.matmul(n)
    generator = sp.post_order_apply(0)
    spaces = generator.generate_design_space(mod)
    level_2 = [s for s in spaces if "reverse_compute_at" in _kinds(s)
               and ("pack_vector_operand" in s.mod.script()) == packed][-1]
    unroll = [i for i in level_2.trace.insts if i.kind == "sample_categorical"][0]
    steps = unroll.kwargs()["candidates"]
    sch = sp.replay(mod, _gemm_decisions(level_2, tiles, steps.index(512)))
    assert ms.postproc.apply_postprocs(sch, generator.postprocs)
    return mod, sch


def test_post_order_apply_expresses_the_fast_cpu_gemm():
    _, sch = _find_fast_gemm(1024, [[128, 1, 1, 8], [1, 32, 1, 32], [1024, 1]])
    assert_structural_equal(sch.mod["main"], fast_gemm)
    lowered = lower(sch.mod)["main"]
    k_loops = []
    post_order_visit(lowered.body, lambda n: k_loops.append(n) if isinstance(n, For)
                     and n.loop_var.name == "k_0" else None)
    (k_loop,) = k_loops
    stores = list(k_loop.body.seq)      # the unrolled 8 x 32 tile: 8 vector FMAs
    assert len(stores) == 8
    assert all(s.value.dtype.lanes == 32 and s.buffer.name == "C_global" for s in stores)
    parallel = []
    post_order_visit(lowered.body, lambda n: parallel.append(n) if isinstance(n, For)
                     and n.kind == ForKind.PARALLEL else None)
    assert [p.loop_var.name for p in parallel] == ["i_0"]


def test_the_gemm_decisions_compute_a_matmul():
    mod, sch = _find_fast_gemm(64, [[8, 1, 1, 8], [1, 2, 1, 32], [64, 1]])
    sp.check_numeric(sch.mod, lambda a, b: a @ b)


def test_the_packed_gemm_reads_b_in_panels_of_the_register_tile_width():
    mod, sch = _find_fast_gemm(64, [[8, 1, 1, 8], [1, 2, 1, 32], [64, 1]], packed=True)
    panel = sch.get(sch.get_block("B_global")).writes[0].buffer
    assert [int(d.value) for d in panel.shape] == [2, 64, 32]
    update = sch.get(sch.get_block("C_update"))
    assert panel.same_as(update.reads[-1].buffer)
    sp.check_numeric(sch.mod, lambda a, b: a @ b)


def _check_sampled_program(name, seed):
    mod, reference = sp.WORKLOADS[name]()
    generator = sp.post_order_apply(seed)
    spaces = generator.generate_design_space(mod)
    space = spaces[seed % len(spaces)]
    sch = sp.sample(mod, space, seed, generator.postprocs)
    sp.check_numeric(sch.mod, reference)


@pytest.mark.parametrize("name", ["matmul", "mm_relu", "softmax", "layer_norm"])
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2 ** 16))
def test_random_programs_of_the_spaces_match_numpy(name, seed):
    _check_sampled_program(name, seed)


@settings(max_examples=2, deadline=None)      # few: generating a conv2d space takes seconds
@given(seed=st.integers(0, 2 ** 16))
def test_random_conv2d_programs_match_numpy(seed):
    _check_sampled_program("conv2d", seed)


# -- ScheduleFn, union, create ------------------------------------------------------------
def _split_j(sch):
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.split(j, factors=sch.sample_perfect_tile(j, n=2))


def test_schedule_fn_in_place_returned_or_a_list():
    mod, reference = sp.matmul(16)
    (in_place,) = ms.ScheduleFn(_split_j).generate_design_space(mod)
    assert _kinds(in_place)[-2:] == ["sample_perfect_tile", "split"]
    sp.check_numeric(in_place.mod, reference)

    def two(sch):
        other = sch.copy()
        _split_j(other)
        return [sch, other]
    spaces = ms.ScheduleFn(two).generate_design_space(mod["main"])
    assert len(spaces) == 2 and _kinds(spaces[0]) == []
    (returned,) = ms.ScheduleFn(lambda sch: (_split_j(sch), sch)[1]).generate_design_space(mod)
    assert "split" in _kinds(returned)


def test_schedule_fn_rejects_other_results():
    with pytest.raises(TypeError, match="Schedule"):
        ms.ScheduleFn(lambda sch: [1, 2]).generate_design_space(sp.matmul()[0])
    with pytest.raises(TypeError, match="function"):
        ms.ScheduleFn(3)


def test_union_concatenates_the_spaces():
    mod, _ = sp.matmul(16)
    union = ms.SpaceGeneratorUnion([ms.ScheduleFn(_split_j), sp.post_order_apply(0)])
    sp.initialized(union)
    spaces = union.generate_design_space(mod)
    assert len(spaces) == 1 + 6 and "split" in _kinds(spaces[0])
    assert all(isinstance(s, Schedule) for s in spaces)


def test_create_and_from_target_defaults():
    assert isinstance(ms.SpaceGenerator.create("post-order-apply"), ms.PostOrderApply)
    assert isinstance(ms.SpaceGenerator.create(_split_j), ms.ScheduleFn)
    with pytest.raises(ValueError, match="post-order-apply"):
        ms.SpaceGenerator.create("evolve")
    generator = sp.post_order_apply(0)
    names = [type(r).__name__ for r in generator.sch_rules]
    assert names == ["AutoInline", "AddRFactor", "MultiLevelTiling",
                     "ParallelizeVectorizeUnroll", "RandomComputeLocation"]
    assert [type(p).__name__ for p in generator.postprocs] == [
        "DisallowDynamicLoop", "RewriteParallelVectorizeUnroll", "PackVectorOperand",
        "RewriteReductionBlock"]
    assert abs(sum(generator.mutator_probs.values()) - 1.0) < 1e-9
    # the 2-core target of the context sets the parallel limit: 16 jobs per core
    space = generator.generate_design_space(sp.matmul(16)[0])[0]
    limits = [i.kwargs()["ann_val"] for i in space.trace.insts
              if i.kind == "annotate" and i.kwargs()["ann_key"] == "meta_schedule.parallel"]
    assert limits == [32]


def test_block_filter_and_custom_rule_annotation_skip_blocks():
    mod, _ = sp.matmul(16)
    generator = ms.PostOrderApply(f_block_filter=lambda block: block.name_hint != "C")
    sp.initialized(generator)
    assert len(generator.generate_design_space(mod)) == 1
    sch = Schedule(mod)
    sch.annotate(sch.get_block("C"), "schedule_rule", "mine")
    assert len(sp.post_order_apply(0).generate_design_space(sch.mod)) == 1
