"""relax.nn.conv2d in NHWC legalized to Winograd: a 3x3, stride-1 convolution with a
constant weight and enough work becomes three kernels (the input transform, a batched
matmul with the weight transformed at build time, the output transform with the
convolution's elementwise consumers fused into it), matches numpy, and is on by
default; ``relax.conv2d.winograd: False``, strides, small layers and weight arguments
keep the direct convolution."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir.transform import PassContext
from mlcbench.relax import op
from mlcbench.relax.op import winograd
from mlcbench.relax.op.winograd import WINOGRAD_CONFIG, winograd_nhwc_tile_size
from mlcbench.relax.transform.annotate_tir_op_pattern import OP_PATTERN_ATTR
from mlcbench.tir import stmt as S
from mlcbench.tir.functor import post_order_visit
from mlcbench.topi.testing import conv2d_nhwc_python


def _module(data_shape, weight, stride=1, residual=False):
    """conv2d (NHWC, HWIO constant weight) + [residual add] + relu."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(data_shape, "float32"))
    params = [x]
    if residual:
        out = (data_shape[0], data_shape[1] // stride, data_shape[2] // stride, weight.shape[3])
        params.append(relax.Var("r", relax.TensorStructInfo(out, "float32")))
    with bb.function("main", params):
        with bb.dataflow():
            y = bb.emit(op.nn.conv2d(x, relax.const(weight), strides=stride, padding=1,
                                     data_layout="NHWC", kernel_layout="HWIO"))
            if residual:
                y = bb.emit(op.add(y, params[1]))
            gv = bb.emit_output(op.nn.relu(y))
        bb.emit_func_output(gv)
    return bb.get()


def _zero(mod, config=None):
    with PassContext(config=config or {}):
        return relax.get_pipeline("zero")(mod)


def _kernels(mod) -> dict:
    """``{PrimFunc name: set of its block names}``."""
    found = {}
    for gv, func in mod.items():
        if hasattr(func, "buffer_map"):
            names = set()
            post_order_visit(func.body, lambda n: names.add(n.name_hint)
                             if isinstance(n, S.Block) else None)
            found[gv.name_hint] = names
    return found


def _reference(data, weight, residual=None):
    out = conv2d_nhwc_python(data.astype("float64"), weight.astype("float64"), 1,
                             (1, 1, 1, 1))
    return np.maximum(out if residual is None else out + residual, 0)


def _run(mod, *arrays, config=None):
    with PassContext(config=config or {}):
        ex = relax.build(mod, "llvm")
    return relax.VirtualMachine(ex, tvm.cpu())["main"](*map(tvm.nd.array, arrays)).numpy()


def test_resnet_layer_becomes_three_kernels_and_matches_numpy():
    """ResNet-50's 3x3 128 -> 128 layer at 28x28 with its residual add and relu."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((1, 28, 28, 128)).astype("float32")
    weight = (rng.standard_normal((3, 3, 128, 128)) / 34).astype("float32")
    residual = rng.standard_normal((1, 28, 28, 128)).astype("float32")
    mod = _zero(_module(data.shape, weight, residual=True))
    kernels = _kernels(mod)
    packs = [n for n, blocks in kernels.items() if "winograd_data_pack" in blocks]
    inverses = [n for n, blocks in kernels.items() if "winograd_inverse" in blocks]
    products = [n for n in kernels if n.startswith("winograd_batch_matmul")]
    assert len(packs) == len(inverses) == len(products) == 1
    # The residual add and the relu went into the output transform's kernel: three
    # kernels in all.
    assert len(kernels) == 3 and "T_add" in kernels[inverses[0]]
    assert {"data_pad", "winograd_patch", "winograd_patch_rows", "winograd_data_pack"} <= \
        kernels[packs[0]] and "T_relu" not in kernels[packs[0]]
    assert mod[packs[0]].attrs[OP_PATTERN_ATTR] == int(op.registry.OpPatternKind.OPAQUE)
    assert not any("conv2d" in n for n in kernels)
    got = _run(_module(data.shape, weight, residual=True), data, residual)
    np.testing.assert_allclose(got, _reference(data, weight, residual), rtol=1e-4, atol=1e-4)


def test_the_transformed_weight_is_a_build_time_constant():
    rng = np.random.default_rng(1)
    weight = rng.standard_normal((3, 3, 64, 64)).astype("float32")
    mod = _zero(_module((1, 56, 56, 64), weight))
    from mlcbench.relax.expr import Constant
    from mlcbench.relax.expr_functor import ExprVisitor
    shapes = []

    class Finder(ExprVisitor):
        def visit_constant_(self, const):
            shapes.append(tuple(const.data.shape))
    Finder().visit_expr(mod["main"])
    assert (36, 64, 64) in shapes and (3, 3, 64, 64) not in shapes


@pytest.mark.parametrize("case, config", [
    ("off", {WINOGRAD_CONFIG: False}),
    ("stride 2", {}),
    ("small", {}),
])
def test_direct_convolution_kept(case, config):
    rng = np.random.default_rng(2)
    shape, stride, channels = (1, 28, 28, 128), 1, 128
    if case == "stride 2":
        shape, stride = (1, 56, 56, 128), 2
    if case == "small":            # DenseNet's 128 -> 32 layer at 14x14: 7M multiply-adds
        shape, channels = (1, 14, 14, 128), 32
    weight = rng.standard_normal((3, 3, shape[3], channels)).astype("float32")
    kernels = _kernels(_zero(_module(shape, weight, stride=stride), config))
    assert not any("winograd_data_pack" in blocks for blocks in kernels.values())
    assert any("conv2d_nhwc" in blocks for blocks in kernels.values())


def test_rule_refuses_weight_arguments_and_weights_that_outweigh_the_work():
    """A weight argument; ResNet-50's 512 x 512 layer at 7x7, whose transformed weight
    (37.7 MB) streams longer than half its direct work; the same weight at 14x14 (VGG19),
    4x the work, takes Winograd."""
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((1, 28, 28, 128), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((3, 3, 128, 128), "float32"))
    big = relax.const(np.zeros((3, 3, 512, 512), "float32"))
    y7 = relax.Var("y7", relax.TensorStructInfo((1, 7, 7, 512), "float32"))
    y14 = relax.Var("y14", relax.TensorStructInfo((1, 14, 14, 512), "float32"))
    with bb.function("main", [x, w, y7, y14]):
        calls = [op.nn.conv2d(x, w, padding=1, data_layout="NHWC", kernel_layout="HWIO")]
        calls += [op.nn.conv2d(y, big, padding=1, data_layout="NHWC", kernel_layout="HWIO")
                  for y in (y7, y14)]
        outs = [bb.emit(c) for c in calls]
        bb.emit_func_output(relax.Tuple(outs))
    calls = [b.value for b in bb.get()["main"].body.blocks[0].bindings]
    assert [winograd_nhwc_tile_size(c) for c in calls] == [None, None, 4]


@settings(max_examples=6, deadline=None)
@given(in_c=st.integers(1, 24), out_c=st.integers(32, 48), size=st.integers(3, 17),
       seed=st.integers(0, 2**16))
def test_winograd_build_matches_numpy(in_c, out_c, size, seed):
    """Small layers, with the work thresholds lowered so that they take Winograd."""
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((1, size, size, in_c)).astype("float32")
    weight = rng.standard_normal((3, 3, in_c, out_c)).astype("float32")
    mod = _module(data.shape, weight)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(winograd, "NHWC_MIN_MACS", 0)
        patch.setattr(winograd, "NHWC_FLOPS_PER_BYTE", 0)
        assert any("winograd_data_pack" in b for b in _kernels(_zero(mod)).values())
        got = _run(mod, data)
    scale = np.abs(data).max() * np.abs(weight).max() * in_c * 9
    np.testing.assert_allclose(got, _reference(data, weight), rtol=0, atol=1e-5 * scale)


def test_a_batch_and_uneven_padding_match_numpy():
    """Three images, padding (top 1, left 0, bottom 2, right 1): 6 x 5 tiles per image,
    the last row and column of tiles partly outside the output."""
    rng = np.random.default_rng(4)
    data = rng.standard_normal((3, 20, 18, 40)).astype("float32")
    weight = (rng.standard_normal((3, 3, 40, 48)) / 20).astype("float32")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(data.shape, "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(op.nn.conv2d(x, relax.const(weight), padding=(1, 0, 2, 1),
                                     data_layout="NHWC", kernel_layout="HWIO"))
            gv = bb.emit_output(op.nn.relu(y))
        bb.emit_func_output(gv)
    mod = bb.get()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(winograd, "NHWC_MIN_MACS", 0)
        patch.setattr(winograd, "NHWC_FLOPS_PER_BYTE", 0)
        packs = [f for f in _zero(mod).functions.values()
                 if hasattr(f, "buffer_map") and "winograd_data_pack" in f.script()]
        got = _run(mod, data)
    assert len(packs) == 1
    expected = np.maximum(conv2d_nhwc_python(data.astype("float64"), weight.astype("float64"),
                                             1, (1, 0, 2, 1)), 0)
    assert got.shape == expected.shape == (3, 21, 17, 48)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_on_by_default_for_cpu_targets_only():
    from mlcbench.target import Target
    weight = relax.const(np.zeros((3, 3, 128, 128), "float32"))
    x = relax.Var("x", relax.TensorStructInfo((1, 28, 28, 128), "float32"))
    call = op.nn.conv2d(x, weight, padding=1, data_layout="NHWC", kernel_layout="HWIO")
    with Target("llvm -mcpu=znver3"):
        assert winograd_nhwc_tile_size(call) == 4
    with Target("cuda"):
        assert winograd_nhwc_tile_size(call) is None
        with PassContext(config={WINOGRAD_CONFIG: True}):
            assert winograd_nhwc_tile_size(call) == 4
