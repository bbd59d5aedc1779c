"""Elementwise converters against onnxruntime: arithmetic with broadcasting, activations,
Clip, Cast, Where, the variadic Sum/Min/Max."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from onnx import helper

from .conftest import check_model, check_node, make_model


def shapes_that_broadcast():
    """Two shapes that broadcast: drop leading axes and set some extents to 1."""
    base = st.lists(st.integers(1, 4), min_size=1, max_size=3)
    return base.flatmap(lambda s: st.tuples(
        st.just(tuple(s)),
        st.lists(st.booleans(), min_size=len(s), max_size=len(s)),
        st.integers(0, len(s) - 1)).map(
            lambda t: (t[0], tuple(1 if ones else d for d, ones in zip(t[0], t[1]))[t[2]:])))


@settings(max_examples=4, deadline=None)
@given(shapes=shapes_that_broadcast(), swap=st.booleans())
def test_arithmetic_broadcasts_like_onnxruntime(shapes, swap):
    rng = np.random.default_rng(len(shapes[0]) * 10 + len(shapes[1]))
    a_shape, b_shape = shapes[::-1] if swap else shapes
    a = rng.standard_normal(a_shape).astype("float32")
    b = rng.uniform(0.5, 2.0, b_shape).astype("float32")
    nodes = [helper.make_node(kind, ["a", "b"], [f"y_{kind}"])
             for kind in ("Add", "Sub", "Mul", "Div", "Min", "Max", "Sum")]
    nodes.append(helper.make_node("Pow", ["b", "a"], ["y_Pow"]))
    model = make_model(nodes, {"a": a, "b": b}, [n.output[0] for n in nodes])
    check_model(model, {"a": a, "b": b}, rtol=1e-4)


UNARY = ["Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Relu", "Sigmoid", "Tanh", "Erf",
         "Softplus", "Softsign", "HardSwish", "Identity"]


def test_unary_functions(rng):
    x = (rng.uniform(0.1, 3.0, (2, 3, 4)) * rng.choice([-1, 1], (2, 3, 4))).astype("float32")
    positive = np.abs(x).astype("float32")
    nodes = [helper.make_node(kind, ["p" if kind in ("Sqrt", "Log") else "x"], [f"y_{kind}"])
             for kind in UNARY]
    nodes += [helper.make_node("LeakyRelu", ["x"], ["y_leaky"], alpha=0.3),
              helper.make_node("HardSigmoid", ["x"], ["y_hsig"], alpha=0.3, beta=0.4),
              helper.make_node("Elu", ["x"], ["y_elu"], alpha=0.7),
              helper.make_node("Selu", ["x"], ["y_selu"])]
    model = make_model(nodes, {"x": x, "p": positive}, [n.output[0] for n in nodes])
    check_model(model, {"x": x, "p": positive}, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(rng, approximate):
    x = rng.standard_normal((3, 5)).astype("float32")
    check_node("Gelu", {"x": x}, {"approximate": approximate}, opset=20)


@pytest.mark.parametrize("opset, bounds", [(9, {"min": -0.5, "max": 0.5}), (13, (-0.25, 0.75)),
                                           (13, (-0.25, None))])
def test_clip_bounds_as_attributes_and_as_inputs(rng, opset, bounds):
    x = rng.standard_normal((4, 5)).astype("float32")
    if isinstance(bounds, dict):
        check_node("Clip", {"x": x}, bounds, opset=opset)
        return
    inits = {"lo": np.array(bounds[0], "float32")}
    if bounds[1] is not None:
        inits["hi"] = np.array(bounds[1], "float32")
    check_node("Clip", {"x": x}, initializers=inits, opset=opset)


def test_cast_where_and_comparisons(rng):
    a = rng.standard_normal((3, 4)).astype("float32")
    b = rng.standard_normal((4,)).astype("float32")
    nodes = [helper.make_node("Less", ["a", "b"], ["lt"]),
             helper.make_node("Where", ["lt", "a", "b"], ["w"]),
             helper.make_node("Cast", ["a"], ["i"], to=6),          # int32
             helper.make_node("Cast", ["lt"], ["f"], to=1),         # bool -> float32
             helper.make_node("Greater", ["a", "b"], ["gt"]),
             helper.make_node("Not", ["gt"], ["ngt"])]
    model = make_model(nodes, {"a": a, "b": b}, ["w", "i", "f", "ngt"])
    check_model(model, {"a": a, "b": b})


def test_prelu_per_channel_slope(rng):
    x = rng.standard_normal((1, 3, 4, 4)).astype("float32")
    check_node("PRelu", {"x": x}, initializers={"s": np.array([0.1, 0.2, 0.3], "float32")
                                                  .reshape(3, 1, 1)})
