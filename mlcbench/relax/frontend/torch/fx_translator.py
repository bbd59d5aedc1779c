"""``from_fx``: a ``torch.fx.GraphModule`` (from ``torch.fx.symbolic_trace``) into Relax.

The MLC course's way in::

    graph_module = torch.fx.symbolic_trace(model.eval())
    mod = relax.frontend.torch.from_fx(graph_module, [((1, 3, 224, 224), "float32")])

``TABLE`` is the coverage: one row per torch function (keyed by its name, as in
``operator.add``, ``torch.flatten``, ``F.relu``), per tensor method (``Tensor.view``)
and per ``torch.nn`` module that symbolic tracing keeps whole (``nn.Conv2d``).
"""
from __future__ import annotations

import contextlib

from ....ir.errors import IRError
from ...expr import Var
from ...struct_info import TensorStructInfo
from . import attention, modules, nn_ops, ops, shape_ops
from .base import GraphTranslator, param_name

FUNCTIONS = {
    # arithmetic (operator.*, torch.*), also on the Python ints of shapes
    "add": ops.add, "iadd": ops.add, "sub": ops.sub, "isub": ops.sub, "rsub": ops.rsub,
    "mul": ops.mul, "imul": ops.mul, "truediv": ops.div, "div": ops.div,
    "floordiv": ops.floordiv, "floor_divide": ops.floordiv, "pow": ops.pow_, "neg": ops.neg,
    "maximum": ops.maximum, "minimum": ops.minimum, "eq": ops.eq, "ne": ops.ne,
    "lt": ops.lt, "le": ops.le, "gt": ops.gt, "ge": ops.ge,
    # elementwise functions
    "relu": ops.relu, "relu6": ops.relu6, "gelu": ops.gelu, "silu": ops.silu,
    "sigmoid": ops.sigmoid, "tanh": ops.tanh, "exp": ops.exp, "log": ops.log,
    "sqrt": ops.sqrt, "rsqrt": ops.rsqrt, "reciprocal": ops.reciprocal, "erf": ops.erf,
    "abs": ops.abs_, "clamp": ops.clamp, "clip": ops.clamp, "hardtanh": ops.hardtanh,
    "hardsigmoid": nn_ops.hardsigmoid, "hardswish": nn_ops.hardswish,
    "leaky_relu": nn_ops.leaky_relu, "dropout": ops.dropout, "where": ops.where,
    "masked_fill": ops.masked_fill, "logical_not": ops.logical_not,
    "logical_and": ops.logical_and, "logical_or": ops.logical_or, "any": ops.any_,
    # reductions and normalization
    "softmax": ops.softmax, "log_softmax": ops.log_softmax, "mean": ops.mean,
    "sum": ops.sum_, "amax": ops.amax, "amin": ops.amin, "layer_norm": ops.layer_norm,
    "batch_norm": ops.batch_norm,
    # linear algebra, convolution, pooling, attention
    "matmul": ops.matmul, "bmm": ops.matmul, "mm": ops.matmul, "linear": ops.linear,
    "addmm": ops.addmm, "baddbmm": ops.addmm, "conv2d": nn_ops.conv2d,
    "conv_transpose2d": nn_ops.conv_transpose2d, "max_pool2d": nn_ops.max_pool2d,
    "avg_pool2d": nn_ops.avg_pool2d, "adaptive_avg_pool2d": nn_ops.adaptive_avg_pool2d,
    "embedding": nn_ops.embedding,
    "scaled_dot_product_attention": attention.scaled_dot_product_attention,
    # shapes and indexing
    "getitem": shape_ops.getitem, "getattr": shape_ops.getattr_,
    "flatten": shape_ops.flatten, "reshape": shape_ops.reshape,
    "permute": shape_ops.permute, "transpose": shape_ops.transpose,
    "unsqueeze": shape_ops.unsqueeze, "squeeze": shape_ops.squeeze, "cat": shape_ops.cat,
    "concat": shape_ops.cat, "stack": shape_ops.stack, "split": shape_ops.split,
    "chunk": shape_ops.chunk, "unbind": shape_ops.unbind, "select": shape_ops.select,
    "narrow": shape_ops.narrow, "numel": shape_ops.numel, "full_like": shape_ops.full_like,
    "zeros_like": shape_ops.zeros_like, "ones_like": shape_ops.ones_like,
    # new tensors from static arguments
    "arange": shape_ops.arange, "full": shape_ops.full, "zeros": shape_ops.zeros,
    "ones": shape_ops.ones,
}

