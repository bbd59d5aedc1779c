"""``from_exported_program``: a ``torch.export.ExportedProgram`` into Relax, as current TVM.

::

    program = torch.export.export(model.eval(), (torch.randn(1, 3, 224, 224),))
    mod = relax.frontend.torch.from_exported_program(program)

The program's graph calls ATen operators (``aten.conv2d.default``,
``aten.linear.default``...). ``TABLE`` has one row per operator overload, keyed as torch
prints it without the ``aten.`` prefix; it covers both the graph ``torch.export`` gives
and the core ATen operators ``program.run_decompositions()`` lowers it to.
Parameters, buffers and lifted constants are placeholders of the graph whose values the
program holds; they become constants, or parameters with ``keep_params_as_input``.
"""
from __future__ import annotations

from ....ir.errors import IRError
from ...expr import Var
from ...struct_info import TensorStructInfo
from . import attention, nn_ops, ops, shape_ops
from .base import GraphTranslator, param_name, torch_dtype

_ELEMENTWISE = {
    "add.Tensor": ops.add, "add.Scalar": ops.add, "add_.Tensor": ops.add,
    "sub.Tensor": ops.sub, "sub.Scalar": ops.sub, "rsub.Scalar": ops.rsub,
    "rsub.Tensor": ops.rsub, "mul.Tensor": ops.mul, "mul.Scalar": ops.mul,
    "div.Tensor": ops.div, "div.Scalar": ops.div, "div.Tensor_mode": ops.div,
    "floor_divide.default": ops.floordiv, "pow.Tensor_Scalar": ops.pow_,
    "pow.Tensor_Tensor": ops.pow_, "neg.default": ops.neg, "maximum.default": ops.maximum,
    "minimum.default": ops.minimum, "eq.Tensor": ops.eq, "eq.Scalar": ops.eq,
    "ne.Tensor": ops.ne, "ne.Scalar": ops.ne, "lt.Tensor": ops.lt, "lt.Scalar": ops.lt,
    "le.Tensor": ops.le, "le.Scalar": ops.le, "ge.Scalar": ops.ge, "gt.Tensor": ops.gt, "gt.Scalar": ops.gt, "ge.Tensor": ops.ge,
    "relu.default": ops.relu, "relu_.default": ops.relu, "relu6.default": ops.relu6,
    "gelu.default": ops.gelu, "silu.default": ops.silu, "silu_.default": ops.silu,
    "sigmoid.default": ops.sigmoid, "tanh.default": ops.tanh, "exp.default": ops.exp,
    "log.default": ops.log, "sqrt.default": ops.sqrt, "rsqrt.default": ops.rsqrt,
    "erf.default": ops.erf, "abs.default": ops.abs_, "clamp.default": ops.clamp,
    "hardtanh.default": ops.hardtanh, "hardtanh_.default": ops.hardtanh,
    "hardsigmoid.default": nn_ops.hardsigmoid, "hardswish.default": nn_ops.hardswish,
    "hardswish_.default": nn_ops.hardswish, "leaky_relu.default": nn_ops.leaky_relu,
    "dropout.default": ops.dropout, "clone.default": ops.identity,
    "contiguous.default": ops.identity, "detach.default": ops.identity,
    "alias.default": ops.identity, "lift_fresh_copy.default": ops.identity,
    "_to_copy.default": shape_ops.to, "to.dtype": shape_ops.to,
    "type_as.default": shape_ops.type_as, "where.self": ops.where,
    "logical_not.default": ops.logical_not, "logical_and.default": ops.logical_and,
    "logical_or.default": ops.logical_or, "any.dim": ops.any_,
    "masked_fill.Scalar": ops.masked_fill, "masked_fill.Tensor": ops.masked_fill,
    "masked_fill_.Scalar": ops.masked_fill, "where.ScalarSelf": ops.where,
    "where.ScalarOther": ops.where, "reciprocal.default": ops.reciprocal,
    "_assert_tensor_metadata.default": ops.no_value,
}

_NN = {
    "softmax.int": ops.softmax, "_softmax.default": ops.softmax,
    "log_softmax.int": ops.log_softmax, "_log_softmax.default": ops.log_softmax,
    "mean.dim": ops.mean, "mean.default": ops.mean, "sum.dim_IntList": ops.sum_,
    "amax.default": ops.amax, "amin.default": ops.amin,
    "layer_norm.default": ops.layer_norm, "native_layer_norm.default": ops.native_layer_norm,
    "batch_norm.default": ops.batch_norm,
    "_native_batch_norm_legit_no_training.default": ops.batch_norm_no_training,
    "linear.default": ops.linear, "matmul.default": ops.matmul, "mm.default": ops.matmul,
    "bmm.default": ops.matmul, "addmm.default": ops.addmm,
    "baddbmm.default": ops.addmm,
    "conv2d.default": nn_ops.conv2d, "conv2d.padding": nn_ops.conv2d,
    "convolution.default": nn_ops.convolution,
    "conv_transpose2d.input": nn_ops.conv_transpose2d,
    "max_pool2d.default": nn_ops.max_pool2d,
    "max_pool2d_with_indices.default": nn_ops.max_pool2d_with_indices,
    "avg_pool2d.default": nn_ops.avg_pool2d,
    "adaptive_avg_pool2d.default": nn_ops.adaptive_avg_pool2d,
    "_adaptive_avg_pool2d.default": nn_ops.adaptive_avg_pool2d,
    "embedding.default": nn_ops.embedding_aten,
    "scaled_dot_product_attention.default": attention.scaled_dot_product_attention,
}

