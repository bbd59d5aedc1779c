"""Candidates measured as the model runs them: a constant weight packed once, not per call."""
import numpy as np
import pytest

import mlcbench
from mlcbench import relax
from mlcbench.ir.transform import PassContext
from mlcbench.meta_schedule import LocalBuilder
from mlcbench.meta_schedule.builder import BuilderInput
from mlcbench.meta_schedule import relax_integration as ri
from mlcbench.meta_schedule.arg_info import ArgInfo
from mlcbench.meta_schedule.default_schedule import default_schedule
from mlcbench.meta_schedule.prepacked import (PREPACK_FUNCTION, measured_module,
                                              prepacked_arguments, split_for_measurement)
from mlcbench.meta_schedule.runner import EvaluatorConfig, LocalRunner, RunnerInput
from mlcbench.meta_schedule.runner_worker import random_array
from mlcbench.meta_schedule.tune_context import TuneContext
from mlcbench.relax.op.winograd import WINOGRAD_CONFIG
from mlcbench.target import Target
from mlcbench.tir.build import build
from mlcbench.topi import testing as ref
from helpers.relax_testing import conv2d_module

TARGET = Target("llvm -mcpu=haswell")
DATA, WEIGHT = (1, 16, 8, 8), (32, 16, 3, 3)


def _conv_model(weight, data=DATA):
    """``main(x)`` of one 3x3 convolution; ``weight`` an array (a constant of the model)
    or None (a parameter ``w``)."""
    return conv2d_module(data, WEIGHT if weight is None else weight, padding=1)


def _conv_task(weight, data=DATA, target=TARGET):
    # The direct convolution, whose schedule packs its weight: a large layer on a CPU
    # would otherwise become Winograd kernels (see relax.op.winograd).
    with PassContext(config={WINOGRAD_CONFIG: False}):
        tasks = ri.extract_tasks(_conv_model(weight, data), target)
    return next(t for t in tasks if "conv2d" in t.task_name)


@pytest.fixture(scope="module")
def weight():
    return np.random.default_rng(0).standard_normal(WEIGHT).astype("float32")


def test_a_constant_weight_is_a_constant_parameter_of_its_task(weight):
    assert _conv_task(weight).constant_params == (1,)
    assert _conv_task(None).constant_params == ()


def test_the_packing_of_a_constant_weight_is_split_off(weight):
    task = _conv_task(weight)
    sch = default_schedule(task.mod, TARGET)
    split = split_for_measurement(sch.mod, task.constant_params)
    assert sorted(gv.name_hint for gv in split.get_global_vars()) == ["main", PREPACK_FUNCTION]
    kernel, pack = split["main"], split[PREPACK_FUNCTION]
    packed = pack.buffer_map[pack.params[1]]
    # The kernel takes the packed weight where the weight was, panels of vector width.
    assert kernel.buffer_map[kernel.params[1]] is packed
    assert len(packed.shape) == 5 and int(packed.shape[-1]) % TARGET.vector_lanes(32) == 0
    assert "T.alloc_buffer" not in pack.script()
    assert kernel.attrs["global_symbol"] == "main"


@pytest.mark.parametrize("params", [(), (0,), (7,)])
def test_nothing_is_split_without_a_packed_constant(weight, params):
    """No constants, a constant the kernel does not pack (the data), or no such parameter."""
    sch = default_schedule(_conv_task(weight).mod, TARGET)
    assert split_for_measurement(sch.mod, params) is sch.mod


def test_a_gpu_task_is_measured_whole(weight):
    task = _conv_task(weight)
    sch = default_schedule(task.mod, TARGET)
    context = TuneContext(task.mod, target="cuda", constant_params=task.constant_params)
    assert measured_module(context, sch.mod) is sch.mod


