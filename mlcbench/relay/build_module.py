"""``relay.build``: ``relax.build`` plus the graph executor's factory module.

::

    mod, params = relay.frontend.from_onnx(onnx_model, {"data": (1, 3, 224, 224)})
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))

``params`` are bound into ``main`` as constants before building (TVM's BindParams);
what ``relax.build`` honours applies here too: the enclosing ``PassContext`` and
``autotvm.apply_history_best(log)``. The factory unpacks into the triple of the oldest
tutorials, ``graph, lib, params = relay.build(...)``.
"""
from __future__ import annotations

import dataclasses

from ..contrib.graph_executor import GraphExecutor, graph_of
from ..ir.errors import CodegenError
from ..ir.module import IRModule, as_module
from ..ir.transform import PassContext
from ..relax.expr import Function
from ..relax.transform.bind_params import BindParams
from ..relax.vm_build import build as relax_build
from ..runtime.device import NO_GPU_MESSAGE
from ..runtime.package import write_package
from ..target import Target


class GraphExecutorFactoryModule:
    """What ``relay.build`` returns: ``lib["default"](dev)`` makes the graph executor.

    ``export_library("model.tar")`` writes a package (see
    :mod:`mlcbench.runtime.package`) that ``mlcbench run`` and ``tvmc.run`` read;
    ``export_library("model.so")`` writes the Relax executable's library, which
    ``relax.VirtualMachine(tvm.runtime.load_module("model.so"), dev)`` runs.
    """

    def __init__(self, executable, func, target, mod_name: str = "default"):
        self.executable, self.target, self.libmod_name = executable, target, mod_name
        self.graph_json, self.params = graph_of(executable, func, "main", target)
        self.lib = executable.lib

    def __getitem__(self, name: str):
        if name == self.libmod_name:
            # Each call parses the graph afresh, so two executors never share its mutable dict.
            return lambda device=None: GraphExecutor(_loads(self.graph_json), self.lib,
                                                     device, self.executable.constants)
        getters = {"get_graph_json": self.get_graph_json, "get_lib": self.get_lib,
                   "get_params": self.get_params}
        if name in getters:
            return getters[name]
        raise CodegenError(f"relay.build result: no function {name!r}; use "
                           f"lib[{self.libmod_name!r}](dev)")

    def get_graph_json(self) -> str:
        return self.graph_json

    def get_lib(self):
        return self.lib

    def get_params(self) -> dict:
        return dict(self.params)

    def __iter__(self):
        # graph, lib, params = relay.build(...): the spelling of TVM before 0.8
        return iter((self.graph_json, self.lib, self.get_params()))

    def export_library(self, file_name, **kwargs) -> None:
        """``.tar``: a model package; ``.so``: the executable's shared library."""
        import os
        if os.fspath(file_name).endswith(".tar"):
            write_package(file_name, self.graph_json, self.lib, self.params)
        else:
            self.executable.export_library(file_name, **kwargs)

    def __repr__(self) -> str:
        return f"GraphExecutorFactoryModule({self.executable.stats()})"


def build(ir_mod, target=None, target_host=None, executor=None, runtime=None,
          params=None, mod_name: str = "default") -> GraphExecutorFactoryModule:
    """Build ``ir_mod`` (an IRModule whose ``main`` is a Relax function, or that function)
    with ``params`` (name -> array) bound as constants; see the module docstring."""
    mod = _as_module(ir_mod)
    target = _cpu_target(target)
    if params:
        # Bound before building, so FoldConstant and weight packing see the weights as constants.
        mod = bind_params_by_name(mod, params)
    main = mod[mod.get_global_var("main")]
    if "params" in main.attrs:       # the weights from_onnx left on main are bound now
        attrs = {k: v for k, v in main.attrs.items() if k != "params"}
        main = dataclasses.replace(main, attrs=attrs)
        mod[mod.get_global_var("main")] = main
    # relax.build reads the enclosing PassContext and tuning context itself.
    executable = relax_build(mod, target)
    return GraphExecutorFactoryModule(executable, main, target, mod_name)


def bind_params_by_name(mod: IRModule, params: dict) -> IRModule:
    """Bind the parameters of ``main`` named in ``params``; other names are ignored, as
    TVM's ``bind_params_by_name`` ignores them."""
    main = mod[mod.get_global_var("main")]
    names = {p.name_hint for p in main.params}
    known = {name: value for name, value in params.items() if name in names}
    return BindParams("main", known)(mod) if known else mod


def _as_module(ir_mod) -> IRModule:
    mod = as_module(ir_mod, (Function,), "relay.build", CodegenError)
    if not any(gv.name_hint == "main" and isinstance(f, Function) for gv, f in mod.items()):
        raise CodegenError("relay.build: the module has no Relax function 'main' to "
                           "build; relay.frontend.from_onnx makes one")
    return mod


def _cpu_target(target) -> Target:
    if isinstance(target, dict):            # {"cpu": "llvm"}: the older heterogeneous form
        target = next(iter(target.values()), None)
    target = target if isinstance(target, Target) else Target(target or "llvm")
    if target.kind.name != "llvm":
        raise CodegenError(NO_GPU_MESSAGE.format(what=f"relay.build for target {target}")
                           .replace("use mlcbench.cpu() instead", "build with target='llvm'"))
    return target


def _loads(text: str) -> dict:
    import json
    return json.loads(text)


def build_config(opt_level: int = 2, required_pass=None, disabled_pass=None, **_ignored):
    """TVM's ``relay.build_config``, before ``PassContext`` had its name: a PassContext."""
    return PassContext(opt_level=opt_level, required_pass=tuple(required_pass or ()),
                       disabled_pass=tuple(disabled_pass or ()))


__all__ = ["GraphExecutorFactoryModule", "bind_params_by_name", "build", "build_config"]
