"""What the importer and the converters share: the error and the node view."""
from __future__ import annotations

from ....ir.errors import MLCBenchError
from ...expr import TupleGetItem


class OnnxImportError(MLCBenchError):
    """An ONNX model that cannot be imported: what was expected, what was found, where."""


class Node:
    """One ONNX node as a converter sees it: inputs already looked up in ``env`` (a Relax
    expression, a numpy array, or None for an omitted optional input)."""

    def __init__(self, proto, inputs, opset: int):
        from onnx import helper
        self.proto = proto
        self.op_type = proto.op_type
        self.name = proto.name or f"{proto.op_type} -> {', '.join(proto.output)}"
        self.inputs = inputs
        self.opset = opset
        self.attrs = {a.name: helper.get_attribute_value(a) for a in proto.attribute}
        self.num_outputs = len(proto.output)

    def attr(self, name: str, default=None):
        value = self.attrs.get(name, default)
        return value.decode() if isinstance(value, bytes) else value

    def input(self, index: int):
        return self.inputs[index] if index < len(self.inputs) else None

    def fail(self, message: str) -> OnnxImportError:
        return OnnxImportError(f"ONNX node {self.name!r} ({self.op_type}, opset {self.opset}): "
                               f"{message}")


def tuple_outputs(g, value, count: int) -> list:
    """The fields of a tuple-valued expression as separately bound variables."""
    var = g.emit(value)
    return [g.emit(TupleGetItem(var, k)) for k in range(count)]
