"""Real measurement in worker processes; broken and wrong configs become error results."""
import pytest

from mlcbench import autotvm, te, tir
from mlcbench.autotvm.measure import MeasureErrorNo, MeasureInput, create_measure_batch
from mlcbench.ir import InvalidValueError


@autotvm.template("test/risky_add")
def risky_add(n):
    """knob "mode": 0 fine, 1 refused by the schedule, 2 computes the wrong thing."""
    A = te.placeholder((n,), name="A")
    cfg = autotvm.get_config()
    cfg.define_knob("mode", [0, 1, 2])
    offset = 2.0 if cfg["mode"].val == 2 else 1.0
    B = te.compute((n,), lambda i: A[i] + offset, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    if cfg["mode"].val == 1:
        sch.get_block("nothing")
    return sch, [A, B]


def test_errors_become_results_and_measuring_goes_on():
    task = autotvm.task.create("test/risky_add", args=(64,), target="llvm")
    option = autotvm.measure_option(
        builder=autotvm.LocalBuilder(timeout=20, n_parallel=1),
        runner=autotvm.LocalRunner(number=1, repeat=2, timeout=20, check_correctness=True))
    measure = create_measure_batch(task, option)
    inputs = [MeasureInput("llvm", task, task.config_space.get(i)) for i in (1, 2, 0)]
    refused, wrong, fine = measure(inputs)
    assert refused.error_no == MeasureErrorNo.INSTANTIATION_ERROR
    assert "nothing" in refused.costs[0]
    assert wrong.error_no == MeasureErrorNo.WRONG_ANSWER
    assert fine.error_no == 0 and len(fine.costs) == 2 and fine.all_cost > 0
    assert fine.timestamp >= wrong.timestamp


def test_local_builder_refuses_another_build_func():
    with pytest.raises(InvalidValueError, match="build_func must be 'default'.*found 'ndk'"):
        autotvm.LocalBuilder(build_func="ndk")
