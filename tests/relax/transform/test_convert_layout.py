"""ConvertLayout: convolutions in NHWC with the layout-free ops between them; permutes only
where a value enters or leaves the chain; checked structurally and against NCHW builds."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir.errors import IRError
from mlcbench.relax.transform.convert_layout import ConvertLayoutForTarget, MIN_CONV_MACS
from mlcbench.script import ir as I, relax as R
from mlcbench.target import Target

NHWC = relax.transform.ConvertLayout({"relax.nn.conv2d": ["NHWC", "default"]})
W0 = np.arange(2 * 3 * 3 * 3, dtype="float32").reshape(2, 3, 3, 3) / 50
W1 = np.arange(4 * 2, dtype="float32").reshape(4, 2, 1, 1) / 10
B0 = np.array([0.5, -1.0], "float32").reshape(1, 2, 1, 1)


@I.ir_module
class Chain:
    @R.function
    def main(x: R.Tensor((1, 3, 6, 6), "float32")):
        with R.dataflow():
            lv0 = R.nn.conv2d(x, R.const(W0), padding=1)
            lv1 = R.add(lv0, R.const(B0))
            lv2 = R.nn.relu(lv1)
            lv3 = R.nn.conv2d(lv2, R.const(W1))
            gv = R.reshape(lv3, (1, 144))
            R.output(gv)
        return gv


@I.ir_module
class ChainNHWC:
    @R.function
    def main(x: R.Tensor((1, 3, 6, 6), "float32")):
        with R.dataflow():
            lv = R.permute_dims(x, axes=(0, 2, 3, 1))
            lv0 = R.nn.conv2d(lv, R.const(W0.transpose(2, 3, 1, 0).copy()), padding=1,
                              data_layout="NHWC", kernel_layout="HWIO")
            lv1 = R.add(lv0, R.const(B0.transpose(0, 2, 3, 1).copy()))
            lv2 = R.nn.relu(lv1)
            lv3 = R.nn.conv2d(lv2, R.const(W1.transpose(2, 3, 1, 0).copy()),
                              data_layout="NHWC", kernel_layout="HWIO")
            lv4 = R.permute_dims(lv3, axes=(0, 3, 1, 2))
            gv = R.reshape(lv4, (1, 144))
            R.output(gv)
        return gv


def test_a_chain_of_convolutions_runs_channels_last_between_two_permutes():
    tvm.ir.assert_structural_equal(NHWC(Chain), ChainNHWC)


def _call(mod, *args):
    """``mod``'s main built and called on numpy ``args``: an NDArray or a tuple of them."""
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), tvm.cpu())
    return vm["main"](*[tvm.nd.array(a) for a in args])


def _run(mod, *args):
    return _call(mod, *args).numpy()


def test_the_converted_chain_computes_what_the_nchw_one_does():
    x = np.random.default_rng(0).standard_normal((1, 3, 6, 6)).astype("float32")
    with tvm.transform.PassContext(disabled_pass=["ConvertLayoutForTarget"]):
        want = _run(Chain, x)
    np.testing.assert_allclose(_run(NHWC(Chain), x), want, rtol=1e-5, atol=1e-5)


