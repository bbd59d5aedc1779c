"""Walking an ONNX graph into the ``main`` function of a Relax IRModule.

The graph's nodes come in topological order. :class:`GraphImporter` visits them and
keeps ``env``: tensor name -> its value, either a Relax expression (a variable bound by
the BlockBuilder) or a numpy array known at import time. Shapes are static, so a node
whose inputs are all known (``Shape``, ``ConstantOfShape``, the arithmetic on shapes
that exporters emit, the light models' ``ConstantOfShape`` weights) is evaluated with
numpy right away and never reaches the Relax graph.

Before converting anything the whole graph is checked against the table, so a model
with three unsupported operators gets one error naming all three, with counts.
"""
from __future__ import annotations

import collections
import os

import numpy as np

from ....ir.errors import MLCBenchError
from ...block_builder import BlockBuilder
from ...expr import Expr, Tuple, Var, const
from ...struct_info import TensorStructInfo
from .common import Node, OnnxImportError
from .table import CONVERTERS, MAX_OPSET, MIN_OPSET


class GraphImporter:
    """Translate one ONNX ``GraphProto`` with the converters of :mod:`.table`."""

    def __init__(self, model, shape_dict, keep_params_in_input: bool):
        self.model = model
        self.graph = model.graph
        self.opset = _default_opset(model)
        self.shape_dict = dict(shape_dict or {})
        self.keep_params_in_input = keep_params_in_input
        self.bb = BlockBuilder()
        self.env: dict = {}
        self.params: list = []          # (Var, ndarray) for keep_params_in_input

    # -- what a converter calls -----------------------------------------------------------
    def emit(self, expr) -> Expr:
        return self.bb.emit(expr)

    def expr(self, value) -> Expr:
        """A Relax expression for ``value`` (numpy arrays become constants)."""
        if isinstance(value, np.ndarray):
            return const(value, str(value.dtype))
        return value

    def shape(self, value) -> tuple:
        if isinstance(value, np.ndarray):
            return tuple(value.shape)
        sinfo = value.struct_info
        return tuple(int(d) for d in sinfo.static_shape())

    def dtype(self, value) -> str:
        return str(value.dtype) if isinstance(value, np.ndarray) else value.struct_info.dtype

    @staticmethod
    def known(value) -> bool:
        return isinstance(value, np.ndarray)

    # -- the walk -------------------------------------------------------------------------
    def run(self):
        check_supported(self.graph, self.opset)
        inputs = self._inputs()
        with self.bb.function("main", inputs + [v for v, _ in self.params]):
            with self.bb.dataflow():
                for proto in self.graph.node:
                    self._convert(proto)
                outputs = [self._output(o.name) for o in self.graph.output]
                result = outputs[0] if len(outputs) == 1 else Tuple(outputs)
                out = self.bb.emit_output(result)
            self.bb.emit_func_output(out)
        mod = self.bb.get()
        if self.keep_params_in_input:
            from ....runtime import ndarray
            func = mod["main"].with_attr("params", [ndarray.array(a) for _, a in self.params])
            mod[mod.get_global_var("main")] = func
        return mod

    def _inputs(self) -> list:
        from onnx import numpy_helper
        initializers = {t.name: numpy_helper.to_array(t) for t in self.graph.initializer}
        graph_inputs = [i for i in self.graph.input if i.name not in initializers]
        names = {i.name for i in graph_inputs}
        unknown = sorted(set(self.shape_dict) - names)
        if unknown:
            raise OnnxImportError(f"shape_dict names {unknown}, which are not inputs of the "
                                  f"graph; its inputs are {sorted(names)}")
        variables = []
        for info in graph_inputs:
            var = Var(_var_name(info.name), TensorStructInfo(self._input_shape(info),
                                                             _elem_dtype(info)))
            self.env[info.name] = var
            variables.append(var)
        for name, array in initializers.items():
            if self.keep_params_in_input and array.ndim > 0 and array.dtype.kind == "f":
                var = Var(_var_name(name), TensorStructInfo(array.shape, str(array.dtype)))
                self.params.append((var, array))
                self.env[name] = var
            else:
                self.env[name] = array
        return variables

    def _input_shape(self, info) -> tuple:
        if info.name in self.shape_dict:
            shape = tuple(int(d) for d in self.shape_dict[info.name])
            if any(d < 0 for d in shape):
                raise OnnxImportError(f"shape_dict[{info.name!r}] = {shape}: extents must be "
                                      f"non-negative")
            return shape
        dims = info.type.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in dims):
            shown = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                     for d in dims]
            raise OnnxImportError(f"input {info.name!r} has symbolic shape {shown}; give its "
                                  f"static shape in shape_dict, e.g. "
                                  f"shape_dict={{{info.name!r}: (1, ...)}}")
        return tuple(d.dim_value for d in dims)

    def _convert(self, proto) -> None:
        inputs = [self._lookup(name, proto) if name else None for name in proto.input]
        node = Node(proto, inputs, self.opset)
        if inputs and all(v is None or isinstance(v, np.ndarray) for v in inputs) \
                and proto.op_type not in _NEVER_FOLD:
            outputs = fold_node(node, self.model)
        else:
            try:
                outputs = CONVERTERS[proto.op_type].convert(self, node)
            except OnnxImportError:
                raise
            except MLCBenchError as err:
                raise node.fail(str(err)) from err
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        for name, value in zip(proto.output, outputs):
            if name:
                self.env[name] = self._bind(value, name)

    def _bind(self, value, name: str):
        if value is None or isinstance(value, (np.ndarray, Var)):
            return value
        return self.bb.emit(value, _var_name(name))

    def _lookup(self, name: str, proto):
        if name not in self.env:
            raise OnnxImportError(f"ONNX node {proto.name or proto.op_type!r} reads {name!r}, "
                                  f"which no earlier node, input or initializer produces")
        return self.env[name]

    def _output(self, name: str) -> Expr:
        value = self.env.get(name)
        if value is None:
            raise OnnxImportError(f"graph output {name!r} is not produced by any node")
        return self.expr(value)


