"""``relay``: the Relay-era API of the older TVM tutorials, as a thin layer over Relax.

There is no second graph IR: ``relay.frontend.from_onnx`` returns a Relax IRModule and
its weights, ``relay.build`` is ``relax.build`` plus the graph executor's factory
module, and the graph executor (``tvm.contrib.graph_executor``) runs the Relax VM::

    mod, params = relay.frontend.from_onnx(onnx_model, {"data": (1, 3, 224, 224)})
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.run(data=x)
    module.get_output(0).numpy()

The oldest spelling works as well: ``with relay.build_config(opt_level=3): graph, lib,
params = relay.build(mod, target, params=params)``, ``graph_runtime.create(graph, lib,
ctx)``, ``relay.save_param_dict(params)`` and ``module.load_params(bytes)``.
"""
from ..runtime.param_dict import load_param_dict, save_param_dict
from . import build_module, frontend, op
from .build_module import bind_params_by_name, build, build_config
from .op import nn

__all__ = ["bind_params_by_name", "build", "build_config", "build_module", "frontend",
           "load_param_dict", "nn", "op", "save_param_dict"]
