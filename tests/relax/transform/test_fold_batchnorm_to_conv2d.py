"""FoldBatchnormToConv2D: a batch norm after a convolution with constant weights becomes
the convolution's weight and bias; checked structurally and against numpy; batch norms
that cannot fold are left alone."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.relax import op
from mlcbench.script import ir as I, relax as R
from mlcbench.topi.testing import conv2d_nchw_python

FOLD = relax.transform.FoldBatchnormToConv2D()


# scale = gamma / sqrt(var + eps) = [4, 3] / sqrt([3, 8] + 1) = [2, 1]: exact in float32
@I.ir_module
class ConvBiasBatchnorm:
    @R.function
    def main(x: R.Tensor((1, 1, 4, 4), "float32")):
        with R.dataflow():
            lv0 = R.nn.conv2d(x, R.const([[[[1.5]]], [[[-2.0]]]], "float32"))
            lv1 = R.add(lv0, R.const([[[[0.5]], [[1.0]]]], "float32"))
            lv2 = R.nn.batch_norm(lv1, R.const([4.0, 3.0], "float32"),
                                  R.const([0.25, -1.0], "float32"),
                                  R.const([1.5, 2.0], "float32"),
                                  R.const([3.0, 8.0], "float32"), axis=1, epsilon=1.0)
            lv3 = lv2[0]
            gv = R.nn.relu(lv3)
            R.output(gv)
        return gv


# W' = W * scale; b' = beta + (b - mean) * scale = [0.25 - 2, -1 - 1]
@I.ir_module
class ConvBiasBatchnormFolded:
    @R.function
    def main(x: R.Tensor((1, 1, 4, 4), "float32")):
        with R.dataflow():
            lv0 = R.nn.conv2d(x, R.const([[[[3.0]]], [[[-2.0]]]], "float32"))
            lv1 = R.add(lv0, R.const([[[[-1.75]], [[-2.0]]]], "float32"))
            gv = R.nn.relu(lv1)
            R.output(gv)
        return gv


def test_batchnorm_after_conv_and_bias_is_folded_into_them():
    tvm.ir.assert_structural_equal(FOLD(ConvBiasBatchnorm), ConvBiasBatchnormFolded)


def test_folding_runs_in_the_default_pipeline():
    names = [p.info.name for p in relax.get_pipeline("zero").passes]
    assert names.index("FoldConstant") < names.index("FoldBatchnormToConv2D") \
        < names.index("LegalizeOps")


# -- numeric: the folded module computes what conv2d + batch norm compute -----------------

def _conv_batchnorm(shape, weight, stats, eps, bias=None, padding=0, groups=1, uses=()):
    """main(x) = batch_norm(conv2d(x, weight) [+ bias])[0], with the batch norm's three
    outputs returned when ``uses`` asks for them by index."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(shape, "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit(op.nn.conv2d(x, relax.const(weight), padding=padding,
                                       groups=groups))
            if bias is not None:
                out = bb.emit(op.add(out, relax.const(bias)))
            bn = bb.emit(op.nn.batch_norm(out, *(relax.const(s) for s in stats),
                                          epsilon=eps))
            outputs = [bb.emit(relax.TupleGetItem(bn, k)) for k in (0, *uses)]
            gv = bb.emit_output(relax.Tuple(outputs) if uses else outputs[0])
        bb.emit_func_output(gv)
    return bb.get()


def _reference(data, weight, stats, eps, bias=None, padding=0, groups=1):
    gamma, beta, mean, var = (s.astype("float64")[None, :, None, None] for s in stats)
    conv = conv2d_nchw_python(data.astype("float64"), weight.astype("float64"), 1,
                              (padding,) * 4, groups=groups)
    if bias is not None:
        conv = conv + bias
    return (conv - mean) / np.sqrt(var + eps) * gamma + beta


def _run(mod, data):
    vm = relax.VirtualMachine(relax.build(mod, "llvm", pipeline="default"), tvm.cpu())
    return vm["main"](tvm.nd.array(data))


