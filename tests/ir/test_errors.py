"""The error hierarchy: every deliberate error is an MLCBenchError, and also the built-in
error that code written for TVM or numpy catches for the same mistake."""
import pytest

from mlcbench.ir import MLCBenchError, RuntimeError_, dtype
from mlcbench.ir.transform import module_pass
from mlcbench.meta_schedule.builder import Builder
from mlcbench.meta_schedule.runner import Runner
from mlcbench.meta_schedule.space_generator import SpaceGenerator
from mlcbench.runtime.benchmark import measure
from mlcbench.runtime.metadata import decode_metadata
from mlcbench.tir.transform.pipeline import lower


@pytest.mark.parametrize("action, builtin, match", [
    (lambda: dtype("flaot32"), ValueError, "unknown dtype 'flaot32'"),
    (lambda: dtype(object()), TypeError, "expected a dtype"),
    (lambda: lower("main"), TypeError, "lower expects a PrimFunc or an IRModule, found str"),
    (lambda: module_pass(lambda mod, ctx: mod, name="keep")("not a module"), TypeError,
     "pass keep expects an IRModule, found str"),
    (lambda: SpaceGenerator.create("random"), ValueError, "unknown kind 'random'"),
    (lambda: Builder.create("remote"), ValueError, "Builder.create: unknown kind 'remote'"),
    (lambda: Runner.create("remote"), ValueError, "Runner.create: unknown kind 'remote'"),
    (lambda: measure(lambda: None, number=0), ValueError, "number and repeat must be >= 1"),
])
def test_errors_are_mlcbench_errors_and_the_builtin(action, builtin, match):
    with pytest.raises(MLCBenchError, match=match) as info:
        action()
    assert isinstance(info.value, builtin)


def test_runtime_errors_are_builtin_runtime_errors():
    with pytest.raises(RuntimeError, match=r"malformed mlcbench metadata \(version 99, "
                       r"expected \d+\)") as info:
        decode_metadata(b'{"mlcbench_metadata": 99, "kernels": []}')
    assert isinstance(info.value, RuntimeError_)

