"""GPU design spaces: the CUDA schedule rules, postprocessors and mutators, checked on
the programs they make (thread extents within the target's limits, shared and local
scopes where the course's hand schedule puts them)."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlcbench import meta_schedule as ms
from mlcbench import te
from mlcbench.ir.errors import InvalidValueError
from mlcbench.ir.module import IRModule
from mlcbench.meta_schedule.gpu_target import gpu_limits, thread_tag
from mlcbench.meta_schedule.gpu_tile_sampler import gpu_seed_point
from mlcbench.meta_schedule.mutator import MutateThreadBinding
from mlcbench.meta_schedule.postproc import VerifyGPUCode, apply_postprocs
from mlcbench.meta_schedule.search_strategy import replay_with_new_decisions
from mlcbench.script import tir as T
from mlcbench.target import Target
from mlcbench.tir import Schedule
from mlcbench.tir.schedule.ir_utils import walk
from mlcbench.tir.stmt import BlockRealize, For

from helpers.space_testing import matmul

GPU = Target("nvidia/geforce-rtx-2080-ti")


def _vector_add(n):
    a, b = te.placeholder((n,), name="A"), te.placeholder((n,), name="B")
    c = te.compute((n,), lambda i: a[i] + b[i], name="C")
    return IRModule({"main": te.create_prim_func([a, b, c])})


def _generator(mod, target=GPU, seed=0):
    class Context:
        rand_state = seed
    Context.target, Context.mod = target, mod
    generator = ms.space_generator.PostOrderApply()
    generator._initialize_with_tune_context(Context())
    return generator


def _sampled(mod, seed, target=GPU):
    """A finished program of ``mod``'s first design space, as the search samples it."""
    generator = _generator(mod, target, seed)
    space = generator.generate_design_space(mod)[0]
    sch = replay_with_new_decisions(mod, space.trace, seed + 1, generator)
    return sch, apply_postprocs(sch, generator.postprocs), generator


def _blocks(sch):
    """``{block name: (block, [enclosing For loops])}``."""
    out = {}
    walk(sch.mod["main"].body, lambda n, ps: out.__setitem__(
        n.block.name_hint, (n.block, [p for p in ps if isinstance(p, For)]))
        if isinstance(n, BlockRealize) else None)
    return out


def _threads(loops, prefix="threadIdx"):
    return math.prod(lp.extent.value for lp in loops if (thread_tag(lp) or "").startswith(prefix))


def test_defaults_are_chosen_by_target_kind():
    rules = [type(r).__name__ for r in ms.ScheduleRule.create("nvidia/geforce-rtx-2080-ti")]
    assert rules == ["AutoInline", "MultiLevelTiling", "AutoInline",
                     "ParallelizeVectorizeUnroll", "AutoBind"]
    assert [type(r).__name__ for r in ms.ScheduleRule.create("cuda")] == rules
    assert "VerifyGPUCode" in [type(p).__name__ for p in ms.Postproc.create(GPU)]
    assert "MutateThreadBinding" in [type(m).__name__ for m in ms.Mutator.create("cuda")]
    assert "AddRFactor" in [type(r).__name__ for r in ms.ScheduleRule.create("llvm")]
    with pytest.raises(InvalidValueError, match="target kind 'opencl'"):
        ms.ScheduleRule.create("opencl")


def test_matmul_space_binds_tiles_and_stages_inputs_in_shared_memory():
    mod, _ = matmul(1024)
    (space,) = _generator(mod).generate_design_space(mod)
    blocks = _blocks(space)
    block, loops = blocks["C"]
    assert [thread_tag(lp) for lp in loops[:3]] == ["blockIdx.x", "vthread.x", "threadIdx.x"]
    assert block.annotations["meta_schedule.tiling_structure"] == "SSSRRSRS"
    for cache in ("A_shared", "B_shared"):
        assert blocks[cache][0].writes[0].buffer.scope == "shared"
        assert "meta_schedule.cooperative_fetch" in blocks[cache][0].annotations
    assert blocks["C_local"][0].reads[0].buffer.scope == "local"


@settings(max_examples=8, deadline=None)
@given(n=st.sampled_from([32, 64, 96, 128, 256]), m=st.sampled_from([32, 64, 128]),
       k=st.sampled_from([16, 64, 128]), seed=st.integers(0, 1000))
