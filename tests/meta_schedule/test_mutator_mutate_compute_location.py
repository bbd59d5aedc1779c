"""MutateComputeLocation: a block moves to another location legal at that point."""
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench.meta_schedule.mutator import MutateComputeLocation
from helpers import space_testing as sp


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2 ** 16))
def test_a_location_changes_and_the_program_still_computes_softmax(seed):
    mod, reference = sp.softmax()
    trace = sp.sampled_trace(mod, seed, space_index=seed)
    mutator = sp.initialized(MutateComputeLocation(), mod=mod)
    new = mutator.apply(trace, rand_state=seed)
    ((old_inst, new_inst),) = sp.changed_instructions(trace, new)
    assert old_inst.kind == "sample_compute_location"
    assert old_inst.decision != new_inst.decision
    sp.check_numeric(sp.replay_and_postprocess(mod, new).mod, reference)


def test_the_module_is_needed_and_traces_without_locations_give_none():
    mod, _ = sp.softmax()
    trace = sp.sampled_trace(mod, 0)
    with pytest.raises(ValueError, match="module"):
        MutateComputeLocation().apply(trace, 0)
    matmul, _ = sp.matmul(8)
    assert MutateComputeLocation(mod=matmul).apply(sp.sampled_trace(matmul, 0), 0) is None
