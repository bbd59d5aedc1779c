import numpy as np
import pytest

import mlcbench.runtime as rt
from mlcbench.ir.errors import RuntimeError_
from mlcbench.runtime import BenchmarkResult, measure
from mlcbench.runtime import ndarray as nd


def _counter():
    return nd.array(np.zeros(1, "int64"))


def _calls(counter) -> int:
    return int(counter.numpy()[0])


def test_number_and_repeat_count_calls_plus_one_warmup(kernels):
    counter = _counter()
    result = kernels.time_evaluator("count_calls", rt.cpu(), number=5, repeat=3)(counter)
    assert _calls(counter) == 1 + 5 * 3
    assert len(result.results) == 3 and all(r > 0 for r in result.results)


def test_min_repeat_ms_raises_number(kernels):
    counter = _counter()
    result = kernels.time_evaluator("count_calls", rt.cpu(), number=1, repeat=2,
                                    min_repeat_ms=20)(counter)
    assert _calls(counter) > 1 + 2 * 1000  # a ~50 ns kernel needs far more than 1 call per 20 ms
    assert all(r < 1e-4 for r in result.results)


def test_results_are_seconds_per_call_and_overhead_is_small(kernels):
    counter = _counter()
    result = kernels.time_evaluator("count_calls", rt.cpu(), number=2000, repeat=3)(counter)
    assert 0 < result.min <= result.median <= result.max
    assert result.mean < 2e-5  # ctypes call overhead only: about a microsecond


def test_arguments_checked_before_timing(kernels):
    evaluator = kernels.time_evaluator("add_one", rt.cpu(), number=3)
    with pytest.raises(ValueError, match="add_one: parameter B"):
        evaluator(nd.empty((16,)), nd.empty((15,)))


def test_failing_kernel_reported_at_warmup(kernels):
    with pytest.raises(RuntimeError_, match="always_fail"):
        kernels.time_evaluator("always_fail", rt.cpu())(nd.empty((1,)))


def test_f_preproc_runs_before_each_repeat(kernels):
    seen = []
    rt.register_func("test.preproc", lambda *args: seen.append(len(args)), override=True)
    try:
        kernels.time_evaluator("count_calls", rt.cpu(), number=2, repeat=4,
                               f_preproc="test.preproc")(_counter())
    finally:
        rt.remove_global_func("test.preproc")
    assert seen == [1, 1, 1, 1]
    kernels.time_evaluator("count_calls", rt.cpu(), repeat=1,
                           f_preproc="cache_flush_cpu_non_first_arg")(_counter())


def test_gpu_device_rejected(kernels):
    with pytest.raises(RuntimeError_, match="no GPU runtime"):
        kernels.time_evaluator("count_calls", rt.cuda())


def test_benchmark_result_statistics_and_text():
    result = BenchmarkResult([0.001, 0.003, 0.002])
    assert result.results == (0.001, 0.003, 0.002)
    assert (result.min, result.max) == (0.001, 0.003)
    assert result.mean == pytest.approx(0.002) and result.median == pytest.approx(0.002)
    assert result.std == pytest.approx(np.std([0.001, 0.003, 0.002]))
    lines = str(result).splitlines()
    assert lines[0] == "Execution time summary:"
    assert lines[1].split() == ["mean", "(ms)", "median", "(ms)", "max", "(ms)", "min", "(ms)",
                                "std", "(ms)"]
    assert [float(v) for v in lines[2].split()][:4] == [2.0, 2.0, 3.0, 1.0]
    assert repr(result).startswith("BenchmarkResult(min=0.001, mean=")


def test_measure_plain_callable_and_validation():
    calls = []
    result = measure(calls.append, (1,), number=3, repeat=2)
    assert len(calls) == 1 + 6 and len(result.results) == 2
    with pytest.raises(ValueError, match="number and repeat"):
        measure(calls.append, (1,), number=0)


@pytest.mark.parametrize("field", ["mean", "median", "results"])
def test_reading_a_result_field_on_the_evaluator_explains_the_call(kernels, field):
    evaluator = kernels.time_evaluator("add_one", rt.cpu(), number=3)
    with pytest.raises(AttributeError, match=rf"call it with the arguments of add_one first.*\)\.{field}"):
        getattr(evaluator, field)
    with pytest.raises(AttributeError):
        evaluator.not_a_field