METHODS = {f"Tensor.{name}": convert for name, convert in {
    # arithmetic and elementwise
    "add": ops.add, "sub": ops.sub, "mul": ops.mul, "div": ops.div, "pow": ops.pow_,
    "floor_divide": ops.floordiv, "neg": ops.neg, "abs": ops.abs_, "relu": ops.relu,
    "gelu": ops.gelu, "silu": ops.silu, "sigmoid": ops.sigmoid, "tanh": ops.tanh,
    "exp": ops.exp, "log": ops.log, "sqrt": ops.sqrt, "rsqrt": ops.rsqrt,
    "reciprocal": ops.reciprocal, "erf": ops.erf, "clamp": ops.clamp,
    "masked_fill": ops.masked_fill, "masked_fill_": ops.masked_fill, "where": ops.where,
    "logical_not": ops.logical_not,
    # reductions and linear algebra
    "softmax": ops.softmax, "log_softmax": ops.log_softmax, "mean": ops.mean,
    "sum": ops.sum_, "amax": ops.amax, "matmul": ops.matmul,
    # values as they are
    "contiguous": ops.identity, "clone": ops.identity, "detach": ops.identity,
    # shapes, indexing and dtypes
    "view": shape_ops.reshape, "reshape": shape_ops.reshape, "flatten": shape_ops.flatten,
    "unflatten": shape_ops.unflatten, "permute": shape_ops.permute,
    "transpose": shape_ops.transpose, "t": shape_ops.t_, "unsqueeze": shape_ops.unsqueeze,
    "squeeze": shape_ops.squeeze, "expand": shape_ops.expand,
    "expand_as": shape_ops.expand_as, "repeat": shape_ops.repeat, "split": shape_ops.split,
    "chunk": shape_ops.chunk, "unbind": shape_ops.unbind, "select": shape_ops.select,
    "narrow": shape_ops.narrow, "size": shape_ops.size, "dim": shape_ops.dim,
    "numel": shape_ops.numel, "to": shape_ops.to, "type_as": shape_ops.type_as,
    "float": shape_ops.cast_to("float32"), "half": shape_ops.cast_to("float16"),
    "long": shape_ops.cast_to("int64"), "int": shape_ops.cast_to("int32"),
    "bool": shape_ops.cast_to("bool"),
}.items()}

MODULES = modules.TABLE

TABLE = {**FUNCTIONS, **METHODS, **MODULES}


class FXTranslator(GraphTranslator):
    frontend = "from_fx"
    table = TABLE

    def __init__(self, graph_module, keep_params_as_input: bool, custom_convert_map=None):
        super().__init__(keep_params_as_input, custom_convert_map)
        self.graph_module = graph_module
        self.named_modules = dict(graph_module.named_modules())
        self.module_path = ""

    def converter_key(self, node):
        if node.op == "call_function":
            return getattr(node.target, "__name__", str(node.target))
        if node.op == "call_method":
            return f"Tensor.{node.target}"
        if node.op == "call_module":
            module = self.named_modules[node.target]
            return f"nn.{type(module).__name__}" if _is_torch_module(module) \
                else f"{type(module).__module__}.{type(module).__name__}"
        return None

    def table_key_of(self, key) -> str:
        """A module class or a function as its table key (``nn.Conv2d`` -> "nn.Conv2d")."""
        if isinstance(key, type):
            return f"nn.{key.__name__}" if key.__module__.startswith("torch.nn.") \
                else f"{key.__module__}.{key.__name__}"
        if callable(key):
            return key.__name__
        return super().table_key_of(key)

    def module_weight(self, module, attr: str):
        """``module.<attr>`` as a Relax value (None where the module has none); ``attr``
        may be a path such as ``"out_proj.weight"``."""
        tensor = module
        for part in attr.split("."):
            tensor = getattr(tensor, part, None)
        if tensor is None:
            return None
        return self.weight(tensor, f"{self.module_path}.{attr}")

    @contextlib.contextmanager
    def submodule(self, name: str):
        """Name weights of a child module (``self_attn``) under its own path while a
        converter of the parent reads them."""
        saved = self.module_path
        self.module_path = f"{saved}.{name}"
        try:
            yield
        finally:
            self.module_path = saved

    def translate(self, input_vars):
        inputs = iter(input_vars)
        for node in self.graph_module.graph.nodes:
            if node.op == "placeholder":
                self.env[node] = _next_input(inputs, node)
            elif node.op == "get_attr":
                self.env[node] = self.weight(_fetch_attr(self.graph_module, node.target),
                                             node.target)
            elif node.op == "output":
                return self.retrieve(node.args[0])
            else:
                self.env[node] = self.convert(node)
        raise IRError("from_fx: the graph has no output node")

    def convert(self, node):
        key = self.converter_key(node)
        if node.op != "call_module":
            return self.convert_call(node, key)
        self.module_path = node.target
        return self.convert_call(node, key, receiver=(self.named_modules[node.target],))


