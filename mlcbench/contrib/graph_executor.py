"""The graph executor of the older TVM tutorials, running on the Relax VM.

::

    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input("data", x)           # or module.run(data=x)
    module.run()
    module.get_output(0).numpy()          # .asnumpy() too

and the oldest spelling, from the triple ``graph, lib, params = relay.build(...)``::

    m = graph_runtime.create(graph, lib, tvm.cpu())
    m.set_input("data", x)
    m.set_input(**params)
    m.run()
    m.module.time_evaluator("run", tvm.cpu(), number=1, repeat=10)().results

There is no second graph runtime: the *graph* is the JSON of the VM program that
``relax.build`` made (with the model's inputs, outputs and weights named), the *lib* the
kernels, and the *params* the VM's constants, named ``p0``, ``p1``, ... in pool order
(see :mod:`mlcbench.runtime.package` for the JSON fields).
"""
from __future__ import annotations

import json

from ..ir.errors import RuntimeError_
from ..relax.executable import Executable
from ..relax.struct_info import TensorStructInfo, TupleStructInfo
from ..relax.vm import VirtualMachine
from ..runtime import ndarray as nd
from ..runtime.benchmark import measure
from ..runtime.device import NO_GPU_MESSAGE, as_device, kDLCPU
from ..runtime.errors import ArgumentTypeError, ArgumentValueError
from ..runtime.module import Module, TimeEvaluator
from ..runtime.package import GRAPH_FORMAT, GRAPH_VERSION, check_graph
from ..runtime.param_dict import load_param_dict


def graph_of(executable: Executable, func, entry: str = "main", target=None) -> tuple[str, dict]:
    """``(graph_json, params)`` of a built model: ``func`` is the Relax function that was
    built as ``entry`` (its parameters are the graph's inputs, its result the outputs)."""
    code = executable.function_code(entry)
    if code is None:
        raise RuntimeError_(f"graph executor: the executable has no function {entry!r} "
                            f"(it has {executable.function_names})")
    inputs = [_tensor_entry(p.name_hint, p.struct_info) for p in func.params]
    outputs = [_tensor_entry(f"output_{i}", sinfo)
               for i, sinfo in enumerate(_flat_sinfo(func.body.struct_info))]
    params = {f"p{i}": value for i, value in enumerate(executable.constants)}
    graph = {"format": GRAPH_FORMAT, "version": GRAPH_VERSION, "entry": entry,
             "target": str(target) if target is not None else "llvm",
             "inputs": inputs, "outputs": outputs,
             "params": [_array_entry(name, value) for name, value in params.items()],
             "program": executable.program}
    return json.dumps(graph), params


def _flat_sinfo(sinfo) -> list:
    if isinstance(sinfo, TupleStructInfo):
        return [leaf for field in sinfo.fields for leaf in _flat_sinfo(field)]
    return [sinfo]


def _tensor_entry(name: str, sinfo) -> dict:
    shape = sinfo.static_shape() if isinstance(sinfo, TensorStructInfo) else None
    dtype = sinfo.dtype if isinstance(sinfo, TensorStructInfo) else None
    return {"name": name, "shape": None if shape is None else [int(d) for d in shape],
            "dtype": dtype}


def _array_entry(name: str, value) -> dict:
    return {"name": name, "shape": list(value.shape), "dtype": str(value.dtype)}


