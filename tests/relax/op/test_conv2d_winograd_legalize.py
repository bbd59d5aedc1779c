"""relax.nn.conv2d legalized to Winograd: a 3x3 stride-1 convolution with a constant
weight builds to the Winograd stages, matches numpy, has its weight transformed at
build time (a constant of the built module, no kernel transforms it per call), when the
``relax.conv2d.winograd`` config turns it on; by default the convolution stays direct."""
import numpy as np

import mlcbench as tvm
from mlcbench import relax
from mlcbench.ir.transform import PassContext
from mlcbench.relax import op
from mlcbench.relax.op.winograd import WINOGRAD_CONFIG
from mlcbench.relax.transform.split_weight_packing import prepack_weights
from mlcbench.target import Target
from mlcbench.tir import stmt as S
from mlcbench.tir.functor import post_order_visit
from mlcbench.topi.testing import conv2d_nchw_python

TARGET = Target("llvm -mcpu=znver3")
SHAPE, CHANNELS = (1, 16, 14, 14), 64


def _module(data_shape, weight):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(data_shape, "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(op.nn.conv2d(x, relax.const(weight), padding=1))
            gv = bb.emit_output(op.nn.relu(y))
        bb.emit_func_output(gv)
    return bb.get()


def _block_names(mod) -> set:
    names = set()
    for gv, func in mod.items():
        if hasattr(func, "buffer_map"):
            post_order_visit(func.body, lambda n: names.add(n.name_hint)
                             if isinstance(n, S.Block) else None)
    return names


def _prepacked(mod):
    with TARGET:
        return prepack_weights(relax.get_pipeline("zero")(mod), TARGET)


def _run(mod, data):
    vm = relax.VirtualMachine(relax.build(mod, TARGET, pipeline="vm_lowering"), tvm.cpu())
    return vm["main"](tvm.nd.array(data)).numpy()


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(SHAPE, "float32")
    weight = rng.standard_normal((CHANNELS, SHAPE[1], 3, 3), "float32") * 0.2
    expected = np.maximum(conv2d_nchw_python(data, weight, 1, (1, 1, 1, 1)), 0)
    return data, weight, expected


def test_winograd_conv2d_with_constant_weight_matches_numpy_and_prepacks_the_weight():
    data, weight, expected = _inputs()
    with PassContext(config={WINOGRAD_CONFIG: True}):
        mod = _prepacked(_module(SHAPE, weight))
    names = _block_names(mod)
    assert {"bgemm_init", "data_pack", "inverse"} <= names
    # The weight's transform left the kernel: it ran at build time.
    assert "kernel_pack" not in names and "kernel_pack_rows" not in names
    alpha = 6                            # F(4x4, 3x3)
    packed = [c for c in _constants(mod["main"])
              if tuple(c.data.shape) == (alpha, alpha, CHANNELS, SHAPE[1])]
    assert len(packed) == 1
    np.testing.assert_allclose(_run(mod, data), expected, rtol=1e-4, atol=1e-4)


def _constants(func) -> list:
    from mlcbench.relax.expr import Constant
    from mlcbench.relax.expr_functor import ExprVisitor
    found = []

    class Finder(ExprVisitor):
        def visit_constant_(self, const):
            found.append(const)
    Finder().visit_expr(func)
    return found


def test_by_default_and_off_the_convolution_stays_direct():
    data, weight, expected = _inputs(1)
    mod = _prepacked(_module(SHAPE, weight))
    assert not any(n.startswith("bgemm") for n in _block_names(mod))
    with PassContext(config={WINOGRAD_CONFIG: False}):
        assert not any(n.startswith("bgemm")
                       for n in _block_names(relax.get_pipeline("zero")(_module(SHAPE, weight))))
    np.testing.assert_allclose(_run(mod, data), expected, rtol=1e-4, atol=1e-4)


def test_a_weight_that_is_an_argument_keeps_the_direct_convolution():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo(SHAPE, "float32"))
    w = relax.Var("w", relax.TensorStructInfo((CHANNELS, SHAPE[1], 3, 3), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            gv = bb.emit_output(op.nn.conv2d(x, w, padding=1))
        bb.emit_func_output(gv)
    with PassContext(config={WINOGRAD_CONFIG: True}):
        names = _block_names(relax.get_pipeline("zero")(bb.get()))
    assert "conv2d_nchw" in names and "bgemm" not in names
