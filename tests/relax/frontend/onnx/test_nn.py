"""Layer converters against onnxruntime: Conv (groups, dilation, pads, auto_pad, 1-D),
ConvTranspose, Gemm, MatMul, BatchNormalization, pools, LRN, Softmax, the norms."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from onnx import helper

from .conftest import check_model, check_node, make_model


@settings(max_examples=5, deadline=None)
@given(groups=st.sampled_from([1, 2]), k=st.integers(1, 3), stride=st.integers(1, 2),
       dilation=st.integers(1, 2), pad=st.integers(0, 2),
       auto_pad=st.sampled_from(["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
def test_conv(groups, k, stride, dilation, pad, auto_pad):
    rng = np.random.default_rng(k * 7 + pad)
    x = rng.standard_normal((1, 4, 7, 6)).astype("float32")
    w = rng.standard_normal((6, 4 // groups, k, k)).astype("float32")
    b = rng.standard_normal(6).astype("float32")
    attrs = {"group": groups, "strides": [stride, stride], "auto_pad": auto_pad,
             "dilations": [dilation, dilation] if auto_pad == "NOTSET" else [1, 1]}
    if auto_pad == "NOTSET":
        attrs["pads"] = [pad, 0, pad, pad]
    check_node("Conv", {"x": x}, attrs, {"w": w, "b": b}, rtol=1e-4, atol=1e-4)


def test_conv_1d(rng):
    x = rng.standard_normal((2, 3, 9)).astype("float32")
    w = rng.standard_normal((4, 3, 3)).astype("float32")
    check_node("Conv", {"x": x}, {"pads": [1, 2], "strides": [2]}, {"w": w}, rtol=1e-4,
               atol=1e-4)


@pytest.mark.parametrize("attrs", [
    {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]},
    {"strides": [2, 1], "group": 2, "dilations": [2, 1]},
    {"strides": [2, 2], "output_shape": [10, 10]},
    {"strides": [2, 2], "auto_pad": "SAME_UPPER"},
], ids=["pads", "groups_dilation", "output_shape", "same_upper"])
def test_conv_transpose(rng, attrs):
    x = rng.standard_normal((1, 4, 5, 5)).astype("float32")
    w = rng.standard_normal((4, 3, 3, 3)).astype("float32")
    check_node("ConvTranspose", {"x": x}, attrs, {"w": w, "b": np.ones(3 * attrs.get(
        "group", 1), "float32")}, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("trans_a, trans_b, alpha, beta", [(0, 0, 1.0, 1.0), (1, 1, 0.5, 2.0)])
def test_gemm_and_matmul(rng, trans_a, trans_b, alpha, beta):
    a = rng.standard_normal((3, 5) if not trans_a else (5, 3)).astype("float32")
    b = rng.standard_normal((5, 4) if not trans_b else (4, 5)).astype("float32")
    c = rng.standard_normal(4).astype("float32")
    nodes = [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=trans_a, transB=trans_b,
                              alpha=alpha, beta=beta),
             helper.make_node("MatMul", ["y", "m"], ["z"])]
    m = rng.standard_normal((2, 4, 6)).astype("float32")
    model = make_model(nodes, {"a": a}, ["y", "z"], {"b": b, "c": c, "m": m})
    check_model(model, {"a": a}, rtol=1e-4, atol=1e-4)


def test_batch_norm_and_instance_norm(rng):
    x = rng.standard_normal((2, 3, 4, 5)).astype("float32")
    params = {"s": rng.standard_normal(3).astype("float32"),
              "bias": rng.standard_normal(3).astype("float32"),
              "mean": rng.standard_normal(3).astype("float32"),
              "var": rng.uniform(0.5, 2, 3).astype("float32")}
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "bias", "mean", "var"], ["y"],
                              epsilon=1e-3),
             helper.make_node("InstanceNormalization", ["x", "s", "bias"], ["z"])]
    model = make_model(nodes, {"x": x}, ["y", "z"], params)
    check_model(model, {"x": x}, rtol=1e-4, atol=1e-4)


@settings(max_examples=6, deadline=None)
@given(kind=st.sampled_from(["MaxPool", "AveragePool"]), k=st.integers(2, 3),
       stride=st.integers(1, 2), pad=st.integers(0, 1), ceil_mode=st.sampled_from([0, 1]),
       count_include_pad=st.sampled_from([0, 1]))
def test_pools(kind, k, stride, pad, ceil_mode, count_include_pad):
    x = np.random.default_rng(k + stride).standard_normal((1, 2, 7, 8)).astype("float32")
    attrs = {"kernel_shape": [k, k], "strides": [stride, stride], "pads": [pad] * 4,
             "ceil_mode": ceil_mode}
    if kind == "AveragePool":
        attrs["count_include_pad"] = count_include_pad
    check_node(kind, {"x": x}, attrs)


def test_global_pools_lrn_dropout_softmax(rng):
    x = rng.standard_normal((1, 5, 4, 3)).astype("float32")
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["avg"]),
             helper.make_node("GlobalMaxPool", ["x"], ["max"]),
             helper.make_node("LRN", ["x"], ["lrn"], size=3, alpha=1e-3, beta=0.7, bias=1.5),
             helper.make_node("Dropout", ["x"], ["drop"]),
             helper.make_node("Softmax", ["x"], ["sm"], axis=1),
             helper.make_node("LogSoftmax", ["x"], ["lsm"])]
    model = make_model(nodes, {"x": x}, [n.output[0] for n in nodes])
    check_model(model, {"x": x}, rtol=1e-5, atol=1e-6)


def test_softmax_before_opset_13_coerces_to_2d(rng):
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    check_node("Softmax", {"x": x}, {"axis": 1}, opset=11)


def test_layer_norm(rng):
    x = rng.standard_normal((2, 3, 8)).astype("float32")
    check_node("LayerNormalization", {"x": x}, {"axis": -1, "epsilon": 1e-5},
               {"g": rng.standard_normal(8).astype("float32"),
                "b": rng.standard_normal(8).astype("float32")}, rtol=1e-4, atol=1e-5)
