"""``Module.export_tvm``: run each method once on symbolic inputs, recording Relax.

For ``spec={"forward": {"x": nn.spec.Tensor((1, 784), "float32")}}`` the module's
``forward`` runs inside ``bb.function("forward", ...)`` with ``x`` a Relax parameter
and every ``nn.Parameter`` bound to a parameter after it; each op it calls emits one
binding of the function's dataflow block::

    @R.function
    def forward(x: R.Tensor((1, 784), dtype="float32"),
                fc1_weight: R.Tensor((128, 784), dtype="float32"), ...):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            permute_dims: R.Tensor((784, 128), dtype="float32") = R.permute_dims(fc1_weight)
            matmul: R.Tensor((1, 128), dtype="float32") = R.matmul(x, permute_dims)
            ...
"""
from __future__ import annotations

import contextlib
import inspect

from ....ir.errors import IRError
from ...block_builder import BlockBuilder
from ...expr import Tuple, Var
from . import spec as nn_spec
from .core import Module, Tensor


def export(module: Module, spec: dict):
    """``(IRModule, [(name, Parameter), ...])``; see :meth:`Module.export_tvm`."""
    if not isinstance(spec, dict) or not spec:
        raise IRError(f"export_tvm: spec maps method names to their inputs, e.g. "
                      f'{{"forward": {{"x": nn.spec.Tensor((1, 784), "float32")}}}}, '
                      f"found {spec!r}")
    params = list(module.named_parameters())
    builder = BlockBuilder()
    for method_name, inputs in spec.items():
        method = _method(module, method_name, inputs)
        _export_method(builder, method_name, method, inputs, params)
    return builder.get(), params


def _method(module: Module, name: str, inputs):
    method = getattr(module, name, None)
    if not callable(method):
        raise IRError(f"export_tvm: spec names method {name!r}, but "
                      f"{type(module).__name__} has no such method")
    if not isinstance(inputs, dict):
        raise IRError(f"export_tvm: the spec of {name!r} maps input names to nn.spec.Tensor, "
                      f"found {inputs!r}")
    expected = list(inspect.signature(method).parameters)
    if list(inputs) != expected:
        raise IRError(f"export_tvm: {type(module).__name__}.{name} takes {expected}, but its "
                      f"spec names {list(inputs)}; name the inputs as the method does, in order")
    for arg, arg_spec in inputs.items():
        if not isinstance(arg_spec, nn_spec.Tensor):
            raise IRError(f"export_tvm: input {arg!r} of {name!r}: expected an "
                          f"nn.spec.Tensor(shape, dtype), found {arg_spec!r}")
    return method


def _export_method(builder, name, method, inputs, params) -> None:
    symbols: dict = {}
    input_vars = [arg_spec.as_var(arg, symbols) for arg, arg_spec in inputs.items()]
    # Fresh variables per function: a Relax variable is a parameter of one function only.
    param_vars = [Var(param_name, param.struct_info) for param_name, param in params]
    with _bound_parameters(params, param_vars):
        with builder.function(name, input_vars + param_vars,
                              attrs={"num_input": len(input_vars)}):
            with builder.dataflow():
                result = method(*(Tensor(_expr=v) for v in input_vars))
                output = builder.emit_output(_output_expr(result, name))
            builder.emit_func_output(output)


@contextlib.contextmanager
def _bound_parameters(params, param_vars):
    """Make each parameter stand for its function parameter while a method runs."""
    saved = [param._expr for _, param in params]
    try:
        for (_, param), var in zip(params, param_vars):
            param._expr = var
        yield
    finally:
        for (_, param), expr in zip(params, saved):
            param._expr = expr


def _output_expr(result, name: str):
    if isinstance(result, Tensor):
        return result._expr
    if isinstance(result, (list, tuple)):
        return Tuple([_output_expr(r, name) for r in result])
    raise IRError(f"export_tvm: {name} must return an nn.Tensor or a tuple of them, "
                  f"found {type(result).__name__}: {result!r}")