def _is_torch_module(module) -> bool:
    return type(module).__module__.startswith("torch.nn.")


def _next_input(inputs, node):
    try:
        return next(inputs)
    except StopIteration:
        raise IRError(f"from_fx: input_info describes fewer inputs than the graph takes; "
                      f"nothing left for {node.name!r}") from None


def _fetch_attr(graph_module, target: str):
    value = graph_module
    for part in target.split("."):
        value = getattr(value, part)
    return value


def _input_vars(input_info, graph) -> list:
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    if not isinstance(input_info, (list, tuple)) or len(input_info) != len(placeholders):
        raise IRError(f"from_fx: input_info lists one (shape, dtype) per input, e.g. "
                      f'[((1, 3, 224, 224), "float32")]; the graph takes '
                      f"{len(placeholders)} input(s) {[n.name for n in placeholders]}, "
                      f"found {input_info!r}")
    out = []
    for node, info in zip(placeholders, input_info):
        if not (isinstance(info, (list, tuple)) and len(info) == 2):
            raise IRError(f"from_fx: input {node.name!r}: expected (shape, dtype), "
                          f"found {info!r}")
        shape, dtype = info
        out.append(Var(param_name(node.name),
                       TensorStructInfo(tuple(int(d) for d in shape), str(dtype))))
    return out


def from_fx(model, input_info, *, keep_params_as_input: bool = False,
            unwrap_unit_return_tuple: bool = False, no_bind_return_tuple: bool = False,
            custom_convert_map: dict | None = None):
    """Translate a traced ``torch.fx.GraphModule`` into an IRModule with ``main``.

    Parameters
    ----------
    model
        ``torch.fx.symbolic_trace(module)`` of a module in ``eval()`` mode.
    input_info
        ``[(shape, dtype), ...]``, one per input of ``forward``, e.g.
        ``[((1, 3, 224, 224), "float32")]``.
    keep_params_as_input
        False: weights become constants of the module. True: they become parameters of
        ``main`` after the inputs (attribute ``num_input``), and their values are kept in
        the ``params`` attribute; :func:`detach_params` takes them out.
    unwrap_unit_return_tuple
        Return the tensor itself when ``forward`` returns a 1-tuple.
    no_bind_return_tuple
        Accepted for TVM's signature; a returned tuple is always one Relax Tuple here.
    custom_convert_map
        Rows added to (or replacing rows of) ``TABLE``: ``{nn.Module class, function or
        table key: convert}``; ``convert(translator, *args, **kwargs)`` emits Relax through
        ``translator.emit`` (a module converter gets the module first).

    >>> gm = torch.fx.symbolic_trace(torch.nn.Linear(4, 2))           # doctest: +SKIP
    >>> mod = from_fx(gm, [((1, 4), "float32")])                      # doctest: +SKIP
    """
    if not (hasattr(model, "graph") and hasattr(model, "named_modules")):
        raise IRError(f"from_fx: expected a torch.fx.GraphModule (torch.fx.symbolic_trace("
                      f"model)), found {type(model).__name__}")
    translator = FXTranslator(model, keep_params_as_input, custom_convert_map)
    translator.check_supported(model.graph)
    input_vars = _input_vars(input_info, model.graph)
    return translator.build(input_vars, lambda: translator.translate(input_vars),
                            unwrap_unit_return_tuple)
