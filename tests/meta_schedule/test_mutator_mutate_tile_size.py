"""MutateTileSize: one tile-size decision changes, the product stays the loop extent."""
from hypothesis import given, settings, strategies as st

from mlcbench.meta_schedule.mutator import MutateTileSize
from mlcbench.tir import Trace
from helpers import space_testing as sp


def _product(values):
    out = 1
    for v in values:
        out *= v
    return out


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2 ** 16))
def test_one_tile_decision_changes_and_the_program_still_computes_matmul(seed):
    mod, reference = sp.matmul(16)
    trace = sp.sampled_trace(mod, seed, space_index=seed)
    new = MutateTileSize().apply(trace, rand_state=seed)
    assert new is not None
    ((old_inst, new_inst),) = sp.changed_instructions(trace, new)
    assert old_inst.kind == "sample_perfect_tile"
    assert _product(new_inst.decision) == _product(old_inst.decision)
    assert new_inst.decision[-1] <= old_inst.kwargs()["max_innermost_factor"]
    sp.check_numeric(sp.replay_and_postprocess(mod, new).mod, reference)


def test_rand_state_makes_it_deterministic_and_accepts_a_random():
    import random
    mod, _ = sp.matmul(16)
    trace = sp.sampled_trace(mod, 1)
    assert str(MutateTileSize().apply(trace, 5)) == str(MutateTileSize().apply(trace, 5))
    assert MutateTileSize().apply(trace, random.Random(5)) is not None


def test_nothing_to_change_gives_none():
    assert MutateTileSize().apply(Trace([]), 0) is None
    trace = sp.sampled_trace(sp.matmul(1, 1, 1)[0], 0)      # every tile is 1
    assert MutateTileSize().apply(trace, 0) is None


def test_a_later_compute_location_that_no_longer_replays_is_avoided():
    # softmax spaces sample tiles (rfactor splits) before compute locations: with the
    # module known, every returned trace replays
    mod, reference = sp.softmax(cols=32)
    mutator = sp.initialized(MutateTileSize(), mod=mod)
    mutated = 0
    for seed in range(4):
        trace = sp.sampled_trace(mod, seed, space_index=seed)
        new = mutator.apply(trace, rand_state=seed)
        if new is not None:
            sp.check_numeric(sp.replay_and_postprocess(mod, new).mod, reference)
            mutated += 1
    assert mutated
