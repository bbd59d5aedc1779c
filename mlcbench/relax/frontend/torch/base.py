"""What both PyTorch frontends share: walking an FX graph into a BlockBuilder.

A torch.fx graph is a list of nodes (``placeholder``, ``get_attr``, ``call_function``,
``call_method``, ``call_module``, ``output``). :class:`GraphTranslator` visits them in
order and keeps ``env``: node -> the Relax value it became (a variable, a tuple, or a
plain Python value such as the ``int`` of ``x.size(0)``, since shapes are static).
Each frontend says how to find a node's converter (:meth:`GraphTranslator.converter_key`)
and which table holds it; a converter is ``convert(t, *args, **kwargs)`` with the node's
arguments already translated, so its signature reads like torch's own.

Before converting anything the whole graph is checked against the table, so a model
with three unsupported ops gets one error naming all three, with counts.
"""
from __future__ import annotations

import collections
import re

import numpy as np

from ....ir.errors import IRError, MLCBenchError
from ...block_builder import BlockBuilder
from ...expr import Constant, Expr, Tuple, TupleGetItem, Var, const
from ...struct_info import TensorStructInfo, TupleStructInfo


def torch_dtype(dtype) -> str:
    """``torch.float32`` -> ``"float32"``."""
    return str(dtype).replace("torch.", "")


def tensor_to_numpy(tensor) -> np.ndarray:
    return tensor.detach().cpu().contiguous().numpy()


def param_name(target: str) -> str:
    """A Relax variable name for a parameter path: ``layer1.0.conv1.weight`` ->
    ``layer1_0_conv1_weight``."""
    return re.sub(r"\W", "_", target)