class GraphExecutor:
    """The runtime module of one model on one device (what ``lib["default"](dev)`` and
    ``graph_runtime.create`` make); :class:`GraphModule` is its Python face."""

    def __init__(self, graph: dict, lib: Module, device=None, constants=None):
        check_graph(graph, "graph executor")
        self.device = as_device(device)
        if self.device.device_type != kDLCPU:
            raise RuntimeError_(NO_GPU_MESSAGE.format(what=f"the graph executor on "
                                                           f"{self.device}"))
        self.graph, self.lib = graph, lib
        self._input_specs = {e["name"]: e for e in graph["inputs"]}
        self._param_specs = {e["name"]: (i, e) for i, e in enumerate(graph["params"])}
        self._constants = list(constants) if constants is not None \
            else [None] * len(graph["params"])
        self._values: dict = {}
        self._outputs: list = []
        self._vm = None

    # -- inputs ---------------------------------------------------------------------------
    @property
    def input_names(self) -> list[str]:
        return list(self._input_specs)

    def input_name(self, key) -> str:
        """The input called ``key`` (an index, a name, or the name as an ONNX graph spells
        it, e.g. ``"input:0"`` for ``input_0``)."""
        if isinstance(key, int) and not isinstance(key, bool):
            if not 0 <= key < len(self._input_specs):
                raise ArgumentValueError(f"set_input: input index {key} out of range; the "
                                         f"model has {len(self._input_specs)} input(s)")
            return self.input_names[key]
        if not isinstance(key, str):
            raise ArgumentTypeError(f"set_input: expected an input name or index, found "
                                    f"{type(key).__name__}")
        if key in self._input_specs or key in self._param_specs:
            return key
        cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in key)
        for candidate in (cleaned, f"v_{cleaned}"):
            if candidate in self._input_specs:
                return candidate
        raise ArgumentValueError(f"set_input: the model has no input {key!r}; its inputs are "
                                 f"{self.input_names} (and {len(self._param_specs)} "
                                 f"parameter(s) p0..)")

    def set_input(self, key=None, value=None, **params) -> None:
        if key is not None:
            self._set_one(self.input_name(key), value)
        for name, array in params.items():
            self._set_one(self.input_name(name), array)

    def _set_one(self, name: str, value) -> None:
        if value is None:
            raise ArgumentValueError(f"set_input({name!r}): no value given")
        if name in self._param_specs:
            index, spec = self._param_specs[name]
            self._constants[index] = _checked_array(value, spec, "parameter")
            self._vm = None     # the VM took its constants when it was made
        else:
            self._values[name] = _checked_array(value, self._input_specs[name], "input")

    def get_input(self, key):
        name = self.input_name(key)
        if name in self._param_specs:
            return self._constants[self._param_specs[name][0]]
        if name not in self._values:
            raise RuntimeError_(f"get_input: input {name!r} has not been set")
        return self._values[name]

    def load_params(self, param_bytes) -> None:
        """Set parameters from the bytes of ``relay.save_param_dict``."""
        self.set_input(**load_param_dict(param_bytes))

    # -- running --------------------------------------------------------------------------
    def _function(self):
        if self._vm is None:
            missing = [name for name, (i, _) in self._param_specs.items()
                       if self._constants[i] is None]
            if missing:
                raise RuntimeError_(f"run: {len(missing)} parameter(s) have no value "
                                    f"({', '.join(missing[:4])}{', ...' if len(missing) > 4 else ''}); "
                                    "call set_input(**params) or load_params(...) first")
            program = self.graph["program"]
            executable = Executable(self.lib, program, self._constants)
            self._vm = VirtualMachine(executable, self.device)
        return self._vm[self.graph["entry"]]

    def _arguments(self) -> tuple:
        missing = [name for name in self._input_specs if name not in self._values]
        if missing:
            raise RuntimeError_(f"run: input(s) {missing} not set; call set_input(name, "
                                f"value) or run({missing[0]}=value)")
        return tuple(self._values[name] for name in self._input_specs)

    def run(self, **inputs) -> None:
        self.set_input(**inputs)
        function = self._function()
        self._outputs = _flatten(function(*self._arguments()))

    def get_num_outputs(self) -> int:
        return len(self.graph["outputs"])

    def get_num_inputs(self) -> int:
        return len(self._input_specs)

    def get_output(self, index: int, out=None):
        if not self._outputs:
            raise RuntimeError_("get_output: call run() first")
        if not 0 <= index < len(self._outputs):
            raise ArgumentValueError(f"get_output: output index {index} out of range; the "
                                     f"model has {len(self._outputs)} output(s)")
        result = self._outputs[index]
        return out.copyfrom(result) if out is not None else result

    # -- as a runtime module ----------------------------------------------------------------
    def __getitem__(self, name: str):
        if name not in _EXPORTED:
            raise RuntimeError_(f"graph executor: no function {name!r}; it has {_EXPORTED}")
        return getattr(self, name)

    get_function = __getitem__

    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: float = 0, limit_zero_time_iterations: int = 100,
                       cooldown_interval_ms: float = 0, repeats_to_cooldown: int = 1,
                       **_device_options):
        """Time ``run`` on the inputs set so far: ``(...)().results`` in seconds."""
        if func_name != "run":
            raise RuntimeError_(f"time_evaluator: the graph executor times 'run', found "
                                f"{func_name!r}")
        function = self._function()
        converted = function.convert_args(self._arguments())

        def evaluator(*_):
            return measure(function.invoke_converted, (converted,), number=number,
                           repeat=repeat, min_repeat_ms=min_repeat_ms,
                           limit_zero_time_iterations=limit_zero_time_iterations,
                           cooldown_interval_ms=cooldown_interval_ms,
                           repeats_to_cooldown=repeats_to_cooldown)
        return TimeEvaluator("run", evaluator)