def test_sampled_matmuls_launch_within_the_limits(n, m, k, seed):
    mod, _ = matmul(n, m, k)
    sch, ok, _ = _sampled(mod, seed)
    assert ok
    blocks, limits = _blocks(sch), gpu_limits(GPU)
    threads = _threads(blocks["C_update"][1])
    assert 32 <= threads <= limits.max_threads_per_block
    assert _threads(blocks["C_update"][1], "vthread") <= limits.max_vthread
    for cache in ("A_shared", "B_shared"):
        block, loops = blocks[cache]
        assert block.writes[0].buffer.scope == "shared"
        assert "meta_schedule.cooperative_fetch" not in block.annotations
        # the copy is shared by the block's threads: a threadIdx.x loop of the same count
        assert [lp.extent.value for lp in loops if thread_tag(lp) == "threadIdx.x"] == \
            [threads, threads]


@settings(max_examples=6, deadline=None)
@given(n=st.sampled_from([100, 1024, 4096, 1 << 20]), seed=st.integers(0, 1000))
def test_elementwise_blocks_get_bound_by_auto_bind(n, seed):
    mod = _vector_add(n)
    sch, ok, _ = _sampled(mod, seed)
    assert ok
    _, loops = _blocks(sch)["C"]
    tags = [thread_tag(lp) for lp in loops]
    assert tags[:2] == ["blockIdx.x", "threadIdx.x"]
    assert loops[1].extent.value in (32, 64, 128, 256, 512, 1024)
    assert math.prod(lp.extent.value for lp in loops) >= n


def test_seed_point_is_the_course_hand_schedule():
    mod, _ = matmul(1024)
    generator = _generator(mod)
    (space,) = generator.generate_design_space(mod)
    seed = gpu_seed_point(mod, space, GPU)
    assert apply_postprocs(seed, generator.postprocs)
    blocks = _blocks(seed)
    assert _threads(blocks["C_update"][1]) == 64
    assert [lp.extent.value for lp in blocks["C_local"][1][-2:]] == [8, 8]
    vector_loops = [lp for lp in blocks["A_shared"][1] if lp.kind.name == "VECTORIZED"]
    assert [lp.extent.value for lp in vector_loops] == [4]
    exact = VerifyGPUCode(lower=True)       # lowered, as the builder will
    exact._initialize_with_tune_context(type("Context", (), {"target": GPU})())
    assert exact.apply(seed), exact.last_error


@T.prim_func
def _too_many_threads(A: T.Buffer((4096,), "float32")):
    for i in T.thread_binding(2, thread="blockIdx.x"):
        for j in T.thread_binding(2048, thread="threadIdx.x"):
            with T.block("A"):
                vi = T.axis.spatial(4096, i * 2048 + j)
                A[vi] = T.float32(1)


@T.prim_func
def _too_much_shared(A: T.Buffer((64, 1024), "float32"), B: T.Buffer((64, 1024), "float32")):
    S = T.alloc_buffer((64, 1024), scope="shared")
    for i in T.thread_binding(1, thread="blockIdx.x"):
        for t in T.thread_binding(64, thread="threadIdx.x"):
            for j in range(1024):
                with T.block("S"):
                    vi, vj = T.axis.remap("SS", [t, j])
                    S[vi, vj] = A[vi, vj]
            for j in range(1024):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [t, j])
                    B[vi, vj] = S[vi, vj]


@pytest.mark.parametrize("func, message", [
    (_too_many_threads, "threads per block 2048 exceed max_threads_per_block=1024"),
    (_too_much_shared, "shared memory 262144 bytes .* max_shared_memory_per_block=49152"),
])
def test_verify_gpu_code_names_the_broken_limit(func, message):
    verify = ms.postproc.VerifyGPUCode()
    verify._initialize_with_tune_context(type("Context", (), {"target": GPU})())
    assert not verify.apply(Schedule(func))
    assert verify.last_error is not None
    import re
    assert re.search(message, verify.last_error), verify.last_error


def test_rewrite_unbound_block_binds_what_no_rule_bound():
    sch = Schedule(_vector_add(3000))
    postproc = ms.postproc.RewriteUnboundBlock()
    postproc._initialize_with_tune_context(type("Context", (), {"target": GPU})())
    assert postproc.apply(sch)
    loops = _blocks(sch)["C"][1]
    assert [thread_tag(lp) for lp in loops] == ["blockIdx.x", "threadIdx.x"]
    assert loops[1].extent.value == 1024
    assert VerifyGPUCode().apply(sch)


def test_mutate_thread_binding_changes_the_thread_count():
    mod = _vector_add(1 << 16)
    sch, ok, _ = _sampled(mod, 3)
    assert ok
    mutated = MutateThreadBinding().apply(sch.trace, rand_state=0)
    assert mutated is not None
    before = [i.decision for i in sch.trace.insts if i.kind == "sample_categorical"]
    after = [i.decision for i in mutated.insts if i.kind == "sample_categorical"]
    assert before != after