class GraphTranslator:
    """Translate an FX graph into the ``main`` function of a Relax IRModule."""

    frontend = "from_fx"
    table: dict = {}

    def __init__(self, keep_params_as_input: bool = False, custom_convert_map=None):
        self.table = {**self.table, **self.custom_rows(custom_convert_map or {})}
        self.bb = BlockBuilder()
        self.env: dict = {}
        self.keep_params_as_input = keep_params_as_input
        self.weights: list = []          # (Var, ndarray) of parameters kept as inputs
        self._weight_exprs: dict = {}    # id(tensor) -> its Relax expression

    # -- what a converter calls -----------------------------------------------------------
    def emit(self, expr) -> Expr:
        return self.bb.emit(expr)

    def weight(self, tensor, name: str) -> Expr:
        """A module's parameter or buffer: a constant, or a function parameter when
        ``keep_params_as_input``. The same tensor used twice is one value."""
        key = id(tensor)
        if key not in self._weight_exprs:
            array = tensor_to_numpy(tensor)
            if self.keep_params_as_input:
                var = Var(param_name(name), TensorStructInfo(array.shape, str(array.dtype)))
                self.weights.append((var, array))
                self._weight_exprs[key] = var
            else:
                self._weight_exprs[key] = const(array)
        return self._weight_exprs[key]

    @staticmethod
    def shape_of(expr) -> tuple:
        """The static shape of a tensor value, as Python ints."""
        sinfo = expr.struct_info
        if not isinstance(sinfo, TensorStructInfo) or sinfo.dims is None:
            raise IRError(f"expected a tensor of known shape, found {sinfo}")
        try:
            return tuple(int(d.value) for d in sinfo.dims)
        except AttributeError:
            raise IRError(f"expected a tensor of static shape, found {sinfo}") from None

    @staticmethod
    def dtype_of(expr) -> str:
        return expr.struct_info.dtype

    # -- the walk -------------------------------------------------------------------------
    def custom_rows(self, custom_convert_map: dict) -> dict:
        """Rows a user adds or overrides: ``{key: convert}`` with keys as in the table
        (``"nn.Conv2d"``, ``"relu"``, ``"conv2d.default"``) or, for from_fx, a module
        class or a function; ``convert(t, *args, **kwargs)`` like the table's own."""
        rows = {}
        for key, convert in custom_convert_map.items():
            if not callable(convert):
                raise IRError(f"{self.frontend}: custom_convert_map[{key!r}] must be a "
                              f"function convert(translator, *args), found {convert!r}")
            rows[self.table_key_of(key)] = convert
        return rows

    def table_key_of(self, key) -> str:
        if not isinstance(key, str):
            raise IRError(f"{self.frontend}: custom_convert_map keys are operator names "
                          f"such as 'conv2d.default', found {key!r}")
        return key

    def converter_key(self, node):
        """The table key of a call node; None for nodes that need no converter."""
        raise NotImplementedError

    def check_supported(self, graph) -> None:
        """One error listing every op without a converter, with how often it occurs."""
        missing = collections.Counter()
        for node in graph.nodes:
            key = self.converter_key(node)
            if key is not None and key not in self.table:
                missing[key] += 1
        if missing:
            listed = ", ".join(f"{key} (x{count})" for key, count in sorted(missing.items()))
            raise IRError(f"{self.frontend}: {len(missing)} unsupported operator"
                          f"{'s' if len(missing) > 1 else ''}: {listed}")

    def retrieve(self, value):
        """A node argument with every fx.Node replaced by what it became."""
        if isinstance(value, (list, tuple)):
            return type(value)(self.retrieve(v) for v in value)
        if isinstance(value, dict):
            return {k: self.retrieve(v) for k, v in value.items()}
        if hasattr(value, "op") and hasattr(value, "target") and value in self.env:
            return self.env[value]
        return value

    def convert_call(self, node, key, receiver=()):
        """Run the converter of ``node`` and say which node failed if it does."""
        args = self.retrieve(tuple(node.args))
        kwargs = self.retrieve(dict(node.kwargs))
        try:
            return self.table[key](self, *receiver, *args, **kwargs)
        except MLCBenchError as err:
            raise type(err)(f"{self.frontend}: while converting node {node.name!r} "
                            f"({key}): {err}") from err
        except (TypeError, ValueError, IndexError) as err:
            # A call this converter does not understand (an argument torch added, an
            # index out of range): refused with the node named, never a bare error.
            raise IRError(f"{self.frontend}: while converting node {node.name!r} ({key}): "
                          f"arguments not understood: {type(err).__name__}: {err}") from err

    def output_expr(self, value):
        """The function's result: a tensor, or a Tuple of the values of a sequence."""
        if isinstance(value, (list, tuple)):
            return Tuple([self.output_expr(v) for v in value])
        if not isinstance(value, Expr):
            return const(np.asarray(value))
        return value

    def build(self, input_vars, body, unwrap_unit_return_tuple=False):
        """``main(inputs..., [weights...])`` whose dataflow block runs ``body()``."""
        with self.bb.function("main"):
            with self.bb.dataflow():
                result = self.output_expr(body())
                if unwrap_unit_return_tuple and isinstance(result, Tuple) \
                        and len(result.fields) == 1:
                    result = result.fields[0]
                output = self.bb.emit_output(result)
            params = list(input_vars) + [var for var, _ in self.weights]
            self.bb.emit_func_output(output, params=params)
        mod = self.bb.get()
        func = mod["main"]
        if self.keep_params_as_input:
            from ....runtime import ndarray
            func = func.with_attr("num_input", len(input_vars))
            func = func.with_attr("params", [ndarray.array(a) for _, a in self.weights])
            mod["main"] = func
        return mod


def tuple_item(t: GraphTranslator, value, index: int):
    """Field ``index`` of a Relax tuple value (a ``Tuple`` literal or a tuple variable)."""
    if isinstance(value, Tuple):
        return value.fields[index]
    if not isinstance(value.struct_info, TupleStructInfo):
        raise IRError(f"expected a tuple, found {value.struct_info}")
    return t.emit(TupleGetItem(value, index))


__all__ = ["Constant", "GraphTranslator", "param_name", "torch_dtype", "tuple_item"]
