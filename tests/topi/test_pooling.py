"""pool2d (max / avg, padding, dilation, ceil mode) and global average pooling."""
import numpy as np
import pytest

from mlcbench import te, topi
from mlcbench.topi import testing as ref

CASES = [  # kernel, stride, dilation, padding, pool_type, ceil_mode, count_include_pad
    ((2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max", False, True),
    ((3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max", True, True),
    ((3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "avg", False, True),
    ((3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "avg", True, False),
    ((2, 3), (1, 2), (2, 1), (0, 1, 1, 0), "avg", False, False),
]


@pytest.mark.parametrize("kernel, stride, dilation, padding, kind, ceil, include", CASES)
def test_pool2d_nchw(kernel, stride, dilation, padding, kind, ceil, include, run_te, rng):
    a = rng.standard_normal((1, 2, 7, 13)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    y = topi.nn.pool2d(x, kernel, stride, dilation, padding, kind, ceil, "NCHW", include)
    expected = ref.pool2d_python(a, kernel, stride, dilation, padding, kind, ceil, include)
    assert tuple(int(s) for s in y.shape) == expected.shape
    np.testing.assert_allclose(run_te([x], y, [a]), expected, rtol=1e-5, atol=1e-6)


def test_pool2d_nhwc(run_te, rng):
    a = rng.standard_normal((1, 7, 7, 3)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    y = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max", layout="NHWC")
    expected = ref.pool2d_python(a.transpose(0, 3, 1, 2), (3, 3), (2, 2), (1, 1),
                                 (1, 1, 1, 1), "max").transpose(0, 2, 3, 1)
    np.testing.assert_allclose(run_te([x], y, [a]), expected, rtol=1e-6)


def test_global_avg_pool2d(run_te, rng):
    a = rng.standard_normal((2, 3, 7, 5)).astype("float32")
    x = te.placeholder(a.shape, name="x")
    y = topi.nn.global_avg_pool2d(x)
    assert [int(s) for s in y.shape] == [2, 3, 1, 1]
    np.testing.assert_allclose(run_te([x], y, [a]), a.mean(axis=(2, 3), keepdims=True),
                               rtol=1e-5, atol=1e-6)


def test_avg_pool_blocks():
    x = te.placeholder((1, 2, 5, 5), name="x")
    y = topi.nn.pool2d(x, (2, 2), (2, 2), (1, 1), (1, 1, 1, 1), "avg")
    text = te.create_prim_func([x, y]).script()
    for block in ("pad_temp", "pool_sum", "pool_avg"):
        assert f'with T.block("{block}"):' in text
