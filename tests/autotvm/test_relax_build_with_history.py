"""relax.build inside apply_history_best: tuned kernels where records exist."""
import numpy as np
import pytest

import mlcbench
from mlcbench import autotvm, datasets, relax
from mlcbench.autotvm.measure import MeasureInput, MeasureResult, Runner
from mlcbench.driver.models import export_digits_model
from mlcbench.relax.pipeline import zero_pipeline
from mlcbench.relax.vm_build import resolve_schedule_lookup
from mlcbench.target import Target
from mlcbench.tir.stmt import For, ForKind
from mlcbench.tir.functor import post_order_visit

from helpers.autotvm_testing import FakeBuilder

BATCH = 360     # the digits test split
LLVM = Target("llvm")


class TileRunner(Runner):
    """Cost falls as the vector tile widens and the row tile nears 4 (no kernel runs)."""

    def run(self, measure_inputs, build_results):
        results = []
        for inp in measure_inputs:
            cfg = inp.config
            cost = 1e-3 / cfg["tile_x"].size[-1] * (1 + abs(cfg["tile_y"].size[-1] - 4))
            results.append(MeasureResult((cost,), 0, 0.0, 0.0))
        return results


def predictions(name, mod, weights):
    _, _, x_test, _ = datasets.load_digits(flat=name == "mlp")
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), mlcbench.cpu())
    return vm["forward"](mlcbench.nd.array(x_test), *weights).numpy()


def reference(name):
    _, _, x_test, _ = datasets.load_digits(flat=name == "mlp")
    if name == "mlp":
        return datasets.mlp_forward(x_test, datasets.load_mlp_params())
    return datasets.cnn_forward(x_test, datasets.load_cnn_params())


def kernels(mod):
    with LLVM:
        lowered = zero_pipeline()(mod)
    return {gv.name_hint: f for gv, f in lowered.items() if hasattr(f, "buffer_map")}


def loops(func):
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, For) else None)
    return found


def one_record(task, index=None):
    config = task.config_space.get(len(task.config_space) - 1 if index is None else index)
    return MeasureInput(task.target, task, config), MeasureResult((1e-3,), 0, 0.0, 0.0)


@pytest.fixture(scope="module")
def mlp():
    return export_digits_model("mlp", batch=BATCH)


def test_tuned_mlp_predicts_as_numpy_and_uses_the_best_config(mlp, tmp_path):
    mod, weights = mlp
    log = str(tmp_path / "mlp.log")
    tasks = autotvm.task.extract_from_program(mod, target="llvm", ops=["nn.dense"])
    task = next(t for t in tasks if t.name == "dense_pack.x86" and t.args[1][1][0] == 128)
    tuner = autotvm.tuner.RandomTuner(task)
    tuner.tune(n_trial=8, measure_option={"builder": FakeBuilder(), "runner": TileRunner()},
               callbacks=[autotvm.callback.log_to_file(log)])
    with autotvm.apply_history_best(log) as context:
        np.testing.assert_allclose(predictions("mlp", mod, weights), reference("mlp"),
                                   rtol=1e-4, atol=1e-4)
        best = context.best_record(LLVM, task.workload)[1]
        tuned = resolve_schedule_lookup()(kernels(mod)["fused_matmul_nt_add_relu"], "k", LLVM)
    vector = [lp for lp in loops(tuned) if lp.kind == ForKind.VECTORIZED]
    rows = best["tile_y"].size[-1]
    assert f"packed_weight = T.alloc_buffer(({128 // best['tile_x'].size[-1]}, 64, " \
           f"{best['tile_x'].size[-1]}))" in tuned.script()
    assert int(vector[1].extent.value) == best["tile_x"].size[-1]
    assert any(lp.loop_var.name.startswith("i_1") and int(lp.extent.value) == rows
               for lp in loops(tuned))


def test_tuned_cnn_predicts_as_numpy():
    mod, weights = export_digits_model("cnn", batch=BATCH)
    tasks = autotvm.task.extract_from_program(mod, target="llvm")
    records = [one_record(t) for t in tasks if t.name != "dense.x86"]
    with autotvm.apply_history_best(records):
        np.testing.assert_allclose(predictions("cnn", mod, weights), reference("cnn"),
                                   rtol=1e-4, atol=1e-5)


def test_fastest_template_wins_and_unrecorded_kernels_keep_the_default(mlp):
    mod, _ = mlp
    tasks = autotvm.task.extract_from_program(mod, target="llvm")
    nopack = next(t for t in tasks if t.name == "dense.x86" and t.args[1][1][0] == 128)
    pack = next(t for t in tasks if t.name == "dense_pack.x86" and t.args[1][1][0] == 128)
    faster = (one_record(nopack, 0)[0], MeasureResult((1e-4,), 0, 0.0, 0.0))
    with autotvm.apply_history_best([one_record(pack), faster]):
        lookup = resolve_schedule_lookup()
        found = {name: lookup(f, name, LLVM) for name, f in kernels(mod).items()}
    assert "packed_weight" not in found["fused_matmul_nt_add_relu"].script()
    assert "T_matmul_NT" in found["fused_matmul_nt_add_relu"].script()
    assert found["fused_matmul_nt1_add1"] is None and "transpose" not in found


def test_no_lookup_outside_a_history_context():
    assert resolve_schedule_lookup() is None
