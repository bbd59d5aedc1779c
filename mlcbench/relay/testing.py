"""``relay.testing``: small models for examples and tests, as ONNX graphs.

TVM's ``relay.testing`` builds workloads (ResNet, VGG ...) in Relay; here the models
are ONNX: the nine "light" networks that ship inside the ``onnx`` wheel, and tiny
graphs built with ``onnx.helper`` that compile in about a second.

>>> path = light_model_path("squeezenet")          # doctest: +SKIP
>>> model = tiny_cnn()                             # an onnx.ModelProto  # doctest: +SKIP
"""
from __future__ import annotations

import os

import numpy as np

from ..ir.errors import MLCBenchError

LIGHT_MODELS = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
                "shufflenet", "squeezenet", "vgg19", "zfnet512")


def light_model_path(name: str) -> str:
    """Path of ``light_<name>.onnx`` in the installed onnx wheel."""
    import onnx
    if name not in LIGHT_MODELS:
        raise MLCBenchError(f"light_model_path: no light model {name!r}; the onnx wheel "
                            f"has {list(LIGHT_MODELS)}")
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light",
                        f"light_{name}.onnx")


def tiny_cnn(batch: int = 1, channels: int = 3, size: int = 8, filters: int = 4,
             classes: int = 3, seed: int = 0):
    """data (batch, channels, size, size) -> Conv 3x3 -> Relu -> GlobalAveragePool ->
    Flatten -> Gemm -> Softmax -> prob (batch, classes); weights are initializers."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    weights = {
        "conv_w": rng.standard_normal((filters, channels, 3, 3)).astype("float32"),
        "conv_b": rng.standard_normal(filters).astype("float32"),
        "fc_w": rng.standard_normal((classes, filters)).astype("float32"),
        "fc_b": rng.standard_normal(classes).astype("float32"),
    }
    nodes = [
        helper.make_node("Conv", ["data", "conv_w", "conv_b"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("GlobalAveragePool", ["relu"], ["pool"]),
        helper.make_node("Flatten", ["pool"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["prob"], axis=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT,
                                       [batch, channels, size, size])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [batch, classes])],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def tiny_mlp(features: int = 10, hidden: int = 8, classes: int = 4, seed: int = 0):
    """input (1, features) -> Gemm -> Relu -> Gemm -> output (1, classes): the model
    of the TVMC tutorial's ``inputs = {"input": np.random.randn(1, 10)}``."""
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    weights = {"w1": rng.standard_normal((hidden, features)).astype("float32"),
               "b1": rng.standard_normal(hidden).astype("float32"),
               "w2": rng.standard_normal((classes, hidden)).astype("float32"),
               "b2": rng.standard_normal(classes).astype("float32")}
    nodes = [helper.make_node("Gemm", ["input", "w1", "b1"], ["h"], transB=1),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["output"], transB=1)]
    graph = helper.make_graph(
        nodes, "tiny_mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, features])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, classes])],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def tiny_matmul(features: int = 10, classes: int = 4, seed: int = 0):
    """input (1, features) -> MatMul -> output (1, classes): one kernel, for quick tuning."""
    from onnx import TensorProto, helper, numpy_helper
    weight = np.random.default_rng(seed).standard_normal((features, classes)).astype("float32")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["input", "w"], ["output"])], "tiny_matmul",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, features])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, classes])],
        initializer=[numpy_helper.from_array(weight, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def light_model_case(name: str):
    """``(model, {input name: data}, stored output)`` of a light model: the input is the
    ramp onnx's backend test feeds it, the output the one stored beside the model."""
    import onnx
    from onnx import numpy_helper
    path = light_model_path(name)
    model = onnx.load(path)
    initializers = {t.name for t in model.graph.initializer}
    # Older ONNX files list initializers among the inputs too: the data input is the other one.
    info = next(i for i in model.graph.input if i.name not in initializers)
    shape = tuple(d.dim_value for d in info.type.tensor_type.shape.dim)
    count = int(np.prod(shape))
    # The same ramp onnx's backend test feeds, so the stored output applies.
    data = (np.arange(count).reshape(shape) / count).astype("float32")
    stored = numpy_helper.to_array(onnx.load_tensor(path[:-len(".onnx")] + "_output_0.pb"))
    return model, {info.name: data}, stored


def with_varied_weights(model, seed: int = 0):
    """A copy of ``model`` whose ``ConstantOfShape`` weights vary element by element.

    The light models store their weights as fills (every element of a conv weight is
    0.02, say), so a wrong index into a weight goes unseen. Each fill of a constant
    shape becomes an initializer of the fill value times uniform(0.5, 1.5): the same
    signs and magnitudes (a variance stays positive), different values everywhere."""
    from onnx import numpy_helper
    model_copy = type(model)()
    model_copy.CopyFrom(model)
    graph, rng = model_copy.graph, np.random.default_rng(seed)
    shapes = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    kept = []
    for node in graph.node:
        if node.op_type != "ConstantOfShape" or node.input[0] not in shapes:
            kept.append(node)
            continue
        # ConstantOfShape fills with 0.0 when it has no value attribute.
        fill = next((numpy_helper.to_array(a.t) for a in node.attribute if a.name == "value"),
                    np.zeros(1, "float32"))
        shape = tuple(int(d) for d in shapes[node.input[0]])
        values = fill.reshape(()) * rng.uniform(0.5, 1.5, shape)
        graph.initializer.append(numpy_helper.from_array(values.astype(fill.dtype),
                                                         node.output[0]))
    del graph.node[:]
    graph.node.extend(kept)
    return model_copy


def reference_outputs(model, inputs: dict) -> list:
    """The outputs of ``model`` on ``inputs`` by onnx's reference evaluator."""
    from onnx.reference import ReferenceEvaluator
    return [np.asarray(o) for o in ReferenceEvaluator(model).run(None, inputs)]


__all__ = ["LIGHT_MODELS", "light_model_case", "light_model_path", "reference_outputs", "tiny_cnn", "tiny_matmul",
           "tiny_mlp", "with_varied_weights"]
