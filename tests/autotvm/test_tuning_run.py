"""One real template tuning run: 128^3 matmul, 16 trials, XGBTuner, then apply it."""
import numpy as np

import mlcbench
from mlcbench import autotvm

from helpers.autotvm_testing import matmul


def test_xgb_tuning_of_matmul_then_apply_history_best(tmp_path):
    log = str(tmp_path / "matmul.log")
    task = autotvm.task.create("test/matmul", args=(128, 128, 128, "float32"), target="llvm")
    option = autotvm.measure_option(
        builder=autotvm.LocalBuilder(timeout=30),
        runner=autotvm.LocalRunner(number=2, repeat=1, min_repeat_ms=1, timeout=30,
                                   check_correctness=True))
    tuner = autotvm.tuner.XGBTuner(task, plan_size=8, loss_type="rank", seed=0)
    tuner.tune(n_trial=16, measure_option=option,
               callbacks=[autotvm.callback.progress_bar(16, prefix="[matmul]"),
                          autotvm.callback.log_to_file(log)])
    records = list(autotvm.record.load_from_file(log))
    assert len(records) == 16 and tuner.best_flops > 0
    assert all(res.error_no == 0 for _, res in records)
    with autotvm.apply_history_best(log):
        s, args = matmul(128, 128, 128, "float32")
    lib = mlcbench.build(s, args, target="llvm")
    rng = np.random.default_rng(0)
    a, b = rng.random((128, 128), "float32"), rng.random((128, 128), "float32")
    c = mlcbench.nd.empty((128, 128), "float32")
    lib(mlcbench.nd.array(a), mlcbench.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)