_SHAPES = {
    "view.default": shape_ops.reshape, "reshape.default": shape_ops.reshape,
    "_unsafe_view.default": shape_ops.reshape, "flatten.using_ints": shape_ops.flatten,
    "unflatten.int": shape_ops.unflatten, "permute.default": shape_ops.permute,
    "transpose.int": shape_ops.transpose, "t.default": shape_ops.t_,
    "unsqueeze.default": shape_ops.unsqueeze, "squeeze.dim": shape_ops.squeeze,
    "squeeze.dims": shape_ops.squeeze, "squeeze.default": shape_ops.squeeze,
    "expand.default": shape_ops.expand, "repeat.default": shape_ops.repeat,
    "cat.default": shape_ops.cat, "concat.default": shape_ops.cat,
    "stack.default": shape_ops.stack, "select.int": shape_ops.select,
    "narrow.default": shape_ops.narrow, "slice.Tensor": shape_ops.slice_,
    "index.Tensor": shape_ops.index, "split.Tensor": shape_ops.split,
    "split_with_sizes.default": shape_ops.split, "chunk.default": shape_ops.chunk,
    "unbind.int": shape_ops.unbind, "sym_size.int": shape_ops.sym_size,
    "full_like.default": shape_ops.full_like, "zeros_like.default": shape_ops.zeros_like,
    "ones_like.default": shape_ops.ones_like, "getitem": shape_ops.getitem,
    "arange.default": shape_ops.arange, "arange.start": shape_ops.arange,
    "arange.start_step": shape_ops.arange, "full.default": shape_ops.full,
    "zeros.default": shape_ops.zeros, "ones.default": shape_ops.ones,
    "scalar_tensor.default": shape_ops.scalar_tensor,
}

TABLE = {**_ELEMENTWISE, **_NN, **_SHAPES}


class ExportedProgramTranslator(GraphTranslator):
    frontend = "from_exported_program"
    table = TABLE

    def __init__(self, program, keep_params_as_input: bool, custom_convert_map=None):
        super().__init__(keep_params_as_input, custom_convert_map)
        self.program = program
        signature = program.graph_signature
        self.held_values = {**signature.inputs_to_parameters, **signature.inputs_to_buffers,
                            **signature.inputs_to_lifted_tensor_constants}

    def converter_key(self, node):
        if node.op != "call_function":
            return None
        name = str(node.target)
        if name.startswith("<built-in function"):
            return node.target.__name__
        return name[len("aten."):] if name.startswith("aten.") else name

    def held_value(self, node):
        """The tensor a parameter, buffer or constant placeholder stands for."""
        target = self.held_values[node.name]
        if target in self.program.state_dict:
            return self.weight(self.program.state_dict[target], target)
        return self.weight(self.program.constants[target], target)

    def translate(self, user_inputs: dict):
        for node in self.program.graph_module.graph.nodes:
            if node.op == "placeholder":
                self.env[node] = user_inputs[node.name] if node.name in user_inputs \
                    else self.held_value(node)
            elif node.op == "output":
                return self.retrieve(node.args[0])
            elif node.op == "call_function":
                self.env[node] = self.convert_call(node, self.converter_key(node))
            else:
                raise IRError(f"from_exported_program: node {node.name!r} of kind "
                              f"{node.op!r} is not supported")
        raise IRError("from_exported_program: the graph has no output node")


def _user_input_vars(program) -> dict:
    """name -> Var for each input the caller passes, shaped like the example inputs."""
    user_inputs = set(program.graph_signature.user_inputs)
    out = {}
    for node in program.graph_module.graph.nodes:
        if node.op == "placeholder" and node.name in user_inputs:
            value = node.meta.get("val")
            if value is None or not hasattr(value, "shape"):
                raise IRError(f"from_exported_program: input {node.name!r} is not a tensor "
                              f"({value!r}); only tensor inputs are supported")
            shape = tuple(value.shape)
            if not all(isinstance(d, int) for d in shape):
                raise IRError(f"from_exported_program: input {node.name!r} has a dynamic "
                              f"shape {shape}; export with static shapes")
            out[node.name] = Var(param_name(node.name),
                                 TensorStructInfo(shape, torch_dtype(value.dtype)))
    return out


def from_exported_program(exported_program, *, keep_params_as_input: bool = False,
                          unwrap_unit_return_tuple: bool = False,
                          no_bind_return_tuple: bool = False,
                          custom_convert_map: dict | None = None):
    """Translate ``torch.export.export(model, args)`` into an IRModule with ``main``.

    ``main`` takes the user inputs in order and returns a tuple of the outputs (a 1-tuple
    for one output, unless ``unwrap_unit_return_tuple``), as TVM's importer does. With
    ``keep_params_as_input`` the weights follow the inputs as parameters (attribute
    ``num_input``) and their values are kept in the ``params`` attribute
    (:func:`~mlcbench.relax.frontend.torch.detach_params`). ``custom_convert_map``
    adds or replaces rows of ``TABLE``: ``{"aten_op.overload": convert}``.

    >>> program = torch.export.export(model.eval(), (torch.randn(1, 3, 32, 32),))
    ... # doctest: +SKIP
    >>> mod = from_exported_program(program)                          # doctest: +SKIP
    """
    if not (hasattr(exported_program, "graph_signature")
            and hasattr(exported_program, "graph_module")):
        raise IRError(f"from_exported_program: expected a torch.export.ExportedProgram "
                      f"(torch.export.export(model, args)), found "
                      f"{type(exported_program).__name__}")
    translator = ExportedProgramTranslator(exported_program, keep_params_as_input,
                                           custom_convert_map)
    translator.check_supported(exported_program.graph_module.graph)
    user_inputs = _user_input_vars(exported_program)
    return translator.build(list(user_inputs.values()),
                            lambda: tuple(translator.translate(user_inputs)),
                            unwrap_unit_return_tuple)
