"""The converter table: one row per ONNX operator, with the opsets its converter handles.

Coverage reads off this table (``supported_operators()`` prints it). A converter covers
every opset of its row; operands that moved between opsets (attribute -> input) are read
either way by ``tensor.attr_or_input``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ... import op
from . import elementwise as ew, nn, tensor as tn

MIN_OPSET = 6      # the conformance cases of the onnx wheel start at opset 6
MAX_OPSET = 21


@dataclass(frozen=True)
class Converter:
    op_type: str
    convert: Callable
    since: int = MIN_OPSET     # first opset whose spelling of the operator is handled
    until: int = MAX_OPSET


_ROWS = [
    # elementwise arithmetic with numpy broadcasting
    Converter("Add", ew.binary(op.add)),
    Converter("Sub", ew.binary(op.subtract)),
    Converter("Mul", ew.binary(op.multiply)),
    Converter("Div", ew.binary(op.divide)),
    Converter("Pow", ew.convert_pow),
    Converter("Sqrt", ew.unary(op.sqrt)),
    Converter("Exp", ew.unary(op.exp)),
    Converter("Log", ew.unary(op.log)),
    Converter("Neg", ew.unary(op.negative)),
    Converter("Abs", ew.unary(op.abs)),
    Converter("Reciprocal", ew.convert_reciprocal),
    Converter("Erf", ew.unary(op.erf), since=9),
    Converter("Sum", ew.variadic(op.add)),
    Converter("Min", ew.variadic(op.minimum)),
    Converter("Max", ew.variadic(op.maximum)),
    Converter("Mean", ew.convert_mean),
    Converter("Equal", ew.binary(op.equal)),
    Converter("Less", ew.binary(op.less)),
    Converter("Greater", ew.binary(op.greater)),
    Converter("Not", ew.convert_not),
    Converter("Where", ew.convert_where, since=9),
    Converter("Cast", ew.convert_cast),
    Converter("Identity", ew.convert_identity),
    # activations
    Converter("Relu", ew.unary(op.nn.relu)),
    Converter("LeakyRelu", ew.convert_leaky_relu),
    Converter("PRelu", ew.convert_prelu),
    Converter("Elu", ew.convert_elu),
    Converter("Selu", ew.convert_selu),
    Converter("Sigmoid", ew.unary(op.sigmoid)),
    Converter("Tanh", ew.unary(op.tanh)),
    Converter("Softplus", ew.convert_softplus),
    Converter("Softsign", ew.convert_softsign),
    Converter("Gelu", ew.convert_gelu, since=20),
    Converter("Clip", ew.convert_clip),
    Converter("HardSigmoid", ew.convert_hard_sigmoid),
    Converter("HardSwish", ew.convert_hard_swish, since=14),
    # layers
    Converter("Conv", nn.convert_conv),
    Converter("ConvTranspose", nn.convert_conv_transpose),
    Converter("Gemm", nn.convert_gemm),
    Converter("MatMul", nn.convert_matmul),
    Converter("BatchNormalization", nn.convert_batch_norm),
    Converter("InstanceNormalization", nn.convert_instance_norm),
    Converter("LayerNormalization", nn.convert_layer_norm, since=17),
    Converter("MaxPool", nn.convert_pool("max")),
    Converter("AveragePool", nn.convert_pool("avg")),
    Converter("GlobalAveragePool", nn.convert_global_pool("avg")),
    Converter("GlobalMaxPool", nn.convert_global_pool("max")),
    Converter("LRN", nn.convert_lrn),
    Converter("Dropout", nn.convert_dropout),
    Converter("Softmax", nn.convert_softmax(log=False)),
    Converter("LogSoftmax", nn.convert_softmax(log=True)),
    # shapes and data movement
    Converter("Shape", tn.convert_shape),
    Converter("Size", tn.convert_size),
    Converter("Constant", tn.convert_constant),
    Converter("ConstantOfShape", tn.convert_constant_of_shape, since=9),
    Converter("Reshape", tn.convert_reshape),
    Converter("Flatten", tn.convert_flatten),
    Converter("Transpose", tn.convert_transpose),
    Converter("Concat", tn.convert_concat),
    Converter("Split", tn.convert_split),
    Converter("Slice", tn.convert_slice),
    Converter("Gather", tn.convert_gather),
    Converter("Squeeze", tn.convert_squeeze),
    Converter("Unsqueeze", tn.convert_unsqueeze),
    Converter("Expand", tn.convert_expand, since=8),
    Converter("Tile", tn.convert_tile),
    Converter("Pad", tn.convert_pad),
    Converter("ReduceMean", tn.convert_reduce(op.mean, 18)),
    Converter("ReduceSum", tn.convert_reduce(op.sum, 13)),
    Converter("ReduceMax", tn.convert_reduce(op.max, 18)),
    Converter("ReduceMin", tn.convert_reduce(op.min, 18)),
    Converter("Resize", tn.convert_resize, since=10),
    Converter("Upsample", tn.convert_resize, until=9),
]

CONVERTERS: dict[str, Converter] = {row.op_type: row for row in _ROWS}


def supported_operators() -> str:
    """The table as text: one line per operator with its opset range."""
    return "\n".join(f"{row.op_type:<24}{row.since:>3} .. {row.until}" for row in _ROWS)
