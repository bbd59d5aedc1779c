"""Dispatch: fallback config with a one-time warning, apply_history_best picks the best."""
import warnings

import pytest

from mlcbench import autotvm
from mlcbench.autotvm.measure import MeasureInput, MeasureResult

from helpers.autotvm_testing import matmul


def test_fallback_warns_once_per_workload():
    with pytest.warns(UserWarning, match="fallback configuration"):
        s, args = matmul(8, 8, 8, "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        matmul(8, 8, 8, "float32")
    assert [h.name for h in s[args[2]].leaves] == ["i.outer", "j.outer", "k", "i.inner",
                                                    "j.inner"]


def test_apply_history_best_uses_fastest_valid_record(task):
    records = [(MeasureInput("llvm", task, task.config_space.get(i)),
                MeasureResult((cost,), error_no, 0.0, 0.0))
               for i, cost, error_no in [(3, 2.0, 0), (5, 1.0, 0), (7, 0.1, 4)]]
    with autotvm.apply_history_best(records):
        s, args = matmul(32, 32, 32, "float32")
    assert s.stages[0].leaves[-1].extent == task.config_space.get(5)["tile_x"].size[-1]
    context = autotvm.ApplyHistoryBest(records)
    assert context.query(None, task.workload).index == 5
    with pytest.warns(UserWarning, match="fallback"):
        assert context.query("llvm", ("test/matmul", 1, 1, 1, "float32")).is_fallback
