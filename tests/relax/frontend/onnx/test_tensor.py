"""Shape and data-movement converters against onnxruntime, across the opsets where their
operands moved from attributes to inputs."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from onnx import helper

from .conftest import check_model, check_node, make_model


def i64(*values):
    return np.array(values, dtype="int64")


def test_layout_ops(rng):
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"]),
             helper.make_node("Flatten", ["x"], ["f"], axis=2),
             helper.make_node("Transpose", ["x"], ["t"], perm=[2, 0, 1]),
             helper.make_node("Concat", ["x", "x"], ["c"], axis=-1),
             helper.make_node("Split", ["x", "sizes"], ["s0", "s1"], axis=2),
             helper.make_node("Unsqueeze", ["x", "ax0"], ["u"]),
             helper.make_node("Squeeze", ["u", "ax0"], ["sq"]),
             helper.make_node("Expand", ["x", "eshape"], ["e"]),
             helper.make_node("Tile", ["x", "reps"], ["tile"])]
    inits = {"shape": i64(0, -1), "sizes": i64(1, 3), "ax0": i64(0), "eshape": i64(2, 1, 1, 4),
             "reps": i64(1, 2, 1)}
    outs = ["r", "f", "t", "c", "s0", "s1", "sq", "e", "tile"]
    check_model(make_model(nodes, {"x": x}, outs, inits), {"x": x})


@settings(max_examples=5, deadline=None)
@given(start=st.integers(-5, 5), end=st.integers(-6, 6), step=st.sampled_from([-2, -1, 1, 2]))
def test_slice_matches_numpy_clamping(start, end, step):
    x = np.arange(2 * 5 * 3, dtype="float32").reshape(2, 5, 3)
    if len(range(5)[start:end:step]) == 0:
        end = start + step     # a non-empty selection keeps the output shape meaningful
    check_node("Slice", {"x": x}, initializers={"s": i64(start, 0), "e": i64(end, 99),
                                                "a": i64(1, 2), "st": i64(step, 2)})


def test_slice_and_split_before_opset_10_take_attributes(rng):
    x = rng.standard_normal((4, 6)).astype("float32")
    nodes = [helper.make_node("Slice", ["x"], ["s"], starts=[1], ends=[-1], axes=[1]),
             helper.make_node("Split", ["x"], ["a", "b"], axis=1, split=[2, 4]),
             helper.make_node("Unsqueeze", ["x"], ["one"], axes=[0]),
             helper.make_node("Squeeze", ["one"], ["sq"], axes=[0])]
    check_model(make_model(nodes, {"x": x}, ["s", "a", "b", "sq"], opset=9), {"x": x})


def test_gather_with_negative_and_runtime_indices(rng):
    x = rng.standard_normal((5, 3)).astype("float32")
    idx = np.array([[4, -1], [0, -5]], dtype="int64")
    nodes = [helper.make_node("Gather", ["x", "const_idx"], ["g"], axis=0),
             helper.make_node("Gather", ["x", "idx"], ["h"], axis=1)]
    model = make_model(nodes, {"x": x, "idx": np.array([2, -3], "int64")}, ["g", "h"],
                       {"const_idx": idx})
    check_model(model, {"x": x, "idx": np.array([2, -3], "int64")})


@pytest.mark.parametrize("opset", [11, 18])
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad(rng, opset, mode):
    x = rng.standard_normal((1, 2, 4, 5)).astype("float32")
    inits = {"pads": i64(0, 0, 1, 2, 0, 1, 2, 1), "v": np.array(0.5, "float32")}
    check_node("Pad", {"x": x}, {"mode": mode}, inits, opset=opset)


@pytest.mark.parametrize("kind", ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("opset", [13, 18])
def test_reductions(rng, kind, opset):
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    axes_as_input = opset >= 18 or kind == "ReduceSum"
    attrs = {"keepdims": 0} if axes_as_input else {"keepdims": 0, "axes": [0, -1]}
    check_node(kind, {"x": x}, attrs, {"axes": i64(0, -1)} if axes_as_input else None,
               opset=opset, rtol=1e-5, atol=1e-6)


def test_shape_arithmetic_is_folded_at_import(rng):
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape: only the Reshape reaches Relax."""
    from mlcbench.relax.frontend.onnx import from_onnx
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
             helper.make_node("Unsqueeze", ["batch", "zero1"], ["b1"]),
             helper.make_node("Concat", ["b1", "minus1"], ["target"], axis=0),
             helper.make_node("ConstantOfShape", ["b1"], ["ones"],
                              value=helper.make_tensor("v", 1, [1], [1.0])),
             helper.make_node("Reshape", ["x", "target"], ["flat"]),
             helper.make_node("Unsqueeze", ["ones", "one"], ["ones_col"]),
             helper.make_node("Mul", ["flat", "ones_col"], ["y"])]
    inits = {"zero": np.array(0, "int64"), "zero1": i64(0), "one": i64(1), "minus1": i64(-1)}
    model = make_model(nodes, {"x": x}, ["y"], inits)
    check_model(model, {"x": x})
    text = from_onnx(model).script()
    assert "R.reshape" in text and "R.multiply" in text
    assert "R.take" not in text and "R.concat" not in text


@pytest.mark.parametrize("attrs", [
    {"mode": "nearest"},
    {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
    {"mode": "linear"},
    {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
    {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
], ids=["nearest", "nearest_asym_floor", "linear", "linear_align", "linear_pytorch"])
def test_resize_by_scales(rng, attrs):
    x = rng.standard_normal((1, 2, 4, 5)).astype("float32")
    inits = {"roi": np.array([], "float32"), "scales": np.array([1, 1, 2.0, 1.5], "float32")}
    check_node("Resize", {"x": x}, attrs, inits, opset=13)


def test_resize_by_sizes_and_opset_10(rng):
    x = rng.standard_normal((1, 2, 6, 4)).astype("float32")
    check_node("Resize", {"x": x}, {"mode": "linear"},
               {"roi": np.array([], "float32"), "scales": np.array([], "float32"),
                "sizes": i64(1, 2, 3, 7)}, opset=13)
    check_node("Resize", {"x": x}, {"mode": "nearest"},
               {"scales": np.array([1, 1, 2, 3], "float32")}, opset=10)
