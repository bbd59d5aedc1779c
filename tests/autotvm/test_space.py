"""Config spaces: knob candidates, indexing, printing, errors."""
import pytest

from mlcbench.autotvm.task.space import ConfigEntity, ConfigSpace, split_candidates
from mlcbench.ir.errors import TuningError


def test_split_policies():
    assert split_candidates(8, 2, "factors", 1 << 31) == [[-1, 1], [-1, 2], [-1, 4], [-1, 8]]
    assert [s[1] for s in split_candidates(12, 2, "power2", 1 << 31)] == [1, 2, 4, 8]
    assert [s[1] for s in split_candidates(12, 2, "verbose", 4)] == [1, 2, 3, 4]
    assert all(16 % (a * b) == 0 for _, a, b in split_candidates(16, 3, "factors", 1 << 31))
    with pytest.raises(TuningError, match="policy must be one of"):
        split_candidates(8, 2, "random", 8)


def test_index_picks_first_knob_fastest_and_prints_like_tvm():
    space = ConfigSpace()
    space.define_split("tile", 16, num_outputs=2)
    space.define_knob("unroll", [0, 1])
    assert len(space) == 10
    config = space.get(6)
    assert config["tile"].size == [-1, 2] and config["unroll"].val == 1
    assert str(config) == "[('tile', [-1, 2]), ('unroll', 1)],None,6"
    assert space.knob2point(space.point2knob(7)) == 7
    assert "tile: Split(policy=factors, product=16, num_outputs=2) len=5" in repr(space)


def test_entity_json_round_trip_and_unknown_knob():
    space = ConfigSpace()
    space.define_split("tile", 8, num_outputs=3)
    space.define_reorder("order", ["a", "b"], policy="all")
    space.define_annotate("ann", ["a"], policy="try_vec")
    config = space.get(len(space) - 1)
    again = ConfigEntity.from_json_dict(config.to_json_dict())
    assert again == config and again.index == config.index
    with pytest.raises(TuningError, match="no knob 'tile_z'"):
        config["tile_z"]
    with pytest.raises(TuningError, match="outside the space"):
        space.get(len(space))