def _network(channels: int, size: int, pool: str, weight_arg: bool):
    """conv -> bias -> relu -> pool -> (conv, conv) concat -> + residual -> global pool."""
    rng = np.random.default_rng(channels * 100 + size)
    w0 = rng.standard_normal((channels, 3, 3, 3)).astype("float32")
    w1 = rng.standard_normal((channels, channels, 1, 1)).astype("float32")
    w2 = rng.standard_normal((channels, channels, 3, 3)).astype("float32")
    bias = rng.standard_normal((channels, 1, 1)).astype("float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((1, 3, size, size), "float32"))
    params = [x]
    if weight_arg:
        w0_var = relax.Var("w0", R.Tensor(w0.shape, "float32"))
        params.append(w0_var)
    pooled = size // 2
    residual = relax.Var("r", R.Tensor((1, 2 * channels, pooled, pooled), "float32"))
    params.append(residual)
    with bb.function("main", params):
        with bb.dataflow():
            conv0 = bb.emit(relax.op.nn.conv2d(x, w0_var if weight_arg else relax.const(w0),
                                               padding=1))
            biased = bb.emit(relax.op.add(conv0, relax.const(bias)))
            act = bb.emit(relax.op.nn.relu(biased))
            pool_fn = relax.op.nn.max_pool2d if pool == "max" else relax.op.nn.avg_pool2d
            down = bb.emit(pool_fn(act, pool_size=2, strides=2))
            a = bb.emit(relax.op.nn.conv2d(down, relax.const(w1)))
            b = bb.emit(relax.op.nn.conv2d(down, relax.const(w2), padding=1))
            joined = bb.emit(relax.op.concat([a, b], axis=1))
            summed = bb.emit(relax.op.add(joined, residual))
            out = bb.emit_output(relax.op.nn.adaptive_avg_pool2d(summed, 1))
        bb.emit_func_output(out)
    inputs = [rng.standard_normal((1, 3, size, size)).astype("float32")]
    if weight_arg:
        inputs.append(w0)
    inputs.append(rng.standard_normal((1, 2 * channels, pooled, pooled)).astype("float32"))
    return bb.get(), inputs


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([4, 8, 16]), st.sampled_from([6, 8, 10]),
       st.sampled_from(["max", "avg"]), st.booleans())
def test_pools_concat_residual_and_weight_arguments_convert_and_agree(channels, size, pool,
                                                                      weight_arg):
    mod, inputs = _network(channels, size, pool, weight_arg)
    converted = NHWC(mod)
    calls = _op_names(converted)
    # Inside, every convolution and pool is NHWC; the permutes are at the borders only.
    assert calls.count("relax.permute_dims") == (3 if weight_arg else 2) + 1
    assert all(layout == "NHWC" for layout in _layouts(converted))
    with tvm.transform.PassContext(disabled_pass=["ConvertLayoutForTarget"]):
        want = _run(mod, *inputs)
    np.testing.assert_allclose(_run(converted, *inputs), want, rtol=1e-4, atol=1e-4)


def _calls(mod):
    found = []
    relax.analysis.post_order_visit(mod["main"], lambda e: found.append(e)
                                    if isinstance(e, relax.Call) else None)
    return found


def _op_names(mod):
    return [c.op.name for c in _calls(mod) if hasattr(c.op, "name")]


def _layouts(mod):
    return [c.attrs.get("data_layout", c.attrs.get("layout", "NCHW")) for c in _calls(mod)
            if getattr(c.op, "name", "") in ("relax.nn.conv2d", "relax.nn.max_pool2d",
                                             "relax.nn.avg_pool2d",
                                             "relax.nn.adaptive_avg_pool2d")]


@I.ir_module
class Grouped:
    @R.function
    def main(x: R.Tensor((1, 4, 6, 6), "float32")):
        with R.dataflow():
            gv = R.nn.conv2d(x, R.const(np.ones((4, 2, 3, 3), "float32")), groups=2)
            R.output(gv)
        return gv


def test_a_grouped_convolution_stays_nchw():
    tvm.ir.assert_structural_equal(NHWC(Grouped), Grouped)


def test_the_default_pipeline_converts_large_models_on_a_cpu_only():
    size = 56
    w = np.ones((64, 64, 3, 3), "float32")
    assert 64 * size * size * 64 * 9 >= MIN_CONV_MACS

    @I.ir_module
    class Large:
        @R.function
        def main(x: R.Tensor((1, 64, 56, 56), "float32")):
            with R.dataflow():
                gv = R.nn.conv2d(x, R.const(w), padding=1)
                R.output(gv)
            return gv

    with Target("llvm"):
        assert "relax.permute_dims" in _op_names(ConvertLayoutForTarget()(Large))
        # Chain (about 10^4 multiply-adds) and a grouped convolution keep NCHW.
        tvm.ir.assert_structural_equal(ConvertLayoutForTarget()(Chain), Chain)
        tvm.ir.assert_structural_equal(ConvertLayoutForTarget()(Grouped), Grouped)
    with Target("cuda"):
        tvm.ir.assert_structural_equal(ConvertLayoutForTarget()(Large), Large)