def test_the_split_kernel_computes_the_convolution_from_the_packed_weight(weight):
    """``prepacked_arguments`` packs the weight the caller filled, so the outputs among
    the arguments are the unsplit kernel's (what the runner compares)."""
    task = _conv_task(weight)
    context = TuneContext(task.mod, target=TARGET, constant_params=task.constant_params)
    lib = build(measured_module(context, default_schedule(task.mod, Target("llvm")).mod),
                Target("llvm"))
    rng = np.random.default_rng(1)
    arrays = [random_array(info, rng) for info in ArgInfo.from_entry_func(task.mod)]
    args = [mlcbench.nd.array(a) for a in arrays]
    called = prepacked_arguments(lib, lib["main"], args)
    assert called[1] is not args[1] and called[1].shape != args[1].shape
    lib["main"](*called)
    expected = ref.conv2d_nchw_python(arrays[0], arrays[1], 1, (1,) * 4)
    np.testing.assert_allclose(args[-1].numpy(), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(args[1].numpy(), arrays[1])      # the weight is untouched


class _RecordingBuilder(LocalBuilder):
    """A LocalBuilder that keeps the function names of every module it builds."""

    def __init__(self):
        super().__init__(max_workers=1)
        self.built = []

    def build(self, build_inputs):
        self.built += [sorted(gv.name_hint for gv in i.mod.get_global_vars())
                       for i in build_inputs]
        return super().build(build_inputs)


def test_tuning_measures_the_split_kernel_and_checks_its_answer(weight):
    builder = _RecordingBuilder()
    runner = LocalRunner(evaluator_config=EvaluatorConfig(number=2, repeat=1, min_repeat_ms=0))
    model = _conv_model(weight)
    try:
        database = ri.tune_relax(model, None, Target("llvm"), None, max_trials_global=3,
                                 num_trials_per_iter=3, builder=builder, runner=runner,
                                 database="memory", strategy="replay-trace",
                                 cost_model="random", seed=0, progress_bar=False)
    finally:
        runner.shutdown()
        builder.shutdown()
    # The default schedule packs the weight: it is measured split, and answers right.
    assert ["main", PREPACK_FUNCTION] in builder.built
    records = database.get_all_tuning_records()
    assert records and all(r.error_msg is None for r in records), \
        [r.error_msg for r in records]
    x = np.random.default_rng(2).random(DATA, "float32")
    out = relax.VirtualMachine(ri.compile_relax(database, model, Target("llvm")),
                               mlcbench.cpu())["main"](mlcbench.nd.array(x)).numpy()
    expected = ref.conv2d_nchw_python(x, weight, 1, (1,) * 4)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("constant_params, split", [((1,), True), ((), False)])
def test_tune_tir_measures_a_constant_weight_packed_once_when_told(weight, constant_params,
                                                                   split):
    """``tune_tir(constant_params=(1,))``: the caller passes a constant weight, so a
    candidate that packs it is built split, as ``relax.build`` runs it; by default
    (as in TVM) every candidate is measured whole."""
    from mlcbench import meta_schedule as ms
    builder = _RecordingBuilder()
    runner = LocalRunner(evaluator_config=EvaluatorConfig(number=2, repeat=1, min_repeat_ms=0))
    task = _conv_task(weight, target=Target("llvm"))
    try:
        database = ms.tune_tir(task.mod, Target("llvm"), None, max_trials_global=2,
                               num_trials_per_iter=2, builder=builder, runner=runner,
                               database="memory", strategy="replay-trace",
                               cost_model="random", seed=0, progress_bar=False,
                               constant_params=constant_params)
    finally:
        runner.shutdown()
        builder.shutdown()
    assert (["main", PREPACK_FUNCTION] in builder.built) == split
    records = database.get_all_tuning_records()
    assert records and all(r.error_msg is None for r in records), \
        [r.error_msg for r in records]


def test_the_runner_keeps_the_packed_weight_alive_while_it_times():
    """A 2.4 MB weight (ResNet-50's 3x3 256 -> 256 layer): its packed copy is freed back to
    the system if nothing holds it, and the kernel then read unmapped memory (a crash, or
    a wrong answer when the memory was reused)."""
    rng = np.random.default_rng(3)
    big = rng.standard_normal((256, 256, 3, 3)).astype("float32")
    task = _conv_task(big, (1, 256, 14, 14), Target("llvm"))
    context = TuneContext(task.mod, target=task.target, constant_params=task.constant_params)
    split = measured_module(context, default_schedule(task.mod, task.target).mod)
    assert PREPACK_FUNCTION in [gv.name_hint for gv in split.get_global_vars()]
    builder = LocalBuilder(max_workers=1)
    runner = LocalRunner(evaluator_config=EvaluatorConfig(number=2, repeat=2, min_repeat_ms=0))
    try:
        reference, built = builder.build([BuilderInput(task.mod, task.target),
                                          BuilderInput(split, task.target)])
        (future,) = runner.run([RunnerInput(built.artifact_path, "llvm",
                                            ArgInfo.from_entry_func(task.mod),
                                            reference.artifact_path)])
        result = future.result()
    finally:
        runner.shutdown()
        builder.shutdown()
    assert result.error_msg is None, result.error_msg
    assert result.run_secs and min(result.run_secs) > 0
