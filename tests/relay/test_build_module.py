"""relay.build: relax.build plus the graph executor factory; its exports and triple."""
import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import autotvm, relax, relay
from mlcbench.contrib import graph_executor
from mlcbench.ir.errors import MLCBenchError
from mlcbench.relay.testing import reference_outputs, tiny_cnn, tiny_mlp

pytest.importorskip("onnx")


@pytest.fixture(scope="module")
def mlp():
    model = tiny_mlp()
    mod, params = relay.frontend.from_onnx(model, {"input": (1, 10)})
    return model, mod, params


@pytest.fixture(scope="module")
def lib(mlp):
    _, mod, params = mlp
    with tvm.transform.PassContext(opt_level=3):
        return relay.build(mod, target="llvm", params=params)


def _x():
    return np.random.default_rng(2).standard_normal((1, 10)).astype("float32")


def _check(model, module):
    x = _x()
    module.run(input=x)
    np.testing.assert_allclose(module.get_output(0).numpy(),
                               reference_outputs(model, {"input": x})[0], rtol=1e-5, atol=1e-5)


def test_params_are_bound_as_constants(mlp, lib):
    assert len(lib.executable.constants) == len(mlp[2])
    assert relax.VirtualMachine(lib.executable, tvm.cpu())["main"].param_names == ("input",)
    _check(mlp[0], graph_executor.GraphModule(lib["default"](tvm.cpu())))


def test_main_function_alone_builds_and_unknown_param_names_are_ignored(mlp):
    model, mod, params = mlp
    lib = relay.build(mod["main"], "llvm", params={**params, "not_a_param": np.ones(1)})
    _check(model, graph_executor.GraphModule(lib["default"](tvm.cpu())))


def test_build_config_gives_the_old_triple(mlp):
    model, mod, params = mlp
    with relay.build_config(opt_level=3) as ctx:
        assert ctx.opt_level == 3
        graph, kernels, new_params = relay.build(mod, "llvm", params=params)
    assert isinstance(graph, str) and isinstance(kernels, tvm.runtime.Module)
    assert len(new_params) == len(params)


def test_export_tar_is_a_package_and_so_is_a_vm_library(lib, mlp, tmp_path):
    lib.export_library(tmp_path / "model.tar")
    package = tvm.runtime.load_package(tmp_path / "model.tar")
    module = graph_executor.create(package.graph_json, package.lib, tvm.cpu())
    module.set_input(**package.params)
    _check(mlp[0], module)
    lib.export_library(str(tmp_path / "model.so"))
    vm = relax.VirtualMachine(tvm.runtime.load_module(tmp_path / "model.so"), tvm.cpu())
    x = _x()
    np.testing.assert_allclose(vm["main"](x).numpy(),
                               reference_outputs(mlp[0], {"input": x})[0], rtol=1e-5, atol=1e-5)


def test_a_gpu_target_is_refused_saying_there_is_no_gpu(mlp):
    with pytest.raises(MLCBenchError, match="no GPU runtime.*target='llvm'"):
        relay.build(mlp[1], target="cuda", params=mlp[2])


def test_what_is_not_a_model_is_refused():
    with pytest.raises(MLCBenchError, match="expected an IRModule"):
        relay.build("model.onnx", "llvm")
    with pytest.raises(MLCBenchError, match="no function 'graph'"):
        relay.build(relay.frontend.from_onnx(tiny_mlp())[0], "llvm")["graph"]


def test_save_and_load_param_dict_are_relays_names(mlp):
    params = mlp[2]
    loaded = relay.load_param_dict(relay.save_param_dict(params))
    assert list(loaded) == list(params)


def test_relay_conv2d_names_the_tasks_to_extract():
    mod, params = relay.frontend.from_onnx(tiny_cnn(), {"data": (1, 3, 8, 8)})
    tasks = autotvm.task.extract_from_program(mod["main"], target="llvm", params=params,
                                              ops=(relay.op.nn.conv2d,))
    assert tasks and all(task.name.startswith("conv2d") for task in tasks)
    dense = autotvm.task.extract_from_program(mod["main"], target="llvm", params=params,
                                              ops=(relay.nn.dense,))
    assert dense and all(task.name.startswith("dense") for task in dense)