def _random_case(rng, channels_in, channels_out, kernel, groups):
    weight = rng.standard_normal((channels_out, channels_in // groups, kernel, kernel))
    stats = [rng.uniform(0.5, 2.0, channels_out), rng.standard_normal(channels_out),
             rng.standard_normal(channels_out), rng.uniform(0.01, 3.0, channels_out)]
    return weight.astype("float32"), [s.astype("float32") for s in stats]


def _has_batch_norm(mod) -> bool:
    return "batch_norm" in mod.script()


@settings(max_examples=6, deadline=None)
@given(channels=st.sampled_from([(1, 1), (3, 5), (4, 8), (6, 3)]),
       kernel=st.sampled_from([1, 3]), eps=st.sampled_from([1e-5, 1e-3, 0.1]),
       bias_shape=st.sampled_from([None, "1O11", "O11"]), grouped=st.booleans(),
       seed=st.integers(0, 2**16))
def test_folded_conv_matches_numpy(channels, kernel, eps, bias_shape, grouped, seed):
    channels_in, channels_out = channels
    groups = channels_in if grouped and channels_out % channels_in == 0 else 1
    rng = np.random.default_rng(seed)
    weight, stats = _random_case(rng, channels_in, channels_out, kernel, groups)
    bias = None if bias_shape is None else rng.standard_normal(
        (1, channels_out, 1, 1) if bias_shape == "1O11" else (channels_out, 1, 1)
    ).astype("float32")
    data = rng.standard_normal((1, channels_in, 6, 5)).astype("float32")
    mod = _conv_batchnorm(data.shape, weight, stats, eps, bias, kernel // 2, groups)
    assert not _has_batch_norm(FOLD(mod))
    expected = _reference(data, weight, stats, eps, bias, kernel // 2, groups)
    np.testing.assert_allclose(_run(mod, data).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_the_running_statistics_outputs_stay_the_running_statistics():
    rng = np.random.default_rng(0)
    weight, stats = _random_case(rng, 2, 3, 1, 1)
    data = rng.standard_normal((1, 2, 3, 3)).astype("float32")
    mod = _conv_batchnorm(data.shape, weight, stats, 1e-5, uses=(1, 2))
    assert not _has_batch_norm(FOLD(mod))
    out, mean, var = _run(mod, data)
    np.testing.assert_allclose(out.numpy(), _reference(data, weight, stats, 1e-5),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(mean.numpy(), stats[2])
    np.testing.assert_array_equal(var.numpy(), stats[3])


# -- what is left alone ----------------------------------------------------------------------

@I.ir_module
class BatchnormOfParameters:
    @R.function
    def main(x: R.Tensor((1, 2, 4, 4), "float32"), gamma: R.Tensor((2,), "float32")):
        with R.dataflow():
            lv0 = R.nn.conv2d(x, R.const(np.ones((2, 2, 1, 1), "float32")))
            lv1 = R.nn.batch_norm(lv0, gamma, R.const([0.0, 1.0], "float32"),
                                  R.const([0.0, 1.0], "float32"),
                                  R.const([1.0, 1.0], "float32"))
            gv = lv1[0]
            R.output(gv)
        return gv


@I.ir_module
class ConvWeightParameter:
    @R.function
    def main(x: R.Tensor((1, 2, 4, 4), "float32"), w: R.Tensor((2, 2, 1, 1), "float32")):
        with R.dataflow():
            lv0 = R.nn.conv2d(x, w)
            lv1 = R.nn.batch_norm(lv0, R.const([1.0, 1.0], "float32"),
                                  R.const([0.0, 1.0], "float32"),
                                  R.const([0.0, 1.0], "float32"),
                                  R.const([1.0, 1.0], "float32"))
            gv = lv1[0]
            R.output(gv)
        return gv


@I.ir_module
class ConvUsedTwice:
    @R.function
    def main(x: R.Tensor((1, 2, 4, 4), "float32")):
        with R.dataflow():
            lv0 = R.nn.conv2d(x, R.const(np.ones((2, 2, 1, 1), "float32")))
            lv1 = R.nn.batch_norm(lv0, R.const([1.0, 1.0], "float32"),
                                  R.const([0.0, 1.0], "float32"),
                                  R.const([0.0, 1.0], "float32"),
                                  R.const([1.0, 1.0], "float32"))
            lv2 = lv1[0]
            gv = R.add(lv2, lv0)
            R.output(gv)
        return gv


@I.ir_module
class BiasAlongWidth:
    """A (2,) constant added to NCHW output varies along W, not along the channels."""
    @R.function
    def main(x: R.Tensor((1, 2, 4, 2), "float32")):
        with R.dataflow():
            lv0 = R.nn.conv2d(x, R.const(np.ones((2, 2, 1, 1), "float32")))
            lv1 = R.add(lv0, R.const([1.0, 2.0], "float32"))
            lv2 = R.nn.batch_norm(lv1, R.const([1.0, 1.0], "float32"),
                                  R.const([0.0, 1.0], "float32"),
                                  R.const([0.0, 1.0], "float32"),
                                  R.const([1.0, 1.0], "float32"))
            gv = lv2[0]
            R.output(gv)
        return gv


@I.ir_module
class BatchnormAfterRelu:
    @R.function
    def main(x: R.Tensor((1, 2, 4, 4), "float32")):
        with R.dataflow():
            lv0 = R.nn.relu(x)
            lv1 = R.nn.batch_norm(lv0, R.const([1.0, 1.0], "float32"),
                                  R.const([0.0, 1.0], "float32"),
                                  R.const([0.0, 1.0], "float32"),
                                  R.const([1.0, 1.0], "float32"))
            gv = lv1[0]
            R.output(gv)
        return gv


def test_batchnorms_that_cannot_fold_are_left_alone():
    for mod in (BatchnormOfParameters, ConvWeightParameter, ConvUsedTwice, BiasAlongWidth,
                BatchnormAfterRelu):
        assert FOLD(mod) is mod, mod


def test_non_constant_batchnorm_still_computes_the_same():
    """Left alone, the batch norm of a parameter still runs (and matches numpy)."""
    rng = np.random.default_rng(1)
    data = rng.standard_normal((1, 2, 4, 4)).astype("float32")
    gamma = np.array([0.5, 2.0], "float32")
    vm = relax.VirtualMachine(relax.build(BatchnormOfParameters, "llvm"), tvm.cpu())
    got = vm["main"](tvm.nd.array(data), tvm.nd.array(gamma)).numpy()
    stats = [gamma, np.array([0.0, 1.0], "float32"), np.array([0.0, 1.0], "float32"),
             np.array([1.0, 1.0], "float32")]
    expected = _reference(data, np.ones((2, 2, 1, 1), "float32"), stats, 1e-5)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


# -- an ONNX Conv -> BatchNormalization -> Relu with random weights, against onnxruntime ---

@settings(max_examples=3, deadline=None)
@given(channels=st.sampled_from([(3, 8), (4, 4), (8, 16)]), with_bias=st.booleans(),
       eps=st.sampled_from([1e-5, 1e-2]), seed=st.integers(0, 2**16))
def test_onnx_conv_batchnorm_is_folded_and_matches_onnxruntime(channels, with_bias, eps, seed):
    onnx = pytest.importorskip("onnx", reason="needs the onnx package")
    ort = pytest.importorskip("onnxruntime", reason="compares with onnxruntime")
    from onnx import helper, numpy_helper
    from mlcbench.relax.frontend.onnx import from_onnx
    channels_in, channels_out = channels
    rng = np.random.default_rng(seed)
    weight, stats = _random_case(rng, channels_in, channels_out, 3, 1)
    weights = {"w": weight, **dict(zip(("gamma", "beta", "mean", "var"), stats))}
    if with_bias:
        weights["b"] = rng.standard_normal(channels_out).astype("float32")
    conv_inputs = ["x", "w", "b"] if with_bias else ["x", "w"]
    nodes = [helper.make_node("Conv", conv_inputs, ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"],
                              ["n"], epsilon=eps),
             helper.make_node("Relu", ["n"], ["y"])]
    x = rng.standard_normal((1, channels_in, 7, 6)).astype("float32")
    graph = helper.make_graph(
        nodes, "conv_bn", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT,
                                       (1, channels_out, 7, 6))],
        [numpy_helper.from_array(a, n) for n, a in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    mod = from_onnx(model)
    assert _has_batch_norm(mod) and not _has_batch_norm(relax.get_pipeline("zero")(mod))
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(_run(mod, x).numpy(), session.run(None, {"x": x})[0],
                               rtol=1e-4, atol=1e-4)
