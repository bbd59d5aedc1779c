"""The graph executor on the Relax VM: GraphModule(lib["default"](dev)) and
graph_runtime.create(graph, lib, ctx), checked against onnx's reference evaluator."""
import json

import numpy as np
import pytest

import mlcbench as tvm
from mlcbench import relay
from mlcbench.contrib import graph_executor, graph_runtime
from mlcbench.ir.errors import MLCBenchError
from mlcbench.relay.testing import reference_outputs, tiny_cnn

pytest.importorskip("onnx")


@pytest.fixture(scope="module")
def built():
    model = tiny_cnn()
    mod, params = relay.frontend.from_onnx(model, {"data": (1, 3, 8, 8)})
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    return model, lib


@pytest.fixture
def data():
    return np.random.default_rng(1).random((1, 3, 8, 8), dtype=np.float32)


def test_graph_module_runs_like_the_reference(built, data):
    model, lib = built
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input("data", data)
    module.run()
    expected = reference_outputs(model, {"data": data})[0]
    np.testing.assert_allclose(module.get_output(0).numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(module.get_output(0).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    assert module.get_num_outputs() == 1 and module.get_num_inputs() == 1


def test_run_takes_inputs_by_keyword_and_index(built, data):
    model, lib = built
    module = graph_executor.GraphModule(lib["default"](tvm.device("llvm", 0)))
    module.run(data=data)
    first = module.get_output(0).numpy()
    module.set_input(0, tvm.nd.array(data * 2))
    module.run()
    expected = reference_outputs(model, {"data": data * 2})[0]
    np.testing.assert_allclose(module.get_output(0).numpy(), expected, rtol=1e-5, atol=1e-6)
    assert not np.allclose(first, expected)
    out = tvm.nd.empty((1, 3), "float32")
    module.get_output(0, out)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_the_triple_runs_after_its_params_are_set(built, data):
    model, lib = built
    graph, kernels, params = lib
    assert sorted(params) == [f"p{i}" for i in range(len(params))]
    module = graph_runtime.create(graph, kernels, tvm.context("cpu", 0))
    module.set_input("data", tvm.nd.array(data))
    with pytest.raises(MLCBenchError, match=r"parameter\(s\) have no value .*set_input\(\*\*params\)"):
        module.run()
    module.set_input(**params)
    module.run()
    expected = reference_outputs(model, {"data": data})[0]
    np.testing.assert_allclose(module.get_output(0).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_load_params_from_saved_bytes(built, data):
    model, lib = built
    graph, kernels, params = lib
    module = graph_runtime.create(graph, kernels, tvm.cpu())
    module.load_params(bytearray(relay.save_param_dict(params)))
    module.run(data=data)
    expected = reference_outputs(model, {"data": data})[0]
    np.testing.assert_allclose(module.get_output(0).numpy(), expected, rtol=1e-5, atol=1e-6)


def test_time_evaluator_of_run_through_module_module(built, data):
    _, lib = built
    module = graph_runtime.create(lib.get_graph_json(), lib.get_lib(), tvm.cpu())
    module.set_input(**lib.get_params())
    module.set_input("data", data)
    result = module.module.time_evaluator("run", tvm.cpu(), number=2, repeat=3)()
    assert len(result.results) == 3 and all(r > 0 for r in result.results)
    assert len(module.benchmark(tvm.cpu(), repeat=2, number=1).results) == 2


def test_wrong_inputs_get_clear_errors(built, data):
    _, lib = built
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    with pytest.raises(ValueError, match=r"no input 'image'; its inputs are \['data'\]"):
        module.set_input("image", data)
    with pytest.raises(ValueError, match=r"'data' has shape \(1, 3, 8, 8\), found \(3, 8, 8\)"):
        module.set_input("data", data[0])
    with pytest.raises(ValueError, match="is float32, found float64"):
        module.set_input("data", data.astype("float64"))
    with pytest.raises(MLCBenchError, match=r"input\(s\) \['data'\] not set"):
        module.run()
    with pytest.raises(MLCBenchError, match="call run"):
        module.get_output(0)
    module.run(data=data)
    with pytest.raises(ValueError, match="output index 1 out of range"):
        module.get_output(1)


def test_a_gpu_device_is_refused_saying_there_is_no_gpu(built):
    _, lib = built
    with pytest.raises(MLCBenchError, match="no GPU runtime"):
        lib["default"](tvm.gpu(0))
    graph, kernels, _ = lib
    with pytest.raises(MLCBenchError, match="no GPU runtime"):
        graph_runtime.create(graph, kernels, tvm.cuda(0))


def test_graph_json_names_inputs_outputs_and_params(built):
    _, lib = built
    graph = json.loads(lib.get_graph_json())
    assert graph["inputs"] == [{"name": "data", "shape": [1, 3, 8, 8], "dtype": "float32"}]
    assert graph["outputs"] == [{"name": "output_0", "shape": [1, 3], "dtype": "float32"}]
    # the build's constants, after folding: the conv bias as (4, 1, 1) for broadcasting,
    # the conv weight packed in channel blocks of 4 and the dense weight transposed and
    # packed into one panel of 3 columns (PrepackWeights), once, instead of on every call
    shapes = sorted(tuple(p["shape"]) for p in graph["params"])
    assert shapes == [(1, 3, 3, 3, 4), (1, 4, 3), (3,), (4, 1, 1)], shapes


def test_graph_module_wants_the_executor(built):
    _, lib = built
    with pytest.raises(TypeError, match=r"expected lib\['default'\]\(dev\)"):
        graph_executor.GraphModule(lib)