_EXPORTED = ["run", "set_input", "get_input", "get_output", "get_num_outputs",
             "get_num_inputs", "load_params"]


def _checked_array(value, spec: dict, what: str):
    array = value if isinstance(value, nd.NDArray) else nd.array(value)
    shape, dtype = spec.get("shape"), spec.get("dtype")
    if shape is not None and list(array.shape) != list(shape):
        raise ArgumentValueError(f"set_input: {what} {spec['name']!r} has shape "
                                 f"{tuple(shape)}, found {tuple(array.shape)}")
    if dtype is not None and str(array.dtype) != dtype:
        raise ArgumentValueError(f"set_input: {what} {spec['name']!r} is {dtype}, found "
                                 f"{array.dtype}; convert with .astype({dtype!r})")
    return array


def _flatten(result) -> list:
    if isinstance(result, (list, tuple)):
        return [leaf for item in result for leaf in _flatten(item)]
    return [result]


class GraphModule:
    """TVM's ``graph_executor.GraphModule``: wraps ``lib["default"](dev)``.

    ``module.module`` is the runtime module, for ``module.module.time_evaluator("run",
    dev, number=1, repeat=10)()``.
    """

    def __init__(self, module):
        if not isinstance(module, GraphExecutor):
            raise ArgumentTypeError(f"GraphModule: expected lib['default'](dev) of a "
                                    f"relay.build result, found {type(module).__name__}")
        self.module = module

    def set_input(self, key=None, value=None, **params) -> None:
        self.module.set_input(key, value, **params)

    def run(self, **inputs) -> None:
        self.module.run(**inputs)

    def get_output(self, index: int, out=None):
        return self.module.get_output(index, out)

    def get_input(self, key):
        return self.module.get_input(key)

    def get_num_outputs(self) -> int:
        return self.module.get_num_outputs()

    def get_num_inputs(self) -> int:
        return self.module.get_num_inputs()

    def load_params(self, param_bytes) -> None:
        self.module.load_params(param_bytes)

    def benchmark(self, device=None, func_name: str = "run", repeat: int = 5,
                  number: int = 5, min_repeat_ms: float = 0, end_to_end: bool = False):
        """Seconds per ``run`` (a BenchmarkResult; ``print`` it for TVM's table)."""
        return self.module.time_evaluator(func_name, device, number=number, repeat=repeat,
                                          min_repeat_ms=min_repeat_ms)()

    def __getitem__(self, name: str):
        return self.module[name]


def create(graph_json_str, libmod, device) -> GraphModule:
    """TVM's ``graph_executor.create(graph, lib, dev)``: a GraphModule whose parameters
    are set afterwards with ``set_input(**params)`` or ``load_params(...)``."""
    graph = json.loads(graph_json_str) if isinstance(graph_json_str, (str, bytes)) \
        else graph_json_str
    if isinstance(libmod, Executable):
        libmod = libmod.lib
    libmod = getattr(libmod, "lib", libmod)     # a relay.build factory module
    if not isinstance(libmod, Module):
        raise ArgumentTypeError(f"create: expected the lib of relay.build (a runtime "
                                f"Module), found {type(libmod).__name__}")
    device = device[0] if isinstance(device, (list, tuple)) else device
    return GraphModule(GraphExecutor(graph, libmod, device))


__all__ = ["GraphExecutor", "GraphModule", "create", "graph_of"]
