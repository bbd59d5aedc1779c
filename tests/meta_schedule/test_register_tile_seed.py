"""The register-tile point of each design space: the default schedule's tile sizes as
decisions of the template-free space, measured in the search's first round."""
import pytest
from hypothesis import given, settings, strategies as st

from mlcbench import meta_schedule as ms
from mlcbench.driver.kernels import register_tile
from mlcbench.ir import structural_hash
from mlcbench.meta_schedule.register_tile_seed import SEED_UNROLL_STEP, register_tile_point
from mlcbench.tir.stmt import ForKind
from helpers import space_testing as sp
from helpers.tuning_testing import FakeMeasurer

ROWS, COLS = register_tile(sp.TARGET)


def _tiles(sch_or_record):
    return [i.decision for i in sch_or_record.trace.insts if i.kind == "sample_perfect_tile"]


def _unroll(sch):
    (inst,) = [i for i in sch.trace.insts if i.kind == "sample_categorical"]
    return inst.kwargs()["candidates"][inst.decision]


def test_every_matmul_space_gets_the_register_tile():
    mod, reference = sp.matmul(256)
    generator = sp.post_order_apply(0)
    spaces = generator.generate_design_space(mod)
    seeds = generator.seed_schedules(mod, spaces)
    assert len(seeds) == len(spaces) == 6
    for seed in seeds:
        # i, j: the register tile innermost, the rest outermost; k: inside the outer tiles
        assert _tiles(seed) == [[256 // ROWS, 1, 1, ROWS], [256 // COLS, 1, 1, COLS],
                                [4, 64]]
        assert _unroll(seed) == SEED_UNROLL_STEP
    packed = seeds[-1]          # write cache under tile level 2, B packed
    assert ms.postproc.apply_postprocs(packed, generator.postprocs)
    panel = packed.get(packed.get_block("B_global")).writes[0].buffer
    assert [int(d.value) for d in panel.shape] == [256 // COLS, 256, COLS]
    loops = [packed.get(lp) for lp in packed.get_loops(packed.get_block("C_update"))]
    assert loops[0].kind == ForKind.PARALLEL
    assert [lp.extent.value for lp in loops[-2:]] == [ROWS, COLS]
    assert loops[-1].kind == ForKind.VECTORIZED
    sp.check_numeric(packed.mod, reference)


@settings(max_examples=10, deadline=None)
@given(shape=st.tuples(st.integers(1, 40), st.integers(1, 40), st.integers(1, 24)),
       space=st.integers(0, 5))
def test_seeds_of_any_shape_are_perfect_tilings_that_compute_the_matmul(shape, space):
    n, m, k = shape
    mod, reference = sp.matmul(n, m, k)
    generator = sp.post_order_apply(0)
    spaces = generator.generate_design_space(mod)
    seeds = generator.seed_schedules(mod, spaces)
    if not seeds:       # tiny extents: no block needs multi-level tiling
        assert not any("sample_perfect_tile" in str(s.trace) for s in spaces)
        return
    seed = seeds[space % len(seeds)]
    for tiles, extent in zip(_tiles(seed), (n, m, k)):
        product = 1
        for t in tiles:
            product *= t
        assert product == extent and tiles[-1] <= 64
    assert ms.postproc.apply_postprocs(seed, generator.postprocs)
    sp.check_numeric(seed.mod, reference)


def test_a_convolution_space_is_seeded_too():
    mod, reference = sp.conv2d(channels=4, filters=16, size=8)
    generator = sp.post_order_apply(0)
    spaces = generator.generate_design_space(mod)
    seeds = generator.seed_schedules(mod, spaces[:1])
    assert len(seeds) == 1
    tiles = _tiles(seeds[0])
    assert all(t[1:-1] == [1] * (len(t) - 2) for t in tiles)
    assert ms.postproc.apply_postprocs(seeds[0], generator.postprocs)
    sp.check_numeric(seeds[0].mod, reference)


def test_nothing_to_seed_without_a_tiled_block():
    mod, _ = sp.softmax()
    generator = sp.post_order_apply(0)
    spaces = generator.generate_design_space(mod)
    assert generator.seed_schedules(mod, spaces) == []
    assert register_tile_point(mod, spaces[0], sp.TARGET) is None


def test_tuning_measures_the_default_then_the_seeds(tmp_path):
    mod, _ = sp.matmul(64)
    measurer = FakeMeasurer()
    database = ms.tune_tir(mod, sp.TARGET, str(tmp_path), 10, num_trials_per_iter=10,
                           strategy="replay-trace", cost_model="random", seed=0,
                           builder=measurer.builder, runner=measurer.runner,
                           progress_bar=False)
    records = database.get_all_tuning_records()
    assert "sample_perfect_tile" not in str(records[0].trace)      # the default schedule
    want = [[64 // ROWS, 1, 1, ROWS], [64 // COLS, 1, 1, COLS], [1, 64]]
    assert all(_tiles(r) == want for r in records[1:7])       # one per space
    assert _tiles(records[7]) != want                          # then the search
    assert len({structural_hash(r.as_schedule().mod) for r in records}) == 10


@pytest.mark.parametrize("space", [ms.PostOrderApply(measure_default=False),
                                   ms.ScheduleFn(lambda sch: sch)])
def test_no_seeds_when_asked_or_for_hand_written_spaces(space):
    mod, _ = sp.matmul(64)
    generator = sp.initialized(space)
    assert generator.seed_schedules(mod, generator.generate_design_space(mod)) == []
