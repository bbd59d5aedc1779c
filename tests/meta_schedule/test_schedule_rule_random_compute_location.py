"""RandomComputeLocation: a producer moves to a sampled legal loop of its consumer."""
from hypothesis import given, settings, strategies as st

from mlcbench.meta_schedule.schedule_rule import MultiLevelTiling, RandomComputeLocation
from mlcbench.tir import Schedule
from mlcbench.tir.schedule.facade_location import location_candidates
from helpers import space_testing as sp


def _apply(mod, name, seed=0):
    sch = Schedule(mod, seed=seed)
    (result,) = RandomComputeLocation().apply(sch, sch.get_block(name))
    return result


def test_softmax_max_is_computed_at_a_sampled_location():
    mod, _ = sp.softmax()
    sch = _apply(mod, "T_softmax_maxelem")
    kinds = [i.kind for i in sch.trace.insts]
    assert kinds[-2:] == ["sample_compute_location", "compute_at"]


def test_every_legal_location_computes_softmax():
    mod, reference = sp.softmax()
    space = _apply(mod, "T_softmax_maxelem")
    sample = [i for i in space.trace.insts if i.kind == "sample_compute_location"][0]
    loops, can_inline = location_candidates(mod["main"], "T_softmax_maxelem")
    choices = list(range(len(loops))) + [-1] + ([-2] if can_inline else [])
    assert len(choices) >= 3          # the exp loops i0, i1 and the root
    programs = set()
    for decision in choices:
        sch = sp.replay(mod, space.trace.with_decision(sample, decision))
        sp.check_numeric(sch.mod, reference)
        programs.add(sch.mod.script())
    assert len(programs) == len(choices)


def test_blocks_that_stay():
    mod, _ = sp.softmax()
    sch = Schedule(mod)
    before = sch.mod
    # the output block has no consumer; the root is not a producer
    for name in ("T_softmax_norm", "root"):
        assert RandomComputeLocation().apply(sch, sch.get_block(name))[0].mod is before
    mod, _ = sp.mm_relu()
    sch = Schedule(mod)
    (tiled,) = MultiLevelTiling(reuse_write=None).apply(sch, sch.get_block("Y"))
    assert RandomComputeLocation().apply(tiled, tiled.get_block("Y"))[0].mod is tiled.mod


def test_producers_of_an_annotated_block_move_too():
    mod, _ = sp.softmax()
    sch = Schedule(mod, seed=5)          # a seed that leaves exp a block of its own
    sch.annotate(sch.get_block("T_softmax_exp"), "meta_schedule.random_compute_producer", 1)
    (result,) = RandomComputeLocation().apply(sch, sch.get_block("T_softmax_exp"))
    samples = [i for i in result.trace.insts if i.kind == "sample_compute_location"]
    assert len(samples) == 2           # exp itself, then its producer, the max
    exp = result.get(result.get_block("T_softmax_exp"))
    assert "meta_schedule.random_compute_producer" not in exp.annotations


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2 ** 16))
def test_random_locations_in_layer_norm_match_numpy(seed):
    mod, reference = sp.layer_norm()
    sch = _apply(mod, "T_layer_norm_red_temp", seed)
    sp.check_numeric(sch.mod, reference)
    assert sp.replay(mod, sch.trace).mod.script() == sch.mod.script()
