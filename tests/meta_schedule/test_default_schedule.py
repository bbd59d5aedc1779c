"""The default schedule as the first candidate of template-free tuning."""
import numpy as np
import pytest

import mlcbench
from mlcbench import IRModule, dlight, meta_schedule as ms, te, topi
from mlcbench.ir import assert_structural_equal, structural_hash
from mlcbench.meta_schedule.default_schedule import default_schedule
from mlcbench.target import Target
from mlcbench.tir import Schedule
from helpers.tuning_testing import FakeMeasurer, matmul_module, stochastic_schedule_mm

TARGET = Target("llvm --num-cores=2")


def _dense_relu(m: int, name: str = "main") -> IRModule:
    x, w = te.placeholder((m, 128), name="x"), te.placeholder((64, 128), name="w")
    return IRModule({name: te.create_prim_func([x, w, topi.nn.relu(topi.nn.dense(x, w))])})


def _dlight(mod: IRModule) -> IRModule:
    with TARGET:
        return dlight.ApplyDefaultSchedule(*dlight.cpu.default_rules())(mod)


@pytest.mark.parametrize("rows", [1, 64])
def test_trace_replays_to_the_default_schedule_of_a_function_of_any_name(rows):
    mod = _dense_relu(rows, "dense_relu")
    sch = default_schedule(mod, TARGET)
    expected = _dlight(mod)["dense_relu"]
    assert_structural_equal(sch.mod["dense_relu"].body, expected.body, map_free_vars=True)
    replayed = sch.trace.apply_to_schedule(Schedule(mod),
                                           remove_postproc=False)
    assert structural_hash(replayed.mod) == structural_hash(sch.mod)


def test_no_baseline_where_the_rule_rewrites_outside_the_schedule():
    # layer_norm's rule splits its tuple reduction before it makes a schedule
    x, g, b = (te.placeholder(shape, name=n) for shape, n in
               [((64, 100), "x"), ((100,), "g"), ((100,), "b")])
    mod = IRModule({"main": te.create_prim_func([x, g, b, topi.nn.layer_norm(x, g, b, [-1])])})
    assert _dlight(mod)["main"].attrs.get("tir.is_scheduled")     # dlight does schedule it
    assert default_schedule(mod, TARGET) is None


def test_default_schedule_is_measured_first_and_wins_when_fastest(tmp_path):
    mod = _dense_relu(64)
    default = default_schedule(mod, TARGET)
    measurer = FakeMeasurer()
    fast = structural_hash(default.mod)
    measurer.measure = _faster_for(measurer.measure, measurer, fast)
    database = ms.tune_tir(mod, TARGET, str(tmp_path), 6, num_trials_per_iter=3,
                           strategy="replay-trace", cost_model="random", seed=0,
                           builder=measurer.builder, runner=measurer.runner,
                           progress_bar=False)
    assert measurer.measured[0] == fast and measurer.measured.count(fast) == 1
    best = ms.tir_integration.compile_tir(database, mod, TARGET)
    assert structural_hash(best.mod) == fast
    a, b = np.random.rand(64, 128).astype("float32"), np.random.rand(64, 128).astype("float32")
    c = mlcbench.nd.empty((64, 64), "float32")
    mlcbench.build(best.mod, TARGET)["main"](mlcbench.nd.array(a), mlcbench.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), np.maximum(a @ b.T, 0), rtol=1e-4)


def _faster_for(measure, measurer, key_hash):
    """``measure`` that reports the program with ``key_hash`` ten times faster."""
    def wrapped(key):
        result = measure(key)
        if measurer.measured[-1] == key_hash and result.run_secs:
            return type(result)([s / 10 for s in result.run_secs], result.error_msg)
        return result
    return wrapped


def test_resumed_tuning_does_not_measure_the_default_again(tmp_path):
    mod = _dense_relu(64)
    for _ in range(2):
        measurer = FakeMeasurer()
        ms.tune_tir(mod, TARGET, str(tmp_path), 2, num_trials_per_iter=2,
                    strategy="replay-trace", cost_model="random", seed=0,
                    builder=measurer.builder, runner=measurer.runner, progress_bar=False)
        hashes = measurer.measured
    assert structural_hash(default_schedule(mod, TARGET).mod) not in hashes


def test_hand_written_spaces_and_measure_default_false_have_no_baseline(tmp_path):
    for space in (ms.ScheduleFn(stochastic_schedule_mm),
                  ms.PostOrderApply(measure_default=False)):
        measurer = FakeMeasurer()
        database = ms.tune_tir(matmul_module(32), TARGET, str(tmp_path / type(space).__name__),
                               3, num_trials_per_iter=3, space=space, strategy="replay-trace",
                               cost_model="random", seed=0, builder=measurer.builder,
                               runner=measurer.runner, progress_bar=False)
        for record in database.get_all_tuning_records():
            assert "sample_perfect_tile" in [inst.kind for inst in record.trace.insts]


@pytest.mark.parametrize("rows, argument_packs", [(64, "x_global"), (16, None)])
def test_a_constant_weight_gets_the_default_schedule_relax_build_gives_it(rows, argument_packs):
    """On AVX-512, a dense whose weight its model passes as a constant packs the weight
    (PrepackWeights packs it once at build time), as ``relax.build``'s default rules do
    when told the constant parameters; with the weight an argument, 64 rows pack ``x``
    and 16 go in tiles of rows, packing nothing. The trace replays on the unmarked
    task."""
    avx512 = Target("llvm -mcpu=znver4")
    x, w = te.placeholder((rows, 256), name="x"), te.placeholder((1024, 256), name="w")
    mod = IRModule({"main": te.create_prim_func([x, w, topi.nn.dense(x, w)])})
    constant = default_schedule(mod, avx512, constant_params=(1,))
    assert "w_global" in constant.mod.script() and "x_global" not in constant.mod.script()
    assert "mlcbench.constant_params" not in constant.mod.script()
    replayed = constant.trace.apply_to_schedule(Schedule(mod), remove_postproc=False)
    assert structural_hash(replayed.mod) == structural_hash(constant.mod)
    argument = default_schedule(mod, avx512).mod.script()
    assert "w_global" not in argument
    assert (argument_packs in argument) if argument_packs else "_global" not in argument


def test_tuning_measures_first_the_default_schedule_for_its_constants():
    """The search strategy's first candidate is the default schedule of the task's
    constant parameters (the weight packed), not the one of an argument weight."""
    avx512 = Target("llvm -mcpu=znver4 --num-cores=2")
    x, w = te.placeholder((64, 256), name="x"), te.placeholder((1024, 256), name="w")
    mod = IRModule({"main": te.create_prim_func([x, w, topi.nn.dense(x, w)])})
    for params, packed in [((1,), "w_global"), ((), "x_global")]:
        context = ms.TuneContext(mod, target=avx512, space_generator=ms.PostOrderApply(),
                                 search_strategy=ms.ReplayTrace(), constant_params=params)
        context.pre_tuning(max_trials=2, num_trials_per_iter=2)
        first = context.generate_measure_candidates()[0]
        assert packed in first.sch.mod.script(), params
