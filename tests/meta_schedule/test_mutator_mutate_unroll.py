"""MutateUnroll: the unroll step of the root block is drawn again."""
from hypothesis import given, settings, strategies as st

from mlcbench.meta_schedule.mutator import MutateUnroll
from mlcbench.tir.stmt import For
from mlcbench.tir.functor import post_order_visit
from helpers import space_testing as sp


def _unroll_steps(sch):
    steps = set()
    post_order_visit(sch.mod["main"].body, lambda n: steps.add(
        n.annotations.get("pragma_auto_unroll_max_step")) if isinstance(n, For) else None)
    return steps - {None}


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2 ** 16))
def test_the_unroll_step_changes_and_the_program_follows(seed):
    mod, reference = sp.mm_relu()
    trace = sp.sampled_trace(mod, seed, space_index=seed)
    new = MutateUnroll().apply(trace, rand_state=seed)
    ((old_inst, new_inst),) = sp.changed_instructions(trace, new)
    assert old_inst.kind == "sample_categorical" and old_inst.decision != new_inst.decision
    step = new_inst.kwargs()["candidates"][new_inst.decision]
    sch = sp.replay_and_postprocess(mod, new)
    assert _unroll_steps(sch) == ({step} if step else set())
    sp.check_numeric(sch.mod, reference)


def test_traces_without_an_unroll_step_give_none():
    from mlcbench.meta_schedule.schedule_rule import ParallelizeVectorizeUnroll
    from mlcbench.tir import Schedule
    mod, _ = sp.matmul(8)
    sch = Schedule(mod)
    rule = ParallelizeVectorizeUnroll(unroll_max_steps=[])
    (sch,) = sp.initialized(rule).apply(sch, sch.get_block("root"))
    assert MutateUnroll().apply(sch.trace, 0) is None