@pytest.mark.parametrize("layouts,match", [
    ({"relax.nn.max_pool2d": ["NHWC"]}, "converts relax.nn.conv2d only"),
    ({"relax.nn.conv2d": ["NCHW", "OIHW"]}, r"converts to \['NHWC', 'HWIO'\]"),
    ({"relax.nn.conv2d": ["NHWC", "OHWI"]}, r"converts to \['NHWC', 'HWIO'\]"),
])
def test_other_layouts_are_refused_with_what_is_supported(layouts, match):
    with pytest.raises(IRError, match=match):
        relax.transform.ConvertLayout(layouts)


def _normalized(norm: str):
    """conv -> batch norm (kept: its input is a concat, as in DenseNet) or LRN -> conv."""
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((8, 3, 3, 3)).astype("float32")
    w1 = rng.standard_normal((4, 16, 1, 1)).astype("float32")
    stats = [rng.random(16).astype("float32") + 0.5 for _ in range(4)]
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((1, 3, 8, 8), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(relax.op.nn.conv2d(x, relax.const(w0), padding=1))
            joined = bb.emit(relax.op.concat([a, a], axis=1))
            if norm == "batch_norm":
                tup = bb.emit(relax.op.nn.batch_norm(joined, *map(relax.const, stats), axis=1))
                normed = bb.emit(relax.TupleGetItem(tup, 0))
                mean = bb.emit_output(relax.TupleGetItem(tup, 1))
            else:
                normed = bb.emit(relax.op.nn.lrn(joined, size=3, axis=1))
            act = bb.emit(relax.op.nn.relu(normed))
            out = bb.emit_output(relax.op.nn.conv2d(act, relax.const(w1)))
        bb.emit_func_output(relax.Tuple([out, mean]) if norm == "batch_norm" else out)
    return bb.get(), rng.standard_normal((1, 3, 8, 8)).astype("float32")


@pytest.mark.parametrize("norm", ["batch_norm", "lrn"])
def test_channel_normalizations_follow_along_axis_3(norm):
    mod, x = _normalized(norm)
    converted = NHWC(mod)
    normalizers = [c for c in _calls(converted) if getattr(c.op, "name", "") == f"relax.nn.{norm}"]
    assert [c.attrs.axis for c in normalizers] == [3]
    # The input's permute and the output's: nothing in between goes back to NCHW.
    assert _op_names(converted).count("relax.permute_dims") == 2
    with tvm.transform.PassContext(disabled_pass=["ConvertLayoutForTarget"]):
        want = _call(mod, x)
    got = _call(converted, x)
    if norm == "batch_norm":
        # The running mean, a per-channel value, comes out as it went in.
        np.testing.assert_allclose(got[1].numpy(), want[1].numpy())
        got, want = got[0], want[0]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)


def test_a_statistic_leaving_the_dataflow_block_stays_an_output_variable():
    mod, _ = _normalized("batch_norm")
    converted = NHWC(mod)
    (block,) = converted["main"].body.blocks
    outputs = [b.var for b in block.bindings if not isinstance(b.var, relax.DataflowVar)]
    assert len(outputs) == 2
    tvm.ir.assert_structural_equal(converted, relax.transform.Normalize()(converted))


def test_a_batch_norm_tuple_read_whole_is_rebuilt_in_nchw():
    rng = np.random.default_rng(5)
    stats = [rng.random(4).astype("float32") + 0.5 for _ in range(4)]
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((1, 2, 6, 6), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            conv = bb.emit(relax.op.nn.conv2d(x, relax.const(np.ones((4, 2, 3, 3), "float32"))))
            tup = bb.emit(relax.op.nn.batch_norm(conv, *map(relax.const, stats), axis=1))
            out = bb.emit_output(tup)
        bb.emit_func_output(out)
    mod = bb.get()
    converted = NHWC(mod)
    assert [c.attrs.axis for c in _calls(converted)
            if getattr(c.op, "name", "") == "relax.nn.batch_norm"] == [3]
    data = rng.standard_normal((1, 2, 6, 6)).astype("float32")
    with tvm.transform.PassContext(disabled_pass=["ConvertLayoutForTarget"]):
        want = _call(mod, data)
    got = _call(converted, data)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-4)
