"""Winograd convolution F(m x m, 3x3): transform matrices, compute, refusals."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mlcbench
from mlcbench import autotvm, te, topi
from mlcbench.ir.errors import InvalidValueError
from mlcbench.topi.nn.winograd_util import winograd_matrices_exact, winograd_transform_matrices
from mlcbench.topi.testing import conv2d_nchw_python


@pytest.mark.parametrize("m", [2, 4, 6])
def test_matrices_correlate_random_inputs(m):
    """A^T [(G g) * (B^T d)] is the valid correlation of d with g (the defining property)."""
    a, b, g = winograd_transform_matrices(m, 3, "float64")
    assert a.shape == (m + 2, m) and b.shape == (m + 2, m + 2) and g.shape == (m + 2, 3)
    rng = np.random.default_rng(m)
    for _ in range(5):
        d, taps = rng.standard_normal(m + 2), rng.standard_normal(3)
        y = a.T @ ((g @ taps) * (b.T @ d))
        np.testing.assert_allclose(y, np.correlate(d, taps, "valid"), rtol=1e-12, atol=1e-12)


def test_matrices_are_exact_rationals():
    """F(2, 3) in exact arithmetic: the identity holds symbolically, term by term."""
    from fractions import Fraction
    a, b, g = winograd_matrices_exact(2)
    assert all(isinstance(v, Fraction) for row in a + b + g for v in row)
    # Each input d_k and tap g_j contributes to y_i exactly once when k = i + j.
    for i in range(2):
        for k in range(4):
            for j in range(3):
                coef = sum(a[e][i] * g[e][j] * b[k][e] for e in range(4))
                assert coef == (1 if k == i + j else 0)


def _run(out, args, arrays):
    func = te.create_prim_func(list(args) + [out])
    lib = mlcbench.build(func, target="llvm")
    result = mlcbench.nd.empty([int(d) for d in out.shape], "float32")
    lib(*[mlcbench.nd.array(x) for x in arrays], result)
    return result.numpy()


def _scheduled(args, tile):
    """The template's schedule (unrolled transforms) of one config with ``tile``."""
    task = autotvm.task.create("conv2d_nchw.x86", args, "llvm", None, "winograd")
    space = task.config_space
    index = next(i for i in range(len(space)) if space.get(i)["tile_size"].val == tile)
    return mlcbench.build(task.instantiate_module(space.get(index)), target="llvm")


@settings(max_examples=3, deadline=None)
@given(in_c=st.integers(1, 9), out_c=st.integers(1, 6), height=st.integers(3, 9),
       width=st.integers(3, 9), pads=st.tuples(*[st.integers(0, 2)] * 4),
       tile=st.sampled_from([2, 4]))
def test_matches_direct_convolution(in_c, out_c, height, width, pads, tile):
    rng = np.random.default_rng(in_c * 100 + height)
    data = rng.standard_normal((1, in_c, height, width)).astype("float32")
    kernel = rng.standard_normal((out_c, in_c, 3, 3)).astype("float32")
    args = (("TENSOR", data.shape, "float32"), ("TENSOR", kernel.shape, "float32"), (1, 1),
            pads, (1, 1), "float32")
    lib = _scheduled(args, tile)
    expected = conv2d_nchw_python(data.astype("float64"), kernel.astype("float64"), 1, pads)
    out = mlcbench.nd.empty(expected.shape, "float32")
    lib(mlcbench.nd.array(data), mlcbench.nd.array(kernel), out)
    # Winograd's transforms add and subtract scaled copies: error grows with the tile size.
    scale = np.abs(data).max() * np.abs(kernel).max() * in_c * 9
    np.testing.assert_allclose(out.numpy(), expected, rtol=0, atol=2e-6 * tile * scale)


def test_weight_transform_separable():
    """The convolution of a pre-transformed weight equals the whole convolution."""
    rng = np.random.default_rng(1)
    data = rng.standard_normal((2, 3, 6, 5)).astype("float32")
    kernel = rng.standard_normal((4, 3, 3, 3)).astype("float32")
    A = te.placeholder(data.shape, name="data")
    W = te.placeholder(kernel.shape, name="kernel")
    packed = topi.nn.conv2d_winograd_weight_transform(W, 2)
    assert tuple(int(d) for d in packed.shape) == (4, 4, 4, 3)
    packed_np = _run(packed, [W], [kernel])
    P = te.placeholder(packed_np.shape, name="packed")
    # 2 x 3 x 3 tiles rounded up to 24: the extra tiles are zeros and are not read back.
    out = topi.nn.conv2d_winograd_without_weight_transform(A, P, 1, (1, 0, 1, 2), 1,
                                                           tile_size=2, tile_multiple=8)
    bgemm = out.op.input_tensors[0].op.input_tensors[0].op.input_tensors[0]
    assert int(bgemm.shape[3]) == 24
    got = _run(out, [A, P], [data, packed_np])
    np.testing.assert_allclose(got, conv2d_nchw_python(data, kernel, 1, (1, 0, 1, 2)),
                               rtol=1e-4, atol=1e-4)
    _, _, g = winograd_transform_matrices(2, 3, "float64")
    np.testing.assert_allclose(packed_np, np.einsum("ea,oiab,nb->enoi", g, kernel, g),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kernel_shape, kwargs, match", [
    ((4, 3, 5, 5), {}, "3x3 kernel, found 5x5"),
    ((4, 3, 3, 3), {"strides": 2}, "stride 1, found 2"),
    ((4, 3, 3, 3), {"dilation": 2}, "dilation 1, found 2"),
    ((4, 3, 3, 3), {"tile_size": 3}, r"tile size must be one of \(2, 4, 6\), found 3"),
])
def test_refuses_what_winograd_cannot_compute(kernel_shape, kwargs, match):
    A = te.placeholder((1, 3, 8, 8), name="data")
    W = te.placeholder(kernel_shape, name="kernel")
    call = {"strides": 1, "padding": 1, "dilation": 1, **kwargs}
    with pytest.raises(InvalidValueError, match=match):
        topi.nn.conv2d_winograd_nchw(A, W, **call)


def test_refuses_a_weight_of_another_tile_size():
    A = te.placeholder((1, 3, 8, 8), name="data")
    P = te.placeholder((4, 4, 2, 3), name="packed")
    with pytest.raises(InvalidValueError, match=r"shape \(6, 6, out_c, 3\) for tile size 4"):
        topi.nn.conv2d_winograd_without_weight_transform(A, P, 1, 1, 1, tile_size=4)