_NEVER_FOLD = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike"}


def fold_node(node: Node, model):
    """Evaluate a node whose inputs are all known with onnx's numpy reference evaluator."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator
    proto = node.proto
    names = [f"in{k}" if name else "" for k, name in enumerate(proto.input)]
    outs = [f"out{k}" if name else "" for k, name in enumerate(proto.output)]
    single = helper.make_node(proto.op_type, names, outs, domain=proto.domain)
    single.attribute.extend(proto.attribute)
    graph = helper.make_graph(
        [single], "fold", [helper.make_tensor_value_info(n, 0, None) for n in names if n],
        [helper.make_tensor_value_info(n, 0, None) for n in outs if n])
    folded = helper.make_model(graph, opset_imports=list(model.opset_import))
    feeds = {n: v for n, v in zip(names, node.inputs) if n}
    try:
        results = ReferenceEvaluator(folded).run(None, feeds)
    except Exception as err:     # the reference implementation's own refusal
        raise node.fail(f"evaluating it on constant inputs failed: {err}") from err
    results = iter(np.asarray(r) for r in results)
    return [next(results) if n else None for n in outs]


def check_supported(graph, opset: int) -> None:
    """One error naming every operator of ``graph`` that has no converter, with counts."""
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise OnnxImportError(f"the model imports ONNX opset {opset}; supported opsets are "
                              f"{MIN_OPSET} to {MAX_OPSET}")
    counts = collections.Counter(n.op_type for n in graph.node
                                 if n.domain not in ("", "ai.onnx"))
    counts.update(_unsupported_name(n.op_type, opset) for n in graph.node
                  if n.domain in ("", "ai.onnx") and _unsupported_name(n.op_type, opset))
    if counts:
        listed = ", ".join(f"{op} ({count})" for op, count in sorted(counts.items()))
        raise OnnxImportError(f"the model uses {len(counts)} unsupported operator(s): "
                              f"{listed}; supported operators are listed by "
                              f"mlcbench.relax.frontend.onnx.supported_operators()")


def _unsupported_name(op_type: str, opset: int) -> str | None:
    row = CONVERTERS.get(op_type)
    if row is None:
        return op_type
    if not row.since <= opset <= row.until:
        return f"{op_type} at opset {opset} (handled: {row.since} to {row.until})"
    return None


def load_model(model):
    """A ``ModelProto`` from a ModelProto, a path, or serialized bytes."""
    import onnx
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (str, os.PathLike)):
        if not os.path.exists(model):
            raise OnnxImportError(f"from_onnx: no ONNX file at {os.fspath(model)!r}")
        try:
            return onnx.load(os.fspath(model))
        except Exception as err:
            raise OnnxImportError(f"from_onnx: {os.fspath(model)!r} is not an ONNX model: "
                                  f"{err}") from err
    if isinstance(model, (bytes, bytearray)):
        try:
            return onnx.load_from_string(bytes(model))
        except Exception as err:
            raise OnnxImportError(f"from_onnx: the bytes are not an ONNX model: {err}") from err
    raise OnnxImportError(f"from_onnx: expected an onnx.ModelProto, a path to a .onnx file or "
                          f"its bytes, found {type(model).__name__}")


def _default_opset(model) -> int:
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return versions[0] if versions else 1


def _elem_dtype(info) -> str:
    from onnx import helper
    elem = info.type.tensor_type.elem_type
    return str(np.dtype(helper.tensor_dtype_to_np_dtype(elem)))


def _var_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"v_{cleaned}"
