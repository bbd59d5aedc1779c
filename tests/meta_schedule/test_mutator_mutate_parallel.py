"""MutateParallel: a different number of outer loops runs in parallel."""
from dataclasses import replace

from hypothesis import given, settings, strategies as st

from mlcbench.meta_schedule.mutator import Mutator, MutateParallel
from mlcbench.tir import Trace
from mlcbench.tir.stmt import For, ForKind
from mlcbench.tir.functor import post_order_visit
from helpers import space_testing as sp


def _parallel_extents(sch):
    out = []
    post_order_visit(sch.mod["main"].body, lambda n: out.append(n.extent.value) if isinstance(
        n, For) and n.kind == ForKind.PARALLEL else None)
    return out


def _matmul_trace(seed):
    """A sampled 64^3 matmul whose outer tiles are 2 x 4 x 2 x ...: several plans."""
    mod, reference = sp.matmul(64)
    trace = sp.sampled_trace(mod, seed)
    tiles = iter([[2, 4, 2, 4], [2, 2, 2, 8], [8, 8]])
    insts = [replace(i, decision=next(tiles)) if i.kind == "sample_perfect_tile" else i
             for i in trace.insts]
    return mod, reference, Trace(insts)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2 ** 16))
def test_the_parallel_loop_changes_and_the_program_still_computes_matmul(seed):
    mod, reference, trace = _matmul_trace(seed)
    mutator = sp.initialized(MutateParallel(max_jobs_per_core=16), mod=mod)
    new = mutator.apply(trace, rand_state=seed)
    ((old_inst, new_inst),) = sp.changed_instructions(trace, new)
    assert old_inst.kind == "annotate"
    assert new_inst.kwargs()["ann_val"] < old_inst.kwargs()["ann_val"] == 32
    before = sp.replay_and_postprocess(mod, trace)
    after = sp.replay_and_postprocess(mod, new)    # postprocessing reads the new limit
    assert _parallel_extents(before) != _parallel_extents(after)
    sp.check_numeric(after.mod, reference)


def test_a_single_plan_gives_none():
    mod, _ = sp.matmul(8)
    trace = sp.sampled_trace(mod, 0)
    tiles = iter([[1, 1, 1, 8], [1, 1, 1, 8], [8, 1]])
    trace = Trace([replace(i, decision=next(tiles)) if i.kind == "sample_perfect_tile"
                   else i for i in trace.insts])
    assert sp.initialized(MutateParallel(), mod=mod).apply(trace, 0) is None


def test_mutator_create_gives_the_cpu_probabilities():
    probs = {type(m).__name__: p for m, p in Mutator.create("llvm").items()}
    assert probs == {"MutateTileSize": 0.9, "MutateComputeLocation": 0.05,
                     "MutateUnroll": 0.03, "MutateParallel": 0.02}
