"""Seed 003 (TVM tutorial 2: TVMC and AutoTVM), its programs as written.

Changed only where the environment forces it, each marked ``# changed:``:
- ``my_model.onnx`` / ``model.onnx`` are written first (a small ONNX model from
  ``relay.testing``, input "input" of shape (1, 10), as the notes' inputs are);
- tuning uses a few trials (the notes leave TVMC's default of 10000);
- the notes pass ``shape_dict = {"data": ...}`` but run ``module.run(input=...)``: one
  model cannot have both names, so the shape_dict names the model's input "input".
"""
import timeit

import numpy as np
import onnx
import pytest

import mlcbench as tvm
from mlcbench.relay.testing import reference_outputs, tiny_matmul


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    onnx.save(tiny_matmul(), "my_model.onnx")          # changed: the model is written here
    onnx.save(tiny_matmul(), "model.onnx")
    return tmp_path


def test_seed_003_tvmc_load_compile_run_tune(in_tmp):
    from mlcbench.driver import tvmc

    model = tvmc.load('my_model.onnx')  # Step 1: Load

    package = tvmc.compile(model, target="llvm")  # Step 2: Compile

    inputs = {'input': np.random.randn(1, 10).astype('float32')}
    result = tvmc.run(package, inputs=inputs, device='cpu')
    result.outputs
    np.testing.assert_allclose(result.outputs["output_0"],
                               reference_outputs(tiny_matmul(), inputs)[0], rtol=1e-5, atol=1e-5)

    tuning_records = tvmc.tune(model, target="llvm", enable_autoscheduler=True,
                               tuning_records='log.json',
                               trials=1)  # changed: a few trials; Step 1.5: Optional Tune

    opt_package = tvmc.compile(model, target='llvm', tuning_records=tuning_records)
    result = tvmc.run(opt_package, inputs=inputs, device='cpu')
    np.testing.assert_allclose(result.outputs["output_0"],
                               reference_outputs(tiny_matmul(), inputs)[0], rtol=1e-5, atol=1e-5)


def test_seed_003_relay_build_and_graph_executor(in_tmp):
    import mlcbench.relay as relay
    from mlcbench.contrib import graph_executor
    target = "llvm"
    input = np.random.randn(1, 10).astype("float32")

    onnx_model = onnx.load('model.onnx')

    shape_dict = {"input": input.shape}  # changed: the notes' "data" is not this model's input

    mod, params = relay.frontend.from_onnx(onnx_model, shape_dict)

    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target, params=params)

    dev = tvm.device(str(target), 0)
    module = graph_executor.GraphModule(lib["default"](dev))

    module.run(input=input)
    # module.set_input("input", input)
    out = module.get_output(0).asnumpy()
    np.testing.assert_allclose(out, reference_outputs(onnx_model, {"input": input})[0],
                               rtol=1e-5, atol=1e-5)


def test_seed_003_autotvm_tune_and_rebuild(in_tmp):
    import mlcbench.relay as relay
    from mlcbench.contrib import graph_executor
    target = "llvm"
    onnx_model = onnx.load('model.onnx')
    mod, params = relay.frontend.from_onnx(onnx_model, {"input": (1, 10)})

    from mlcbench.autotvm.tuner import XGBTuner
    from mlcbench import autotvm

    number = 10         # number of different configurations that we will test
    repeat = 1          # how many measurements we will take of each configuration
    min_repeat_ms = 0   # since we're tuning on a CPU, can be set to 0
    timeout = 10        # in seconds

    # create a TVM runner
    runner = autotvm.LocalRunner(
        number=number,
        repeat=repeat,
        timeout=timeout,
        min_repeat_ms=min_repeat_ms,
        enable_cpu_cache_flush=True,
    )

    tuning_option = {
        "tuner": "xgb",
        "trials": 4,
        "early_stopping": 100   ,
        "measure_option": autotvm.measure_option(
            builder=autotvm.LocalBuilder(build_func="default"), runner=runner
        ),
        "tuning_records": "resnet-50-v2-autotuning.json",
    }

    # begin by extracting the tasks from the onnx model
    tasks = autotvm.task.extract_from_program(mod["main"], target=target, params=params)

    # Tune the extracted tasks sequentially.
    for i, task in enumerate(tasks):
        prefix = "[Task %2d/%2d] " % (i + 1, len(tasks))

        # choose tuner
        tuner_obj = XGBTuner(task, loss_type="reg")

        # print(len(task.config_space))
        # print(task.config_space)
        tuner_obj.tune(
            n_trial=min(tuning_option["trials"], len(task.config_space)),
            early_stopping=tuning_option["early_stopping"],
            measure_option=tuning_option["measure_option"],
            callbacks=[
                autotvm.callback.progress_bar(tuning_option["trials"], prefix=prefix),
                autotvm.callback.log_to_file(tuning_option["tuning_records"]),
            ],
        )

    with autotvm.apply_history_best(tuning_option["tuning_records"]):
        with tvm.transform.PassContext(opt_level=3, config={}):
            lib = relay.build(mod, target=target, params=params)

    dev = tvm.device(str(target), 0)
    module = graph_executor.GraphModule(lib["default"](dev))

    def func(): module.run()

    x = np.random.randn(1, 10).astype("float32")
    module.set_input("input", x)
    timer = timeit.Timer(lambda: func()) # must use lambda
    timer.timeit(number=1000)
    timer.repeat(repeat=3, number=1000)

    assert len(tasks) >= 1
    assert len(list(autotvm.record.load_from_file("resnet-50-v2-autotuning.json"))) == \
        sum(min(4, len(t.config_space)) for t in tasks)
    np.testing.assert_allclose(module.get_output(0).numpy(),
                               reference_outputs(onnx_model, {"input": x})[0], rtol=1e-5,
                               atol=1e-5)
